// Adding the spec's user and group to a base image's /etc/passwd and /etc/group (users.h).
#include <string>

#include "rootfs/users.h"

namespace imgtool::rootfs {

namespace {

Error Invalid(const std::string& message) { return MakeError(ErrorKind::kInvalidInput, message); }

std::string Ids(AccountKind kind, uint32_t id, uint32_t gid) {
  if (kind == AccountKind::kGroup) return "gid " + std::to_string(id);
  return "uid " + std::to_string(id) + " (gid " + std::to_string(gid) + ")";
}

// `base` plus `line`, unless the account is already there. Checked on the base as given
// (what the error names) and again on the result, which is what ships.
Result<std::string> WithAccount(AccountKind kind, std::string_view base, const Account& want, const std::string& line) {
  const std::string noun = kind == AccountKind::kUser ? "user" : "group";
  auto file = AccountFile::Parse(kind, base);
  if (!file.ok()) return file.error();
  const std::string cannot = "; " + noun + " '" + want.name + "' cannot be added as " + Ids(kind, want.id, want.gid);
  auto by_name = file->FindName(want.name);
  if (!by_name.ok()) return Invalid(by_name.error().message + cannot);
  if (*by_name) {
    const Account& have = **by_name;
    if (have.id == want.id && have.gid == want.gid) return std::string(base);
    return Invalid(std::string(file->path()) + ": " + noun + " '" + want.name + "' is already " +
                   Ids(kind, have.id, have.gid) + " at " + have.where + ", not " + Ids(kind, want.id, want.gid));
  }
  auto by_id = file->FindId(want.id);
  if (!by_id.ok()) return Invalid(by_id.error().message + cannot);
  if (*by_id) {
    const std::string id = kind == AccountKind::kUser ? "uid " : "gid ";
    return Invalid(std::string(file->path()) + ": " + id + std::to_string(want.id) + " already belongs to " + noun +
                   " '" + (*by_id)->name + "' at " + (*by_id)->where + ", so it cannot be " + noun + " '" + want.name +
                   "' too");
  }
  std::string out(base);
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += line + "\n";
  auto written = AccountFile::Parse(kind, out);
  if (!written.ok()) return written.error().Context("the file written");
  auto back = written->FindName(want.name);
  if (!back.ok()) return back.error().Context("the file written");
  if (!*back || (*back)->id != want.id || (*back)->gid != want.gid) {
    return MakeError(ErrorKind::kInternal, std::string(file->path()) + ": " + noun + " '" + want.name +
                                               "' does not read back as " + Ids(kind, want.id, want.gid));
  }
  return out;
}

}  // namespace

Status CheckAccountName(std::string_view name, const std::string& what) {
  const std::string bad =
      "'" + std::string(name.substr(0, 64)) + (name.size() > 64 ? "...'" : "'") + " is not a valid " + what;
  if (name.empty() || name.size() > 32 ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string_view::npos) {
    return Invalid(bad + " ([a-z0-9_-], up to 32)");
  }
  if (name.front() == '-') {
    return Invalid(bad + ": a leading '-' is \"exclude\" to glibc's compat service and an option to tools");
  }
  if (name.find_first_not_of("0123456789") == std::string_view::npos) {
    return Invalid(bad + ": all digits, which runtimes, su and chown read as an id");
  }
  return Status::Ok();
}

Status CheckAccountField(std::string_view value) {
  constexpr size_t kMax = 4096;
  if (value.size() > kMax) return Invalid(std::to_string(value.size()) + " bytes, more than 4096");
  for (char c : value) {
    if (c == ':') return Invalid("a ':', which separates the fields of /etc/passwd");
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      return Invalid("control character " + std::to_string(u) + " (a newline would start a line of its own)");
    }
  }
  return Status::Ok();
}

Result<std::string> WithUser(std::string_view base_passwd, const NewUser& u) {
  IMGTOOL_TRY(CheckAccountName(u.name, "user name"));
  if (Status st = CheckAccountField(u.home); !st.ok()) return st.error().Context("home");
  if (Status st = CheckAccountField(u.shell); !st.ok()) return st.error().Context("shell");
  std::string line =
      u.name + ":x:" + std::to_string(u.uid) + ":" + std::to_string(u.gid) + "::" + u.home + ":" + u.shell;
  return WithAccount(AccountKind::kUser, base_passwd, Account{u.name, u.uid, u.gid, ""}, line);
}

Result<std::string> WithGroup(std::string_view base_group, const NewGroup& g) {
  IMGTOOL_TRY(CheckAccountName(g.name, "group name"));
  return WithAccount(AccountKind::kGroup, base_group, Account{g.name, g.gid, 0, ""},
                     g.name + ":x:" + std::to_string(g.gid) + ":");
}

}  // namespace imgtool::rootfs
