// Where a private key's password comes from, as cosign does it: $COSIGN_PASSWORD when
// set (even empty), else a prompt on the terminal without echo. With neither (a
// pipeline without the variable) it is an error rather than a hang on stdin.
#pragma once

#include <string>

#include "oci/result.h"

namespace imgtool::sign {

// `confirm`: ask twice and require the same answer (new keys).
Result<std::string> ReadPassword(const std::string& prompt, bool confirm);

}  // namespace imgtool::sign
