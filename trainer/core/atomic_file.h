// Whole-file atomic writes: temp file in the same folder, write, fsync, rename, fsync the
// folder. A reader sees the old file or the new one, never a torn one.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace trainer {

Status WriteFileAtomic(const std::string& path, std::string_view bytes);
Result<std::string> ReadFile(const std::string& path);

}  // namespace trainer
