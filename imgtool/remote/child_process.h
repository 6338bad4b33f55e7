// Runs one program found in $PATH (posix_spawnp: no shell, arguments passed as they
// are) with bytes on its stdin, and collects its stdout and stderr, bounded in time and
// size. This is how credential helpers run (cred_helper.h); callers keep secrets on
// stdin, never in `args`, which other users can read in /proc.
//
// Not here: what the program means (the credential-helper protocol is cred_helper.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "oci/result.h"

namespace imgtool::remote {

struct ChildLimits {
  std::chrono::milliseconds timeout{30000};  // then the child is killed (SIGKILL)
  size_t max_output = 1 << 20;               // per stream; more is an error
};

struct ChildResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
};

// Errors (the message names neither the program, which the caller adds as context, nor
// the input or the output): kNotFound when
// `program` is not in $PATH; kTransport for a timeout or output over the cap (the child
// is killed and reaped); kInternal when pipes or the spawn fail.
Result<ChildResult> RunChild(const std::string& program, const std::vector<std::string>& args, const std::string& input,
                             const ChildLimits& limits);

}  // namespace imgtool::remote
