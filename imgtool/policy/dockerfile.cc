#include "policy/dockerfile.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

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

}  // namespace

Result<Dockerfile> ParseDockerfile(const std::string& text, const std::string& what) {
  Dockerfile df;
  auto lines = Lines(text);
  auto bad = [&](size_t line, const std::string& why) {
    return MakeError(ErrorKind::kInvalidInput, what + ":" + std::to_string(line) + ": " + why);
  };
  // Directives: "# key=value" lines before anything else; the first other line ends them.
  static const std::regex directive(R"(^#\s*([A-Za-z]+)\s*=\s*(.*?)\s*$)");
  size_t i = 0;
  for (; i < lines.size(); ++i) {
    std::smatch m;
    std::string l = TrimLeft(lines[i]);
    if (!std::regex_match(l, m, directive)) break;
    std::string key = m[1].str();
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
    if (key != "syntax" && key != "escape" && key != "check") break;  // a comment, not a directive
    if (df.directives.count(key)) return bad(i + 1, "parser directive '" + key + "' given twice");
    df.directives[key] = m[2].str();
  }
  char escape = '\\';
  if (df.directives.count("escape")) {
    const std::string& e = df.directives["escape"];
    if (e != "\\" && e != "`") return bad(1, "escape directive '" + e + "': want \\ or `");
    escape = e[0];
  }
  static const std::regex heredoc(R"(<<(-?)\s*(["']?)([A-Za-z_][A-Za-z0-9_]*)\2)");
  for (; i < lines.size(); ++i) {
    if (TrimLeft(lines[i]).empty() || IsComment(lines[i])) continue;
    Instruction ins;
    ins.line = static_cast<int>(i + 1);
    std::string joined = TrimRight(lines[i]);
    while (!joined.empty() && joined.back() == escape) {
      joined.pop_back();
      ++i;
      while (i < lines.size() && (IsComment(lines[i]) || TrimLeft(lines[i]).empty())) ++i;
      if (i >= lines.size()) break;
      joined += " " + TrimLeft(TrimRight(lines[i]));
    }
    joined = TrimLeft(joined);
    size_t sp = joined.find_first_of(" \t");
    ins.keyword = Upper(joined.substr(0, sp));
    ins.args = sp == std::string::npos ? "" : TrimLeft(joined.substr(sp));
    if (!Known().count(ins.keyword)) return bad(ins.line, "unknown instruction '" + joined.substr(0, sp) + "'");
    if (ins.keyword == "RUN" || ins.keyword == "COPY" || ins.keyword == "ADD") {
      for (auto it = std::sregex_iterator(ins.args.begin(), ins.args.end(), heredoc); it != std::sregex_iterator();
           ++it) {
        Heredoc h;
        h.delimiter = (*it)[3].str();
        bool strip_tabs = (*it)[1].str() == "-";
        bool closed = false;
        while (++i < lines.size()) {
          std::string l = lines[i];
          if (strip_tabs)
            l.erase(0, l.find_first_not_of('\t') == std::string::npos ? l.size() : l.find_first_not_of('\t'));
          if (l == h.delimiter) {
            closed = true;
            break;
          }
          h.body.push_back(lines[i]);
        }
        if (!closed) return bad(ins.line, "heredoc <<" + h.delimiter + " is not closed");
        ins.heredocs.push_back(h);
      }
    }
    df.instructions.push_back(ins);
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
      } else if (op.rfind("-", 0) == 0) {
        out += set ? value : op.substr(1);
      } else if (op.rfind(":+", 0) == 0) {
        out += set_nonempty ? op.substr(2) : "";
      } else if (op.rfind("+", 0) == 0) {
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
