// A program's main body, guarded: imgtool, imgtool-fleet, the trainer and the bench
// drivers share it, so an exception that escapes any of them (a bug, or memory exhausted)
// reads the same and exits with the internal-error code, never std::terminate's abort.
#pragma once

#include <functional>

namespace imgtool {

// body()'s exit code; for an exception that escapes it, "<program>: internal error:
// <what>" on stderr and ExitCodeFor(ErrorKind::kInternal) (70).
int RunGuarded(const char* program, const std::function<int()>& body) noexcept;

}  // namespace imgtool
