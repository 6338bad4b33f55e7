// /etc/passwd and /etc/group, read as the programs that resolve a name inside a container
// read them, and written so that every one of them reads what was meant.
//
// Nobody agrees on these files: glibc skips a line's leading blanks and '#' comments,
// musl reads " t" as a name, Go's moby/sys/user (what runc, containerd and Docker resolve
// a config's User with) reads a missing or unparsable id as 0. A line such as
// " t:x:0:0:..." before "t:x:10001:..." made `t` root for glibc and Go while a reader that
// took the second line saw uid 10001 (issue 24). So a file is read by a model of each
// reader (account_readers.h) and a lookup answers only when all of them find the same
// account; where they differ it is an error naming each reader's line. First match wins,
// as in all of them. What no model covers is refused for the whole file: a NUL byte, a
// NIS compat line (+name, -name), a line Go's scanner cannot hold, a file over 1 MiB.
//
// Used by the policy (nonRoot), the build (the spec's user and group added to the base's
// files) and, through user_arg.h, Dockerfile lint. Pure: text in, answers out.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oci/result.h"

namespace imgtool::rootfs {

enum class AccountKind { kUser, kGroup };  // /etc/passwd, /etc/group

// The most of a passwd or group file that is read. moby/sys/user stops at 10 MiB; no
// image needs more than a fraction of this, and a bigger one is not judged.
inline constexpr size_t kMaxAccountFile = 1 << 20;

// An account every reader resolved alike.
struct Account {
  std::string name;
  uint32_t id = 0;    // uid; a group's gid
  uint32_t gid = 0;   // a user's primary group (0 for a group)
  std::string where;  // `line 3 "app:x:10001:..."`; each reader's line when they differ
};

namespace internal {
struct Record;
}

class AccountFile {
 public:
  // `text` as every reader reads it; kInvalidInput "/etc/passwd: line N: why" for what
  // some reader cannot read or reads by rules not modelled (see above).
  static Result<AccountFile> Parse(AccountKind kind, std::string_view text);

  AccountFile(AccountFile&&) noexcept;
  AccountFile& operator=(AccountFile&&) noexcept;
  ~AccountFile();

  // The first account named `name` (getpwnam, getgrnam, GetExecUser's name match);
  // nullopt when no reader has one; kInvalidInput naming every reader's line when they
  // find different accounts, or some find one and others none.
  Result<std::optional<Account>> FindName(std::string_view name) const;
  // The first account with uid (a group: gid) `id` (getpwuid, a numeric User's entry).
  Result<std::optional<Account>> FindId(uint32_t id) const;

  AccountKind kind() const { return kind_; }
  const char* path() const;  // "/etc/passwd" or "/etc/group"

 private:
  AccountFile(AccountKind kind, std::string_view text);
  template <typename Match>
  Result<std::optional<Account>> Find(const std::string& what, const Match& match) const;
  std::string LineText(size_t line) const;
  std::string Describe(const internal::Record& r) const;

  AccountKind kind_;
  std::string text_;
  std::vector<std::pair<size_t, size_t>> lines_;       // offset and length of each line, for messages
  std::array<std::vector<internal::Record>, 3> read_;  // per reader (internal::kReaders), in file order
};

// What imgtool adds to a base image's files: the spec's user and group.
struct NewUser {
  std::string name;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string home;
  std::string shell;
};
struct NewGroup {
  std::string name;
  uint32_t gid = 0;
};

// A user or group name imgtool writes: 1 to 32 of [a-z0-9_-], not starting with '-'
// (glibc's compat service reads "-name" as "exclude name", tools as an option) and not all
// digits (runtimes, su and chown take "123" for a uid). `what`: "user name", "group name".
Status CheckAccountName(std::string_view name, const std::string& what);
// A field imgtool writes (home, shell): no ':' (the separator), no control character
// (a newline would start a line of its own), at most 4096 bytes. The error does not
// repeat the value.
Status CheckAccountField(std::string_view value);

// `base` (a passwd or group file, possibly empty) with the account added as a last line,
// so that every reader resolves its name to it. Unchanged when every reader already finds
// that name with the same ids. kInvalidInput, naming both, when the name resolves to
// other ids, when the id already belongs to another name, or when readers disagree.
Result<std::string> WithUser(std::string_view base_passwd, const NewUser& user);
Result<std::string> WithGroup(std::string_view base_group, const NewGroup& group);

}  // namespace imgtool::rootfs
