// A Dockerfile parser good enough for lint: what BuildKit's frontend does to lines before
// it looks at arguments. Parser directives at the top (# syntax=, # escape=), comments,
// line continuations (the escape character at the end of a line; comment lines inside a
// continuation are dropped), heredocs on RUN/COPY/ADD (<<EOT, <<-EOT, <<'EOT'; the body
// is kept apart and never read as instructions), case-insensitive instruction names.
// Plus the two helpers lint needs: shell-like word splitting and ARG substitution.
//
// Not here: the lint rules (lint.h) or building anything.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "oci/result.h"

namespace imgtool::policy {

struct Heredoc {
  std::string delimiter;
  std::vector<std::string> body;
};

struct Instruction {
  int line = 0;         // first line of the instruction, 1-based
  std::string keyword;  // upper case: "FROM"
  std::string args;     // the rest, continuation lines joined with a space
  std::vector<Heredoc> heredocs;
};

struct Dockerfile {
  std::map<std::string, std::string> directives;  // lower-case key -> value
  std::vector<Instruction> instructions;
};

// `what`: the file name errors start with ("Dockerfile:12: unknown instruction 'FORM'").
Result<Dockerfile> ParseDockerfile(const std::string& text, const std::string& what);

// Words as a shell splits them: blanks separate, quotes group and are removed, a
// backslash keeps the next character.
std::vector<std::string> SplitWords(const std::string& args);

// $VAR, ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:+alt}, ${VAR+alt}; `vars` holds the
// variables that are set (an unset one expands to "").
std::string ExpandArgs(const std::string& text, const std::map<std::string, std::string>& vars);

}  // namespace imgtool::policy
