// What the generators read from a CLI11 command tree: the visible subcommands, a
// command's options (its own and its option groups'), and its help text split into a
// summary line and the rest. Depends on CLI11 alone, so the tests build tiny apps.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace imgtool::docgen {

// The named, visible subcommands of `app`, in registration order.
std::vector<CLI::App*> Subcommands(CLI::App& app);
// Every command below `app` that has no subcommands (the verbs), depth first, with its
// words from below the root: {"policy", "check"}.
struct Verb {
  CLI::App* app;
  std::vector<std::string> words;
};
std::vector<Verb> Verbs(CLI::App& root);
// The visible options of `app` and of its nameless option groups; positionals apart.
std::vector<const CLI::Option*> Options(const CLI::App& app, bool positional);
// The first sentence of a description's first paragraph, its lines joined: a man page's
// NAME line, a completion's hint. (The CLI's help wraps its paragraphs by hand.)
std::string Summary(const std::string& description);
// "-o, --output" (short names first) and the value's placeholder ("" for a flag).
std::string OptionNames(const CLI::Option& opt);
std::string ValueName(const CLI::Option& opt);

}  // namespace imgtool::docgen
