#include "rootfs/users.h"

#include <algorithm>
#include <cstdio>

#include "rootfs/account_readers.h"

namespace imgtool::rootfs {

using internal::Reader;
using internal::Record;

namespace {

const char* PathOf(AccountKind kind) { return kind == AccountKind::kUser ? "/etc/passwd" : "/etc/group"; }

// Go's bufio.Scanner stops the whole read at a longer line: runc and containerd then
// fail, glibc reads on. moby/sys/user gives the group scanner 1 MiB, passwd the default.
size_t MaxLine(AccountKind kind) { return kind == AccountKind::kUser ? 65535 : (1 << 20) - 1; }

// Bytes of a line as they go into a message: control and non-ASCII bytes as \xNN, cut
// short after 80.
std::string Printable(std::string_view s) {
  constexpr size_t kShown = 80;
  std::string out;
  for (size_t i = 0; i < s.size() && i < kShown; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f || c == '\\' || c == '"') {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return s.size() > kShown ? out + "..." : out;
}

Error Refused(AccountKind kind, size_t line, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, std::string(PathOf(kind)) + ": line " + std::to_string(line) + ": " + why);
}

// A line that some reader cannot read, or reads by rules the models leave out.
Status CheckLine(AccountKind kind, const internal::Line& l) {
  const std::string_view s = l.text;
  if (s.find('\0') != std::string_view::npos) {
    return Refused(kind, l.number, "a NUL byte: C libraries end the line there, Go reads past it");
  }
  if (s.size() > MaxLine(kind)) {
    return Refused(kind, l.number,
                   std::to_string(s.size()) +
                       " bytes: Go's bufio.Scanner (runc, containerd, Docker) stops reading the "
                       "file at a line over " +
                       std::to_string(MaxLine(kind)) + " bytes");
  }
  size_t blanks = 0;
  while (blanks < s.size() && internal::IsCSpace(s[blanks])) ++blanks;
  if (blanks < s.size() && (s[blanks] == '+' || s[blanks] == '-')) {
    std::string name(s.substr(blanks, s.find(':', blanks) - blanks));
    return Refused(kind, l.number,
                   "\"" + Printable(name) + "\" is a NIS compat entry: glibc's compat service looks it up in NIS, " +
                       "Go and musl read an account named \"" + Printable(name) + "\"");
  }
  if (!l.terminated && blanks > 0 && blanks < s.size()) {
    return Refused(kind, l.number,
                   "the last line starts with a blank and has no newline: glibc 2.32 and later read its last " +
                       std::to_string(blanks) + " bytes twice (nss_readline), older glibc and Go once");
  }
  return Status::Ok();
}

bool SameAccount(const Record* a, const Record* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a->name == b->name && a->id == b->id && a->gid == b->gid;
}

// "glibc", "glibc and Go", "glibc, musl and Go".
std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return out;
}

}  // namespace

AccountFile::AccountFile(AccountKind kind, std::string_view text) : kind_(kind), text_(text) {}
AccountFile::AccountFile(AccountFile&&) noexcept = default;
AccountFile& AccountFile::operator=(AccountFile&&) noexcept = default;
AccountFile::~AccountFile() = default;

const char* AccountFile::path() const { return PathOf(kind_); }

Result<AccountFile> AccountFile::Parse(AccountKind kind, std::string_view text) {
  if (text.size() > kMaxAccountFile) {
    return MakeError(ErrorKind::kInvalidInput, std::string(PathOf(kind)) + ": " + std::to_string(text.size()) +
                                                   " bytes; at most " + std::to_string(kMaxAccountFile) + " are read");
  }
  AccountFile f(kind, text);
  const std::vector<internal::Line> lines = internal::SplitLines(f.text_);
  f.lines_.reserve(lines.size());
  for (const auto& l : lines) {
    IMGTOOL_TRY(CheckLine(kind, l));
    f.lines_.emplace_back(static_cast<size_t>(l.text.data() - f.text_.data()), l.text.size());
  }
  for (size_t i = 0; i < internal::kReaders.size(); ++i) {
    f.read_[i] = internal::ReadAccounts(internal::kReaders[i], kind, lines);
  }
  return f;
}

// `line 3 "t:x:0:0::/root:/bin/sh"`.
std::string AccountFile::LineText(size_t line) const {
  const auto& [offset, size] = lines_[line - 1];
  return "line " + std::to_string(line) + " \"" + Printable(std::string_view(text_).substr(offset, size)) + "\"";
}

// `line 3 "t:x:0:0::/root:/bin/sh" (user 't', uid 0, gid 0)`.
std::string AccountFile::Describe(const Record& r) const {
  std::string ids = kind_ == AccountKind::kUser ? "user '" + Printable(r.name) + "', uid " + std::to_string(r.id) +
                                                      ", gid " + std::to_string(r.gid)
                                                : "group '" + Printable(r.name) + "', gid " + std::to_string(r.id);
  return LineText(r.line) + " (" + ids + ")";
}

// The first record each reader matches; an account when all of them match the same one
// (or none does), else an error listing what each found.
template <typename Match>
Result<std::optional<Account>> AccountFile::Find(const std::string& what, const Match& match) const {
  std::array<const Record*, 3> found{};
  for (size_t i = 0; i < internal::kReaders.size(); ++i) {
    for (const Record& r : read_[i]) {
      if (match(internal::kReaders[i], r)) {
        found[i] = &r;
        break;
      }
    }
  }
  // Readers that read the same line alike (or found none) are named together.
  std::vector<std::pair<const Record*, std::vector<std::string>>> by_line;
  for (size_t i = 0; i < found.size(); ++i) {
    auto it = std::find_if(by_line.begin(), by_line.end(), [&](const auto& g) {
      return SameAccount(g.first, found[i]) && (g.first == nullptr || g.first->line == found[i]->line);
    });
    if (it == by_line.end()) it = by_line.insert(by_line.end(), {found[i], {}});
    it->second.push_back(internal::ReaderName(internal::kReaders[i]));
  }
  if (!SameAccount(found[0], found[1]) || !SameAccount(found[0], found[2])) {
    std::string why;
    for (const auto& [r, readers] : by_line) {
      why += (why.empty() ? "" : "; ") + JoinNames(readers) + ": " + (r ? Describe(*r) : "none");
    }
    return MakeError(ErrorKind::kInvalidInput,
                     std::string(path()) + ": runtimes resolve " + what + " differently: " + why);
  }
  if (found[0] == nullptr) return std::optional<Account>();
  Account a{found[0]->name, found[0]->id, found[0]->gid, ""};
  for (const auto& [r, readers] : by_line) {
    a.where +=
        (a.where.empty() ? "" : ", ") + LineText(r->line) + (by_line.size() > 1 ? " (" + JoinNames(readers) + ")" : "");
  }
  return std::optional<Account>(std::move(a));
}

Result<std::optional<Account>> AccountFile::FindName(std::string_view name) const {
  const std::string what = (kind_ == AccountKind::kUser ? "user '" : "group '") + Printable(name) + "'";
  return Find(what, [&](Reader, const Record& r) { return r.name == name; });
}

Result<std::optional<Account>> AccountFile::FindId(uint32_t id) const {
  const std::string what = (kind_ == AccountKind::kUser ? "uid " : "gid ") + std::to_string(id);
  // Go compares the int it parsed; C readers the uint32_t they stored.
  return Find(what, [&](Reader reader, const Record& r) {
    return reader == Reader::kGo ? r.go_id == static_cast<int64_t>(id) : r.id == id;
  });
}

}  // namespace imgtool::rootfs
