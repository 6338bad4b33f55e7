// Result<T>, Status and Error: the trainer uses imgtool's (imgtool/oci/result.h), so both
// halves of the project share one error vocabulary and one set of exit codes.
#pragma once

#include "oci/result.h"

namespace trainer {

using imgtool::Error;
using imgtool::ErrorKind;
using imgtool::ErrorKindName;
using imgtool::ExitCodeFor;
using imgtool::MakeError;
using imgtool::Result;
using imgtool::Status;

}  // namespace trainer

// Early return on failure. Used sparingly: it keeps the training loop readable.
#define TRAINER_TRY(expr) IMGTOOL_TRY(expr)
