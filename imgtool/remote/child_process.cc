#include "remote/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "fs/safe_open.h"

extern char** environ;

namespace imgtool::remote {

namespace {

using Clock = std::chrono::steady_clock;

// ---- the groups alive now, for a signal that ends imgtool ----

// Process groups of the children running now (0: a free slot). More at once than this
// run unguarded against a signal, still killed on every return.
constexpr int kGroupSlots = 64;
std::atomic<pid_t> g_groups[kGroupSlots];

// SIGINT, SIGTERM, SIGHUP: the helpers' groups are not the terminal's foreground group,
// so nothing else would end them. Kill them, then die of the signal as before (the
// action was reset to the default on entry; the signal is blocked until we return).
extern "C" void KillGroupsThenDie(int sig) {
  for (auto& g : g_groups) {
    pid_t pgid = g.load();
    if (pgid > 0) ::kill(-pgid, SIGKILL);
  }
  ::raise(sig);
}

// Only where the action is the default (termination): a program that handles or ignores
// a signal (admission serve waits for SIGTERM) keeps its own way.
void GuardTerminationSignals() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;
      struct sigaction sa {};
      sa.sa_handler = KillGroupsThenDie;
      sa.sa_flags = SA_RESETHAND;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

// The child's session: its own process group (pgid = pid), no controlling terminal. So
// the whole of it is killed at once (a helper's `sleep 300 &` included), and a helper
// that opens /dev/tty fails at once instead of stopping on SIGTTIN. A child that moves
// itself to another group or session (a daemon, on purpose) is not followed.
class ChildGroup {
 public:
  explicit ChildGroup(pid_t pid) : pid_(pid) {
    for (auto& g : g_groups) {
      pid_t free = 0;
      if (g.compare_exchange_strong(free, pid)) {
        slot_ = &g;
        break;
      }
    }
    // A descriptor that polls readable when the child exits (Linux 5.3); else Exchange
    // looks every few milliseconds.
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd >= 0) pidfd_.Reset(fd);
  }
  // Kills what is left of the group, then reaps the leader: while the leader is an
  // unreaped zombie its pid cannot be reused, so the kill reaches only this group.
  ~ChildGroup() {
    ::kill(-pid_, SIGKILL);
    if (slot_) slot_->store(0);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;

  int pidfd() const { return pidfd_.get(); }

  // Whether the leader has exited (not reaped: the group stays addressable); its status
  // into `r`.
  bool Exited(ChildResult& r) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pid_) {
      return false;
    }
    if (info.si_code == CLD_EXITED) {
      r.exit_code = info.si_status;
    } else {
      r.signal = info.si_status;
    }
    return true;
  }

 private:
  pid_t pid_;
  std::atomic<pid_t>* slot_ = nullptr;
  fs::UniqueFd pidfd_;
};

// The parent's ends, then the child's. stdin is a socket pair, not a pipe: a child that
// exits without reading makes send(MSG_NOSIGNAL) fail with EPIPE, where a pipe write
// would raise SIGPIPE and kill imgtool.
struct Pipes {
  fs::UniqueFd in, out, err;
  fs::UniqueFd in_child, out_child, err_child;
};

Error SysError(const std::string& what) { return MakeError(ErrorKind::kInternal, what + ": " + std::strerror(errno)); }

Status MakePipes(Pipes& p) {
  int sv[2], o[2], e[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return SysError("socketpair");
  p.in.Reset(sv[0]);
  p.in_child.Reset(sv[1]);
  if (::pipe2(o, O_CLOEXEC) != 0) return SysError("pipe");
  p.out.Reset(o[0]);
  p.out_child.Reset(o[1]);
  if (::pipe2(e, O_CLOEXEC) != 0) return SysError("pipe");
  p.err.Reset(e[0]);
  p.err_child.Reset(e[1]);
  for (int fd : {p.in.get(), p.out.get(), p.err.get()}) {
    if (::fcntl(fd, F_SETFL, O_NONBLOCK) != 0) return SysError("fcntl");
  }
  return Status::Ok();
}

// posix_spawn's attributes and file actions, released on every path.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t fa;
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&fa);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

