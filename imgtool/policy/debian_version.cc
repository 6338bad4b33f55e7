#include "policy/debian_version.h"

#include <cctype>
#include <string>

namespace imgtool::policy {

namespace {

struct Parts {
  std::string_view epoch, upstream, revision;
};

// The epoch ends at the first ':'; the revision starts after the last '-'.
Parts Split(std::string_view v) {
  Parts p;
  size_t colon = v.find(':');
  if (colon != std::string_view::npos) {
    p.epoch = v.substr(0, colon);
    v.remove_prefix(colon + 1);
  }
  size_t dash = v.rfind('-');
  p.upstream = v.substr(0, dash);
  if (dash != std::string_view::npos) p.revision = v.substr(dash + 1);
  return p;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The weight of a character in a non-digit run: '~' sorts before the end, the end (0)
// before letters, letters before everything else.
int Order(char c) {
  if (c == '~') return -1;
  if (IsAlpha(c)) return c;
  return c + 256;
}

// Digit runs compare as numbers: leading zeros skipped, then the longer run is larger,
// then the first differing digit; no integer overflow on 40-digit runs.
int CompareDigits(std::string_view& a, std::string_view& b) {
  auto take = [](std::string_view& s) {
    size_t n = 0;
    while (n < s.size() && IsDigit(s[n])) ++n;
    std::string_view run = s.substr(0, n);
    s.remove_prefix(n);
    while (!run.empty() && run[0] == '0') run.remove_prefix(1);
    return run;
  };
  std::string_view x = take(a), y = take(b);
  if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
  int c = x.compare(y);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

int ComparePart(std::string_view a, std::string_view b) {
  while (!a.empty() || !b.empty()) {
    while ((!a.empty() && !IsDigit(a[0])) || (!b.empty() && !IsDigit(b[0]))) {
      int x = a.empty() || IsDigit(a[0]) ? 0 : Order(a[0]);
      int y = b.empty() || IsDigit(b[0]) ? 0 : Order(b[0]);
      if (x != y) return x < y ? -1 : 1;
      if (!a.empty() && !IsDigit(a[0])) a.remove_prefix(1);
      if (!b.empty() && !IsDigit(b[0])) b.remove_prefix(1);
    }
    if (int c = CompareDigits(a, b); c != 0) return c;
  }
  return 0;
}

Error Bad(const std::string& why) { return MakeError(ErrorKind::kInvalidInput, "not a Debian version (" + why + ")"); }

}  // namespace

Status CheckDebianVersion(std::string_view v) {
  if (v.empty()) return Bad("empty");
  Parts p = Split(v);
  if (v.find(':') != std::string_view::npos) {
    if (p.epoch.empty() || p.epoch.size() > 9) return Bad("the epoch is not a number");
    for (char c : p.epoch) {
      if (!IsDigit(c)) return Bad("the epoch is not a number");
    }
  }
  if (p.upstream.empty() || !IsDigit(p.upstream[0])) return Bad("the upstream version does not start with a digit");
  for (char c : p.upstream) {
    if (!IsDigit(c) && !IsAlpha(c) && std::string_view(".+~-:").find(c) == std::string_view::npos) {
      return Bad("a character dpkg refuses");
    }
  }
  if (v.find('-') != std::string_view::npos && p.revision.empty()) return Bad("an empty revision");
  for (char c : p.revision) {
    if (!IsDigit(c) && !IsAlpha(c) && std::string_view(".+~").find(c) == std::string_view::npos) {
      return Bad("a character dpkg refuses in the revision");
    }
  }
  return Status::Ok();
}

int CompareDebianVersions(std::string_view a, std::string_view b) {
  Parts x = Split(a), y = Split(b);
  auto epoch = [](std::string_view e) {
    long n = 0;
    for (char c : e) n = n * 10 + (c - '0');  // at most 9 digits (CheckDebianVersion)
    return n;
  };
  if (epoch(x.epoch) != epoch(y.epoch)) return epoch(x.epoch) < epoch(y.epoch) ? -1 : 1;
  if (int c = ComparePart(x.upstream, y.upstream); c != 0) return c;
  return ComparePart(x.revision, y.revision);
}

}  // namespace imgtool::policy
