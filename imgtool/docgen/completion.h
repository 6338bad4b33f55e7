// Shell completion scripts from a CLI11 command tree. Both walk the words typed so far
// to the deepest known command, then offer its subcommands, or its options after a '-',
// or else files (the positionals of every verb are files or references). Deterministic.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace imgtool::docgen {

// For share/bash-completion/completions/PROGRAM: `complete -F _PROGRAM PROGRAM`.
std::string BashCompletion(CLI::App& root, const std::string& program);
// For a zsh fpath folder as _PROGRAM (#compdef PROGRAM): subcommands and options with
// their summaries.
std::string ZshCompletion(CLI::App& root, const std::string& program);

}  // namespace imgtool::docgen
