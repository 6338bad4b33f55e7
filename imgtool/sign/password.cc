#include "sign/password.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <cstdlib>

namespace imgtool::sign {

namespace {

// Reads one line from the terminal with echo off, restoring the mode afterwards.
Result<std::string> PromptNoEcho(int fd, const std::string& prompt) {
  (void)!write(fd, prompt.data(), prompt.size());
  termios old{};
  bool restore = tcgetattr(fd, &old) == 0;
  if (restore) {
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  std::string line;
  char c = 0;
  ssize_t n = 0;
  while ((n = read(fd, &c, 1)) == 1 && c != '\n') line += c;
  if (restore) tcsetattr(fd, TCSAFLUSH, &old);
  (void)!write(fd, "\n", 1);
  if (n < 0) return MakeError(ErrorKind::kInternal, "reading the password from the terminal failed");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

}  // namespace

Result<std::string> ReadPassword(const std::string& prompt, bool confirm) {
  if (const char* env = std::getenv("COSIGN_PASSWORD"); env != nullptr) return std::string(env);
  if (!isatty(STDIN_FILENO)) {
    return MakeError(ErrorKind::kInvalidInput,
                     "a password is needed: set COSIGN_PASSWORD (stdin is not a terminal to ask on)");
  }
  int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
  if (fd < 0) return MakeError(ErrorKind::kInvalidInput, "a password is needed: set COSIGN_PASSWORD (no /dev/tty)");
  auto first = PromptNoEcho(fd, prompt);
  if (first.ok() && confirm) {
    auto again = PromptNoEcho(fd, "Enter password again: ");
    if (!again.ok())
      first = again.error();
    else if (*again != *first)
      first = MakeError(ErrorKind::kInvalidInput, "the passwords do not match");
  }
  close(fd);
  return first;
}

}  // namespace imgtool::sign
