#include "remote/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "fs/safe_open.h"

extern char** environ;

namespace imgtool::remote {

namespace {

using Clock = std::chrono::steady_clock;

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

Result<pid_t> Spawn(const std::string& program, const std::vector<std::string>& args, const Pipes& p) {
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p.in_child.get(), 0);
  posix_spawn_file_actions_adddup2(&fa, p.out_child.get(), 1);
  posix_spawn_file_actions_adddup2(&fa, p.err_child.get(), 2);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, program.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc == ENOENT) return MakeError(ErrorKind::kNotFound, "not found in $PATH");
  if (rc != 0) return MakeError(ErrorKind::kInternal, std::string("cannot run: ") + std::strerror(rc));
  return pid;
}

std::string Seconds(std::chrono::milliseconds ms) {
  if (ms.count() % 1000 == 0) return std::to_string(ms.count() / 1000) + " s";
  return std::to_string(ms.count()) + " ms";
}

// Reads what is there; closes `fd` at end of stream.
Status Drain(fs::UniqueFd& fd, std::string& into, size_t cap) {
  char buf[65536];
  ssize_t n = ::read(fd.get(), buf, sizeof buf);
  if (n > 0) into.append(buf, static_cast<size_t>(n));
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) fd.Reset();
  if (into.size() > cap) return MakeError(ErrorKind::kTransport, "output over " + std::to_string(cap) + " bytes");
  return Status::Ok();
}

// Writes what the child accepts; closes stdin when done (the child then reads EOF) or
// when the child no longer reads (its answer still counts).
void Feed(fs::UniqueFd& in, const std::string& input, size_t& sent) {
  ssize_t n = ::send(in.get(), input.data() + sent, input.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n > 0) sent += static_cast<size_t>(n);
  if (sent == input.size() || (n < 0 && errno != EAGAIN && errno != EINTR)) in.Reset();
}

// Feeds stdin and drains stdout and stderr until both reach end of stream.
Status Exchange(Pipes& p, const std::string& input, const ChildLimits& lim, Clock::time_point deadline,
                ChildResult& r) {
  size_t sent = 0;
  if (input.empty()) p.in.Reset();
  while (p.out.valid() || p.err.valid()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return MakeError(ErrorKind::kTransport, "no answer within " + Seconds(lim.timeout));
    pollfd fds[3] = {{p.in.get(), POLLOUT, 0}, {p.out.get(), POLLIN, 0}, {p.err.get(), POLLIN, 0}};
    int rc = ::poll(fds, 3, static_cast<int>(left.count()) + 1);  // poll skips negative fds
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return SysError("poll");
    if (fds[0].revents) Feed(p.in, input, sent);
    if (fds[1].revents) IMGTOOL_TRY(Drain(p.out, r.out, lim.max_output));
    if (fds[2].revents) IMGTOOL_TRY(Drain(p.err, r.err, lim.max_output));
  }
  return Status::Ok();
}

// Waits for the exit (the child may close its output before it exits).
Status Reap(pid_t pid, const ChildLimits& lim, Clock::time_point deadline, ChildResult& r) {
  for (;;) {
    int st = 0;
    pid_t w = ::waitpid(pid, &st, WNOHANG);
    if (w == pid) {
      if (WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
      if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
      return Status::Ok();
    }
    if (w < 0 && errno != EINTR) return SysError("waitpid");
    if (Clock::now() >= deadline) return MakeError(ErrorKind::kTransport, "no exit within " + Seconds(lim.timeout));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void Kill(pid_t pid) {
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

Result<ChildResult> RunChild(const std::string& program, const std::vector<std::string>& args, const std::string& input,
                             const ChildLimits& limits) {
  Pipes p;
  IMGTOOL_TRY(MakePipes(p));
  auto pid = Spawn(program, args, p);
  if (!pid.ok()) return pid.error();
  p.in_child.Reset();
  p.out_child.Reset();
  p.err_child.Reset();
  auto deadline = Clock::now() + limits.timeout;
  ChildResult r;
  Status st = Exchange(p, input, limits, deadline, r);
  if (st.ok()) st = Reap(*pid, limits, deadline, r);
  if (st.ok()) return r;
  Kill(*pid);
  Error e = st.error();
  if (e.kind == ErrorKind::kTransport) e.message += " (killed)";
  return e;
}

}  // namespace imgtool::remote
