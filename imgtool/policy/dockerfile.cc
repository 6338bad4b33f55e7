#include "policy/dockerfile.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <string_view>

namespace imgtool::policy {

namespace {

std::string TrimLeft(const std::string& s) {
  size_t i = s.find_first_not_of(" \t");
  return i == std::string::npos ? "" : s.substr(i);
}

std::string TrimRight(const std::string& s) {
  size_t i = s.find_last_not_of(" \t\r");
  return i == std::string::npos ? "" : s.substr(0, i + 1);
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string l = text.substr(start, end - start);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    out.push_back(l);
    start = end + 1;
  }
  return out;
}

const std::set<std::string>& Known() {
  static const std::set<std::string> k = {"ADD",    "ARG",   "CMD",         "COPY",  "ENTRYPOINT", "ENV",
                                          "EXPOSE", "FROM",  "HEALTHCHECK", "LABEL", "MAINTAINER", "ONBUILD",
                                          "RUN",    "SHELL", "STOPSIGNAL",  "USER",  "VOLUME",     "WORKDIR"};
  return k;
}

bool IsComment(const std::string& line) {
  std::string t = TrimLeft(line);
  return !t.empty() && t[0] == '#';
}

// Every scan below is a plain loop over the line: std::regex recursed once per character
// (a 30,000-character directive or heredoc delimiter overflowed the stack), and nothing
// here needs more than one pass.

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
bool IsLetter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsNameStart(char c) { return IsLetter(c) || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

size_t SkipBlanks(std::string_view s, size_t i) {
  while (i < s.size() && IsBlank(s[i])) ++i;
  return i;
}

// Text from the file, as an error message shows it: a long value is cut, with its length.
std::string Shown(std::string_view text) {
  constexpr size_t kShown = 64;
  if (text.size() <= kShown) return std::string(text);
  return std::string(text.substr(0, kShown)) + "... (" + std::to_string(text.size()) + " bytes)";
}

struct Directive {
  std::string key, value;
};

// "#key=value", blanks allowed after '#' and around '=', the value without trailing
// blanks; nullopt for any other line (`line` starts at its first non-blank).
std::optional<Directive> ParseDirective(std::string_view line) {
  if (line.empty() || line[0] != '#') return std::nullopt;
  size_t key = SkipBlanks(line, 1);
  size_t i = key;
  while (i < line.size() && IsLetter(line[i])) ++i;
  if (i == key) return std::nullopt;
  size_t eq = SkipBlanks(line, i);
  if (eq >= line.size() || line[eq] != '=') return std::nullopt;
  size_t value = SkipBlanks(line, eq + 1), end = line.size();
  while (end > value && IsBlank(line[end - 1])) --end;
  // A line break inside the value (a lone '\r') ends the line for BuildKit: not a directive.
  if (line.substr(value, end - value).find('\r') != std::string_view::npos) return std::nullopt;
  return Directive{std::string(line.substr(key, i - key)), std::string(line.substr(value, end - value))};
}

struct HeredocStart {
  std::string delimiter;
  bool strip_tabs = false;
  size_t end = 0;  // one past the opener in the arguments
};

// A heredoc opener at args[at] == "<<": "<<EOT", "<<-EOT", "<<'EOT'", "<<\"EOT\"" (blanks
// allowed before the name, the quotes must match); nullopt when it is not one.
std::optional<HeredocStart> HeredocAt(std::string_view args, size_t at) {
  HeredocStart h;
  size_t i = at + 2;
  if (i < args.size() && args[i] == '-') {
    h.strip_tabs = true;
    ++i;
  }
  i = SkipBlanks(args, i);
  char quote = i < args.size() && (args[i] == '"' || args[i] == '\'') ? args[i] : 0;
  if (quote) ++i;
  if (i >= args.size() || !IsNameStart(args[i])) return std::nullopt;
  size_t name = i;
  while (i < args.size() && IsNameChar(args[i])) ++i;
  h.delimiter = std::string(args.substr(name, i - name));
  if (quote && (i >= args.size() || args[i++] != quote)) return std::nullopt;
  h.end = i;
  return h;
}

// Every heredoc opener in the arguments of RUN, COPY or ADD, left to right.
std::vector<HeredocStart> HeredocStarts(std::string_view args) {
  std::vector<HeredocStart> out;
  size_t at = args.find("<<");
  while (at != std::string_view::npos) {
    auto h = HeredocAt(args, at);
    if (h) out.push_back(*h);
    at = args.find("<<", h ? h->end : at + 1);
  }
  return out;
}

Error Bad(const std::string& what, size_t line, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, what + ":" + std::to_string(line) + ": " + why);
}

// Directives: "# key=value" lines before anything else; the first other line ends them.
// Returns the index of that line.
Result<size_t> ReadDirectives(const std::vector<std::string>& lines, const std::string& what, Dockerfile& df) {
  size_t i = 0;
  for (; i < lines.size(); ++i) {
    auto d = ParseDirective(TrimLeft(lines[i]));
    if (!d) break;
    std::string key = d->key;
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
    if (key != "syntax" && key != "escape" && key != "check") break;  // a comment, not a directive
    if (df.directives.count(key)) return Bad(what, i + 1, "parser directive '" + key + "' given twice");
    df.directives[key] = d->value;
  }
  return i;
}

// The instruction that starts at lines[i], its continuation lines joined with a space
// (comment and empty lines inside dropped); `i` moves to its last line.
std::string JoinContinued(const std::vector<std::string>& lines, char escape, size_t& i) {
  std::string joined = TrimRight(lines[i]);
  while (!joined.empty() && joined.back() == escape) {
    joined.pop_back();
    ++i;
    while (i < lines.size() && (IsComment(lines[i]) || TrimLeft(lines[i]).empty())) ++i;
    if (i >= lines.size()) break;
    joined += " " + TrimLeft(TrimRight(lines[i]));
  }
  return TrimLeft(joined);
}

// The bodies of the heredocs `ins` opens, each up to its delimiter line; `i` moves past
// them.
Status ReadHeredocs(const std::vector<std::string>& lines, const std::string& what, size_t& i, Instruction& ins) {
  for (const HeredocStart& start : HeredocStarts(ins.args)) {
    Heredoc h;
    h.delimiter = start.delimiter;
    bool closed = false;
    while (++i < lines.size()) {
      std::string_view l = lines[i];
      if (start.strip_tabs) l.remove_prefix(std::min(l.size(), l.find_first_not_of('\t')));
      if (l == h.delimiter) {
        closed = true;
        break;
      }
      h.body.push_back(lines[i]);
    }
    if (!closed) return Bad(what, ins.line, "heredoc <<" + Shown(h.delimiter) + " is not closed");
    ins.heredocs.push_back(std::move(h));
  }
  return Status::Ok();
}

}  // namespace

