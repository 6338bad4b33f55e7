// Runs one program found in $PATH (posix_spawnp: no shell, arguments passed as they
// are) with bytes on its stdin, and collects its stdout and stderr, bounded in time and
// size. This is how credential helpers run (cred_helper.h); callers keep secrets on
// stdin, never in `args`, which other users can read in /proc.
//
// The program runs in a session of its own (so its own process group, and no
// controlling terminal). When it exits, what it wrote is read and every process left in
// its group is killed (SIGKILL): a background child that holds the pipes open neither
// holds up the answer nor outlives the call. The group is also killed on a timeout, an
// output over the cap, and any other way out of RunChild; and when imgtool itself is
// ended by SIGINT, SIGTERM or SIGHUP while the program runs (a handler, installed on
// first use where those signals have their default action, kills the groups and then
// lets the signal end imgtool as before). A SIGKILL of imgtool cannot be answered; a
// process that moves itself to another group or session (a daemon) is not followed.
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
