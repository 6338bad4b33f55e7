// Man pages (man(7) source) from a CLI11 command tree: the program's page (description,
// options, every verb with its summary) and one page per verb, named after the words that
// call it ("imgtool policy check" -> imgtool-policy-check(1)). Deterministic: no date, no
// path, only what the tree holds, so the pages are build outputs like any other.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace imgtool::docgen {

struct ManInfo {
  std::string program;  // the binary the page is about: imgtool, imgtool-fleet
  std::string summary;  // its NAME line
  std::string source;   // the footer's left: "imgtool 0.1.0"
  std::string manual = "imgtool manual";
};

struct ManPage {
  std::string name;  // imgtool-build: the file is NAME.1
  std::string text;
};

// The program's page. Its verbs point at the verb pages, which are named after the
// root app's name (imgtool-fleet's verbs are imgtool's: imgtool-probe(1)).
ManPage ProgramPage(CLI::App& root, const ManInfo& info);
// One page per verb (a command without subcommands) below `root`.
std::vector<ManPage> VerbPages(CLI::App& root, const ManInfo& info);

}  // namespace imgtool::docgen