Result<Dockerfile> ParseDockerfile(const std::string& text, const std::string& what) {
  Dockerfile df;
  const auto lines = Lines(text);
  auto first = ReadDirectives(lines, what, df);
  if (!first.ok()) return first.error();
  char escape = '\\';
  if (df.directives.count("escape")) {
    const std::string& e = df.directives["escape"];
    if (e != "\\" && e != "`") return Bad(what, 1, "escape directive '" + Shown(e) + "': want \\ or `");
    escape = e[0];
  }
  for (size_t i = *first; i < lines.size(); ++i) {
    if (TrimLeft(lines[i]).empty() || IsComment(lines[i])) continue;
    Instruction ins;
    ins.line = static_cast<int>(i + 1);
    const std::string joined = JoinContinued(lines, escape, i);
    size_t sp = joined.find_first_of(" \t");
    ins.keyword = Upper(joined.substr(0, sp));
    ins.args = sp == std::string::npos ? "" : TrimLeft(joined.substr(sp));
    if (!Known().count(ins.keyword)) {
      return Bad(what, ins.line, "unknown instruction '" + Shown(joined.substr(0, sp)) + "'");
    }
    if (ins.keyword == "RUN" || ins.keyword == "COPY" || ins.keyword == "ADD") {
      IMGTOOL_TRY(ReadHeredocs(lines, what, i, ins));
    }
    df.instructions.push_back(std::move(ins));
  }
  return df;
}

std::vector<std::string> SplitWords(const std::string& args) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    char c = args[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < args.size()) {
        cur += args[++i];
      } else {
        cur += c;
      }
    } else if (c == ' ' || c == '\t') {
      if (in_word) out.push_back(cur);
      cur.clear();
      in_word = false;
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < args.size()) {
      cur += args[++i];
      in_word = true;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(cur);
  return out;
}

std::string ExpandArgs(const std::string& text, const std::map<std::string, std::string>& vars) {
  std::string out;
  auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    if (text[i + 1] == '{') {
      size_t close = text.find('}', i + 2);
      if (close == std::string::npos) {
        out += text.substr(i);
        break;
      }
      std::string inner = text.substr(i + 2, close - i - 2);
      size_t n = 0;
      while (n < inner.size() && is_name(inner[n])) ++n;
      std::string name = inner.substr(0, n), op = inner.substr(n);
      auto it = vars.find(name);
      bool set = it != vars.end();
      bool set_nonempty = set && !it->second.empty();
      std::string value = set ? it->second : "";
      if (op.rfind(":-", 0) == 0) {
        out += set_nonempty ? value : op.substr(2);
      } else if (op.rfind('-', 0) == 0) {
        out += set ? value : op.substr(1);
      } else if (op.rfind(":+", 0) == 0) {
        out += set_nonempty ? op.substr(2) : "";
      } else if (op.rfind('+', 0) == 0) {
        out += set ? op.substr(1) : "";
      } else {
        out += value;
      }
      i = close;
    } else if (is_name(text[i + 1])) {
      size_t j = i + 1;
      while (j < text.size() && is_name(text[j])) ++j;
      auto it = vars.find(text.substr(i + 1, j - i - 1));
      if (it != vars.end()) out += it->second;
      i = j - 1;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace imgtool::policy
