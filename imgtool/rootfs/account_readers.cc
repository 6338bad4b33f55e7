#include "rootfs/account_readers.h"

#include <limits>
#include <optional>

namespace imgtool::rootfs::internal {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// name:password:id[:gid] as both C libraries lay a line out: the name up to the first ':'
// searched for from `name_search_from`, the password up to the next, then the uid (a
// user's gid after it) each read by `id_field`, which leaves `pos` after what it took.
// nullopt: a ':' or a number missing, and the library skips the line.
using IdField = std::optional<uint32_t> (*)(std::string_view, size_t&);
std::optional<Record> NameAndIds(AccountKind kind, std::string_view s, size_t name_search_from, size_t& pos,
                                 IdField id_field) {
  size_t name_end = s.find(':', name_search_from);
  if (name_end == std::string_view::npos) return std::nullopt;
  size_t pass_end = s.find(':', name_end + 1);
  if (pass_end == std::string_view::npos) return std::nullopt;
  Record r;
  r.name = std::string(s.substr(0, name_end));
  pos = pass_end + 1;
  auto id = id_field(s, pos);
  if (!id) return std::nullopt;
  r.id = *id;
  if (kind == AccountKind::kUser) {
    auto gid = id_field(s, pos);
    if (!gid) return std::nullopt;
    r.gid = *gid;
  }
  r.go_id = r.id;
  return r;
}

// ---- glibc: nss_readline.c, files-parse.c, pwd/fgetpwent_r.c, grp/fgetgrent_r.c ----

// strtoul(s + pos, &end, 10) as INT_FIELD takes it: leading isspace and one sign skipped,
// a negative value negated modulo 2^64, an overflow ULONG_MAX. A value over 2^32-1 makes
// the line invalid in glibc 2.36 (checked against this machine's fgetpwent by users_test:
// "4294967296", "-1" and "-5" are skipped, "-18446744073709551615" is 1); the older
// files-parse.c saturated it to 2^32-1 (strtou32). Neither gives 0. nullopt: no digit
// (strtoul converts nothing) or out of range.
std::optional<uint32_t> CStrtou32(std::string_view s, size_t& pos) {
  size_t p = pos;
  while (p < s.size() && IsCSpace(s[p])) ++p;
  bool negative = false;
  if (p < s.size() && (s[p] == '+' || s[p] == '-')) negative = s[p++] == '-';
  const size_t first_digit = p;
  uint64_t v = 0;
  bool overflow = false;
  for (; p < s.size() && IsDigit(s[p]); ++p) {
    uint64_t d = static_cast<uint64_t>(s[p] - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) overflow = true;
    if (!overflow) v = v * 10 + d;
  }
  if (p == first_digit || overflow) return std::nullopt;
  if (negative) v = 0 - v;
  if (v > 0xffffffffu) return std::nullopt;
  pos = p;
  return static_cast<uint32_t>(v);
}

// INT_FIELD: a number, then ':' (consumed) or the end of the line; anything else makes
// the line invalid, and the parser's caller skips it.
std::optional<uint32_t> CIntField(std::string_view s, size_t& pos) {
  auto v = CStrtou32(s, pos);
  if (!v) return std::nullopt;
  if (pos < s.size()) {
    if (s[pos] != ':') return std::nullopt;
    ++pos;
  }
  return v;
}

std::optional<Record> GlibcLine(AccountKind kind, std::string_view s) {
  size_t p = 0;
  while (p < s.size() && IsCSpace(s[p])) ++p;
  if (p == s.size() || s[p] == '#') return std::nullopt;  // nss_readline: empty or a comment
  s.remove_prefix(p);
  // STRING_FIELD name, STRING_FIELD password: without a ':' after each, the number that
  // follows is read from an empty string, which converts nothing.
  size_t pos = 0;
  return NameAndIds(kind, s, 0, pos, CIntField);
}

// ---- musl: src/passwd/getpwent_a.c, getgrent_a.c ----

// atou: the digits at pos, modulo 2^32; none is 0.
uint32_t MuslAtou(std::string_view s, size_t& pos) {
  uint32_t x = 0;
  for (; pos < s.size() && IsDigit(s[pos]); ++pos) x = 10 * x + static_cast<uint32_t>(s[pos] - '0');
  return x;
}

// After a number musl wants ':' itself; nullopt skips the line.
std::optional<uint32_t> MuslIdField(std::string_view s, size_t& pos) {
  uint32_t v = MuslAtou(s, pos);
  if (pos >= s.size() || s[pos] != ':') return std::nullopt;
  ++pos;
  return v;
}

std::optional<Record> MuslLine(AccountKind kind, std::string_view s, bool terminated) {
  if (!terminated) s.remove_suffix(1);  // line[l-1] = 0 drops a byte that is not a newline
  if (s.empty()) return std::nullopt;
  size_t pos = 0;
  auto r = NameAndIds(kind, s, 1, pos, MuslIdField);  // pw_name = s++: the search starts at the second byte
  if (!r) return std::nullopt;
  if (kind == AccountKind::kUser) {
    size_t gecos_end = s.find(':', pos);  // then gecos, home and shell
    if (gecos_end == std::string_view::npos || s.find(':', gecos_end + 1) == std::string_view::npos) {
      return std::nullopt;
    }
  }
  return r;
}

// ---- Go: moby/sys/user ParsePasswdFilter / ParseGroupFilter, bytes.TrimSpace ----

// Bytes of the Unicode white-space rune (unicode.IsSpace) that `s` starts (at_end: ends)
// with; 0 when none. UTF-8 of U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029,
// U+202F, U+205F, U+3000.
size_t GoSpaceBytes(std::string_view s, bool at_end) {
  if (s.empty()) return 0;
  if (IsCSpace(at_end ? s.back() : s.front())) return 1;
  auto is = [&](std::string_view rune) {
    return s.size() >= rune.size() && (at_end ? s.substr(s.size() - rune.size()) : s.substr(0, rune.size())) == rune;
  };
  if (is("\xc2\x85") || is("\xc2\xa0")) return 2;
  if (is("\xe1\x9a\x80") || is("\xe2\x80\xa8") || is("\xe2\x80\xa9") || is("\xe2\x80\xaf") || is("\xe2\x81\x9f") ||
      is("\xe3\x80\x80")) {
    return 3;
  }
  for (int last = 0x80; last <= 0x8a; ++last) {  // U+2000 to U+200A
    const char rune[3] = {'\xe2', '\x80', static_cast<char>(last)};
    if (is(std::string_view(rune, 3))) return 3;
  }
  return 0;
}

std::string_view GoTrimSpace(std::string_view s) {
  while (size_t n = GoSpaceBytes(s, false)) s.remove_prefix(n);
  while (size_t n = GoSpaceBytes(s, true)) s.remove_suffix(n);
  return s;
}

// parseParts' *int: the number with its error ignored; a field that is not there stays 0.
GoInt GoField(const std::vector<std::string_view>& fields, size_t i) {
  return i < fields.size() ? GoAtoi(fields[i]) : GoInt{};
}

std::optional<Record> GoLine(AccountKind kind, std::string_view s) {
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);  // bufio.ScanLines drops one CR
  s = GoTrimSpace(s);
  if (s.empty()) return std::nullopt;
  if (kind == AccountKind::kGroup && s.front() == '#') return std::nullopt;  // passwd has no comments
  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    size_t colon = s.find(':', start);
    fields.push_back(s.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  Record r;
  r.name = std::string(fields[0]);
  r.go_id = GoField(fields, 2).value;
  r.id = static_cast<uint32_t>(r.go_id);  // uint32(u.Uid): containerd, Docker
  if (kind == AccountKind::kUser) r.gid = static_cast<uint32_t>(GoField(fields, 3).value);
  return r;
}

std::optional<Record> ReadLine(Reader reader, AccountKind kind, const Line& l) {
  switch (reader) {
    case Reader::kGlibc:
      return GlibcLine(kind, l.text);
    case Reader::kMusl:
      return MuslLine(kind, l.text, l.terminated);
    case Reader::kGo:
      return GoLine(kind, l.text);
  }
  return std::nullopt;
}

}  // namespace

