// Re2FromGo, IsUtf8, AsGoReadsIt (go_syntax.h). RE2's parser is Go's, written again in C++
// by the same author: the two split a pattern into the same tokens and agree on all but a
// few of them (checked against Go 1.19's regexp.Compile and MatchString: 1.1 million
// random patterns, the same errors and the same matches). Re2FromGo walks the pattern
// once, stepping over escapes (\Q...\E included) and classes as Go's parser does, so that
// "(?<" or "\C" is acted on only where Go reads it as syntax, not inside a class or a
// \Q...\E literal.
#include "regexp/go_syntax.h"

namespace imgtool::regexp::internal {

namespace {

constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD
constexpr size_t kNone = std::string_view::npos;

Error Refused(const std::string& why) { return MakeError(ErrorKind::kInvalidInput, why); }

// Length of the UTF-8 sequence that starts at text[i] (1 to 4), or 0 when the byte there
// starts none: the well-formed sequences of Unicode's table 3-7, which is what Go accepts.
size_t SequenceAt(std::string_view text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (text.size() - i < n) return 0;
  const auto second = static_cast<unsigned char>(text[i + 1]);
  if (second < lo || second > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// Go's isValidCaptureName: [A-Za-z0-9_]+.
bool IsCaptureName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool word = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!word) return false;
  }
  return true;
}

// One past the character class that starts at p[i] == '[' (the end when it is not closed,
// which RE2 reports), stepping over what Go's parseClass steps over: a leading ^, a ']'
// first, [:name:], \p{Name} and escapes. `last_colon` is p.rfind(":]"), so that a class
// full of "[:" costs no search each.
size_t ClassEnd(std::string_view p, size_t i, size_t last_colon) {
  size_t j = i + 1;
  if (j < p.size() && p[j] == '^') ++j;
  bool first = true;
  while (j < p.size() && (p[j] != ']' || first)) {
    first = false;
    if (p.compare(j, 2, "[:") == 0 && j + 2 < p.size() && last_colon != kNone && last_colon >= j + 2) {
      j = p.find(":]", j + 2) + 2;
      continue;
    }
    if (p[j] == '\\' && j + 1 < p.size()) {
      bool braced = (p[j + 1] == 'p' || p[j + 1] == 'P') && p.compare(j + 2, 1, "{") == 0;
      size_t close = braced ? p.find('}', j + 3) : kNone;
      j = !braced ? j + 2 : close == kNone ? p.size() : close + 1;
      continue;
    }
    ++j;
  }
  return j < p.size() ? j + 1 : p.size();
}

// The length of the escape at p[i] == '\\' as Go consumes it: \Q...\E (up to the first \E,
// or the end) and \x{...}, \p{...}, \P{...} whole, else the backslash and one character.
size_t EscapeLength(std::string_view p, size_t i) {
  if (i + 1 >= p.size()) return 1;
  const char c = p[i + 1];
  if (c == 'Q') {
    size_t end = p.find("\\E", i + 2);
    return end == kNone ? p.size() - i : end + 2 - i;
  }
  if ((c == 'x' || c == 'p' || c == 'P') && p.compare(i + 2, 1, "{") == 0) {
    size_t close = p.find('}', i + 3);
    return close == kNone ? p.size() - i : close + 1 - i;
  }
  size_t n = SequenceAt(p, i + 1);
  return 1 + (n == 0 ? 1 : n);
}

// The named-group opener "(?P<name>" or "(?<name>" at p[i], as Go's parsePerlFlags reads
// one: its length, 0 when p[i] opens some other group, or an error for a bad name.
Result<size_t> NamedGroupAt(std::string_view p, size_t i) {
  std::string_view t = p.substr(i);
  bool with_p = t.size() > 4 && t[2] == 'P' && t[3] == '<';
  bool bare = t.size() > 3 && t[2] == '<';
  if (!with_p && !bare) return size_t{0};
  size_t end = t.find('>');
  if (end == kNone) return Refused("invalid named capture group: " + std::string(t));
  size_t name_at = with_p ? 4 : 3;
  if (!IsCaptureName(t.substr(name_at, end - name_at))) {
    return Refused("invalid named capture group: " + std::string(t.substr(0, end + 1)));
  }
  // Written as "(", it would make "(?" with a '?' after it: a flag group for RE2, where Go
  // sees a repeat of nothing.
  if (end + 1 < t.size() && t[end + 1] == '?') return Refused("missing argument to repetition operator: ?");
  return end + 1;
}

}  // namespace

Result<std::string> Re2FromGo(std::string_view pattern) {
  if (!IsUtf8(pattern)) return Refused("invalid UTF-8");
  const size_t last_colon = pattern.rfind(":]");
  bool open_quote = false;
  std::string out;
  out.reserve(pattern.size());
  for (size_t i = 0; i < pattern.size();) {
    size_t n = 1;
    if (pattern[i] == '[') {
      n = ClassEnd(pattern, i, last_colon) - i;
    } else if (pattern[i] == '\\') {
      if (pattern.compare(i, 2, "\\C") == 0) return Refused("invalid escape sequence: \\C");
      n = EscapeLength(pattern, i);
      open_quote = pattern.compare(i, 2, "\\Q") == 0 && pattern.compare(i + n - 2, 2, "\\E") != 0;
    } else if (pattern.compare(i, 2, "(?") == 0) {
      auto named = NamedGroupAt(pattern, i);
      if (!named.ok()) return named.error();
      if (*named > 0) {  // a name changes nothing a match depends on
        out += '(';
        i += *named;
        continue;
      }
    }
    out.append(pattern.substr(i, n));
    i += n;
  }
  // A \Q without \E quotes to the end, in both; closed here so that text after the
  // pattern (GoRegexp wraps it in a group) stays syntax.
  if (open_quote) out += "\\E";
  return out;
}

bool IsUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t n = SequenceAt(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string AsGoReadsIt(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size();) {
    size_t n = SequenceAt(text, i);
    if (n == 0) {
      out += kReplacementChar;
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace imgtool::regexp::internal