Result<pid_t> Spawn(const std::string& program, const std::vector<std::string>& args, const Pipes& p) {
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  SpawnSetup s;
  posix_spawn_file_actions_adddup2(&s.fa, p.in_child.get(), 0);
  posix_spawn_file_actions_adddup2(&s.fa, p.out_child.get(), 1);
  posix_spawn_file_actions_adddup2(&s.fa, p.err_child.get(), 2);
  posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETSID);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, program.c_str(), &s.fa, &s.attr, argv.data(), environ);
  if (rc == ENOENT) return MakeError(ErrorKind::kNotFound, "not found in $PATH");
  if (rc != 0) return MakeError(ErrorKind::kInternal, std::string("cannot run: ") + std::strerror(rc));
  return pid;
}

std::string Seconds(std::chrono::milliseconds ms) {
  if (ms.count() % 1000 == 0) return std::to_string(ms.count() / 1000) + " s";
  return std::to_string(ms.count()) + " ms";
}

// Reads what is there now; closes `fd` at end of stream.
Status Drain(fs::UniqueFd& fd, std::string& into, size_t cap) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) into.append(buf, static_cast<size_t>(n));
    if (into.size() > cap) return MakeError(ErrorKind::kTransport, "output over " + std::to_string(cap) + " bytes");
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) fd.Reset();
    if (n <= 0) return Status::Ok();
  }
}

// Writes what the child accepts; closes stdin when done (the child then reads EOF) or
// when the child no longer reads (its answer still counts).
void Feed(fs::UniqueFd& in, const std::string& input, size_t& sent) {
  ssize_t n = ::send(in.get(), input.data() + sent, input.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n > 0) sent += static_cast<size_t>(n);
  if (sent == input.size() || (n < 0 && errno != EAGAIN && errno != EINTR)) in.Reset();
}

// Feeds stdin and drains stdout and stderr until both reach end of stream, or until the
// child has exited: then what it wrote is all in the pipes, and a background child of
// its that holds them open is not waited for.
Status Exchange(Pipes& p, const std::string& input, const ChildLimits& lim, Clock::time_point deadline,
                ChildGroup& group, ChildResult& r) {
  size_t sent = 0;
  if (input.empty()) p.in.Reset();
  while (p.out.valid() || p.err.valid()) {
    if (group.Exited(r)) {
      IMGTOOL_TRY(Drain(p.out, r.out, lim.max_output));
      return Drain(p.err, r.err, lim.max_output);
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return MakeError(ErrorKind::kTransport, "no answer within " + Seconds(lim.timeout));
    long wait_ms = group.pidfd() >= 0 ? left.count() + 1 : std::min<long>(left.count() + 1, 10);
    pollfd fds[4] = {{p.in.get(), POLLOUT, 0},
                     {p.out.get(), POLLIN, 0},
                     {p.err.get(), POLLIN, 0},
                     {group.pidfd(), POLLIN, 0}};  // poll skips negative fds
    int rc = ::poll(fds, 4, static_cast<int>(wait_ms));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return SysError("poll");
    if (fds[0].revents) Feed(p.in, input, sent);
    if (fds[1].revents) IMGTOOL_TRY(Drain(p.out, r.out, lim.max_output));
    if (fds[2].revents) IMGTOOL_TRY(Drain(p.err, r.err, lim.max_output));
  }
  return Status::Ok();
}

// Waits for the exit (the child may close its output before it exits).
Status WaitExit(ChildGroup& group, const ChildLimits& lim, Clock::time_point deadline, ChildResult& r) {
  while (!group.Exited(r)) {
    if (Clock::now() >= deadline) return MakeError(ErrorKind::kTransport, "no exit within " + Seconds(lim.timeout));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return Status::Ok();
}

}  // namespace

Result<ChildResult> RunChild(const std::string& program, const std::vector<std::string>& args, const std::string& input,
                             const ChildLimits& limits) {
  GuardTerminationSignals();
  Pipes p;
  IMGTOOL_TRY(MakePipes(p));
  auto pid = Spawn(program, args, p);
  if (!pid.ok()) return pid.error();
  ChildGroup group(*pid);  // from here on, every return kills the group
  p.in_child.Reset();
  p.out_child.Reset();
  p.err_child.Reset();
  auto deadline = Clock::now() + limits.timeout;
  ChildResult r;
  Status st = Exchange(p, input, limits, deadline, group, r);
  if (st.ok()) st = WaitExit(group, limits, deadline, r);
  if (st.ok()) return r;
  Error e = st.error();
  if (e.kind == ErrorKind::kTransport) e.message += " (killed)";
  return e;
}

}  // namespace imgtool::remote
