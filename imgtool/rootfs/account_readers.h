// How each program that resolves a name inside a container reads /etc/passwd and
// /etc/group, line by line, so users.h can ask all of them and answer only when they agree.
// Three readers, each modelled from its source (not a grammar of our own):
// - glibc's nss_files (getpwnam, getgrnam, fgetpwent: nss_readline.c skips leading
//   isspace, empty and '#' lines; files-parse.c's INT_FIELD reads ids with strtoul, so
//   " 0", "+0" and "-0" are 0, and a line whose id has no digit, is over 2^32-1 (after
//   strtoul's negation: "-1" too) or is not followed by ':' or the end is skipped; fewer
//   than 4 passwd fields (3 group fields) are skipped, more go into the shell). The model
//   is checked against the C library of the machine the tests run on (fgetpwent);
// - musl (Alpine; src/passwd/getpwent_a.c): no trimming and no comments (" t" and "#t"
//   are names), exactly 7 passwd (4 group) fields or the line is skipped, ids are the
//   digits up to the next ':' (empty is 0, wraps modulo 2^32), and the last byte of a
//   line without a newline is dropped;
// - Go's github.com/moby/sys/user (runc, containerd's oci.WithUser, Docker, Podman):
//   bufio.Scanner lines (at most 64 KiB for passwd), bytes.TrimSpace (Unicode spaces too),
//   no comments in passwd ('#' lines are skipped in group), fields split on ':' with the
//   missing ones 0, ids by strconv.Atoi with its error ignored (so "", "abc", " 0" are 0,
//   and an overflow is clamped), later kept as uint32 by every runtime.
//
// Internal to imgtool/rootfs. Lines the readers cannot all be modelled on (a NUL byte, a
// NIS compat line, an over-long line) are refused by users.cc before any reader runs.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rootfs/users.h"

namespace imgtool::rootfs::internal {

enum class Reader { kGlibc, kMusl, kGo };
inline constexpr std::array<Reader, 3> kReaders = {Reader::kGlibc, Reader::kMusl, Reader::kGo};
const char* ReaderName(Reader r);  // "glibc", "musl", "Go"

// One line as one reader resolves it.
struct Record {
  size_t line = 0;  // 1-based
  std::string name;
  uint32_t id = 0;    // uid, or a group's gid: what the process ends up with
  uint32_t gid = 0;   // a user's primary group (0 for a group)
  int64_t go_id = 0;  // Go only: the int a numeric lookup compares (before uint32)
};

// strconv.Atoi on a 64-bit host: the value Go keeps (0 on a syntax error, clamped to the
// int64 range on overflow) and which error it reported.
struct GoInt {
  enum class Error { kNone, kSyntax, kRange };
  int64_t value = 0;
  Error error = Error::kNone;
};
GoInt GoAtoi(std::string_view s);

// C's isspace in the "C" locale: what glibc skips before a line and before a number.
inline bool IsCSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// The lines of `text` split on '\n' as every reader splits them: `terminated` is false
// only for a last line without a newline. An empty text has no line.
struct Line {
  size_t number = 0;
  std::string_view text;
  bool terminated = true;
};
std::vector<Line> SplitLines(std::string_view text);

// Every line `reader` takes for an account, in file order (what a getpwent loop returns).
std::vector<Record> ReadAccounts(Reader reader, AccountKind kind, const std::vector<Line>& lines);
std::vector<Record> ReadAccounts(Reader reader, AccountKind kind, std::string_view text);

}  // namespace imgtool::rootfs::internal
