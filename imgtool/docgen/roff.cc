#include "docgen/roff.h"

#include <cstdio>
#include <sstream>
#include <vector>

namespace imgtool::docgen {

namespace {

// Decodes the UTF-8 sequence at text[i] (advancing i); a broken one is U+FFFD.
unsigned NextCodePoint(const std::string& text, size_t& i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned c = byte(i);
  int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  unsigned cp = extra == 0 ? 0xFFFD : c & (0x3F >> extra);
  if (i + extra >= text.size()) extra = 0;
  for (int k = 1; k <= extra; ++k) cp = (cp << 6) | (byte(i + k) & 0x3F);
  i += extra + 1;
  return cp;
}

bool Indented(const std::string& line) { return !line.empty() && (line[0] == ' ' || line[0] == '\t'); }

}  // namespace

std::string RoffEscape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\[u%04X]", NextCodePoint(text, i));
      out += buf;
      continue;
    }
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    ++i;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string RoffParagraphs(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  bool verbatim = false;
  bool open = false;  // a paragraph has begun
  for (const auto& line : lines) {
    if (line.find_first_not_of(" \t") == std::string::npos) {
      if (verbatim) out += ".fi\n";
      verbatim = open = false;
      continue;
    }
    if (!open) out += ".PP\n";
    open = true;
    if (Indented(line) != verbatim) {
      out += verbatim ? ".fi\n" : ".nf\n";
      verbatim = !verbatim;
    }
    out += RoffEscape(line) + "\n";
  }
  if (verbatim) out += ".fi\n";
  return out;
}

}  // namespace imgtool::docgen
