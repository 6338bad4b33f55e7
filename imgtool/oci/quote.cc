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

// One byte of ASCII, escaped when it is a control; a message keeps its line breaks and tabs.
void AppendAscii(std::string& out, unsigned char c, bool message) {
  switch (c) {
    case '\n': out += message ? "\n" : "\\n"; return;
    case '\t': out += message ? "\t" : "\\t"; return;
    case '\r': out += "\\r"; return;
    default: break;
  }
  if (c < 0x20 || c == 0x7f) return AppendHexByte(out, c);
  out += static_cast<char>(c);
}

std::string Escape(std::string_view s, bool message, char quote) {
  std::string out;
  out.reserve(s.size() + 2);
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (!message && (c == static_cast<unsigned char>(quote) || c == '\\')) out += '\\';
      AppendAscii(out, c, message);
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

std::string Quoted(std::string_view s, char quote) { return quote + Escape(s, false, quote) + quote; }

std::string Printable(std::string_view s) { return Escape(s, true, '\0'); }

}  // namespace imgtool::oci
