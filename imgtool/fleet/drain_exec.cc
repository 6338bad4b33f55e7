#include "fleet/drain_exec.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace imgtool::fleet {
namespace {

// Waits for `pid` up to `limit`; kills it past that. "" on exit 0, else what happened.
std::string WaitBounded(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return std::string("waitpid: ") + std::strerror(errno);
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return "timed out after " + std::to_string(limit.count()) + " s";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  return "killed by signal " + std::to_string(WTERMSIG(status));
}

std::string DrainOne(const NodeDrain& d, const std::string& scontrol, std::chrono::seconds limit) {
  std::vector<std::string> args = {scontrol, "update", "NodeName=" + d.node, "State=DRAIN", "Reason=" + d.reason};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = scontrol.find('/') == std::string::npos
               ? ::posix_spawnp(&pid, scontrol.c_str(), nullptr, nullptr, argv.data(), environ)
               : ::posix_spawn(&pid, scontrol.c_str(), nullptr, nullptr, argv.data(), environ);
  if (rc != 0) return scontrol + ": " + std::strerror(rc);
  return WaitBounded(pid, limit);
}

}  // namespace

std::vector<DrainOutcome> RunDrainPlan(const DrainPlan& plan, const std::string& scontrol, std::chrono::seconds limit) {
  std::vector<DrainOutcome> out;
  if (!plan.refused.empty()) return out;
  for (const auto& d : plan.drain) {
    // PlanDrain admits only safe names; checked again where the argument is made.
    if (!IsSafeNodeName(d.node)) {
      out.push_back({d.node, false, "unsafe node name"});
      continue;
    }
    std::string error = DrainOne(d, scontrol, limit);
    out.push_back({d.node, error.empty(), error});
  }
  return out;
}

}  // namespace imgtool::fleet
