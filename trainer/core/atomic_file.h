// Whole-file atomic writes (temp, fsync, rename, fsync the folder) and whole-file reads:
// imgtool's, from imgtool/fs/atomic_file.h.
#pragma once

#include <string>

#include "core/result.h"
#include "fs/atomic_file.h"

namespace trainer {

using imgtool::fs::WriteFileAtomic;

// Checkpoints and event files are small (a checkpoint is ~1.2 MB); refuse anything huge.
inline Result<std::string> ReadFile(const std::string& path) { return imgtool::fs::ReadSmallFile(path, 256u << 20); }

}  // namespace trainer