const char* ReaderName(Reader r) {
  switch (r) {
    case Reader::kGlibc:
      return "glibc";
    case Reader::kMusl:
      return "musl";
    case Reader::kGo:
      return "Go";
  }
  return "?";
}

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    bool terminated = nl != std::string_view::npos;
    size_t end = terminated ? nl : text.size();
    out.push_back({out.size() + 1, text.substr(start, end - start), terminated});
    start = end + 1;
  }
  return out;
}

std::vector<Record> ReadAccounts(Reader reader, AccountKind kind, std::string_view text) {
  return ReadAccounts(reader, kind, SplitLines(text));
}

std::vector<Record> ReadAccounts(Reader reader, AccountKind kind, const std::vector<Line>& lines) {
  std::vector<Record> out;
  for (const Line& l : lines) {
    auto r = ReadLine(reader, kind, l);
    if (!r) continue;
    r->line = l.number;
    out.push_back(std::move(*r));
  }
  return out;
}

// strconv.Atoi: a fast path for fewer than 19 bytes (a sign, then digits only), else
// ParseInt(s, 10, 0), whose ParseUint reports an overflow at the first digit that causes
// it, even when a byte that is not a digit follows; the value is then clamped.
GoInt GoAtoi(std::string_view s) {
  const GoInt syntax{0, GoInt::Error::kSyntax};
  if (s.empty()) return syntax;
  bool negative = s.front() == '-';
  std::string_view digits = s;
  if (s.front() == '+' || s.front() == '-') digits.remove_prefix(1);
  if (digits.empty()) return syntax;
  if (s.size() < 19) {
    int64_t n = 0;
    for (char c : digits) {
      if (!IsDigit(c)) return syntax;
      n = n * 10 + (c - '0');
    }
    return {negative ? -n : n, GoInt::Error::kNone};
  }
  uint64_t n = 0;
  bool overflow = false;
  for (char c : digits) {
    if (!IsDigit(c)) return syntax;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (n >= std::numeric_limits<uint64_t>::max() / 10 + 1 || n * 10 > std::numeric_limits<uint64_t>::max() - d) {
      overflow = true;
      break;
    }
    n = n * 10 + d;
  }
  constexpr uint64_t kCutoff = uint64_t{1} << 63;
  if (overflow || (!negative && n >= kCutoff)) {
    return {negative ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max(), GoInt::Error::kRange};
  }
  if (negative && n > kCutoff) return {std::numeric_limits<int64_t>::min(), GoInt::Error::kRange};
  if (negative)
    return {n == kCutoff ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(n), GoInt::Error::kNone};
  return {static_cast<int64_t>(n), GoInt::Error::kNone};
}

}  // namespace imgtool::rootfs::internal
