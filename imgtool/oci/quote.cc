#include "oci/quote.h"

#include <cstdint>

namespace imgtool::oci {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendHexByte(std::string& out, unsigned char c) {
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

void AppendCodePoint(std::string& out, uint32_t cp) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 15];
}

// The length of the well-formed UTF-8 sequence at s[i] (2-4 bytes; RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF) and its code point; 0 when the
// bytes there are not one.
size_t Utf8Sequence(std::string_view s, size_t i, uint32_t& cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char lead = b(0);
  size_t n = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  if (lead < 0xc2 || lead > 0xf4 || i + n > s.size()) return 0;
  cp = lead & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  const uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// C1 controls (CSI is U+009B) and the bidi embeddings, overrides and isolates.
bool IsHiddenCodePoint(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

// How much Escape leaves as it is.
struct Style {
  bool quote_and_backslash;  // escape `quote` and '\\' (Quoted: the text reads back unambiguously)
  bool keep_line_breaks;     // '\n' and '\t' stay (a whole message of several lines)
  char quote;
};

void AppendAscii(std::string& out, unsigned char c, const Style& style) {
  if (style.quote_and_backslash && (c == static_cast<unsigned char>(style.quote) || c == '\\')) out += '\\';
  const bool kept_break = (c == '\n' || c == '\t') && style.keep_line_breaks;
  if (c == '\n' && !kept_break) {
    out += "\\n";
  } else if (c == '\t' && !kept_break) {
    out += "\\t";
  } else if (c == '\r') {
    out += "\\r";
  } else if ((c < 0x20 && !kept_break) || c == 0x7f) {
    AppendHexByte(out, c);
  } else {
    out += static_cast<char>(c);
  }
}

std::string Escape(std::string_view s, const Style& style) {
  std::string out;
  out.reserve(s.size() + 2);
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      AppendAscii(out, c, style);
      ++i;
      continue;
    }
    uint32_t cp = 0;
    size_t n = Utf8Sequence(s, i, cp);
    if (n == 0) {
      AppendHexByte(out, c);
      ++i;
    } else if (IsHiddenCodePoint(cp)) {
      AppendCodePoint(out, cp);
      i += n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace

std::string Quoted(std::string_view s, char quote) { return quote + Escape(s, Style{true, false, quote}) + quote; }

std::string Printable(std::string_view s, bool keep_line_breaks) {
  return Escape(s, Style{false, keep_line_breaks, '\0'});
}

}  // namespace imgtool::oci
