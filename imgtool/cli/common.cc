#include "cli/common.h"

#include <iostream>
#include <memory>
#include <set>

#include "oci/quote.h"
#include "oci/warnings.h"

namespace imgtool::cli {

namespace {

// "imgtool policy check": the verbs parsed before the error, for the usage hint.
std::string VerbPath(CLI::App& app) {
  std::string path = app.get_name();
  for (CLI::App* cur = &app;;) {
    auto subs = cur->get_subcommands();
    if (subs.empty()) return path;
    cur = subs.front();
    path += " " + cur->get_name();
  }
}

// What the libraries read anyway but want said (oci/warnings.h): "imgtool: warning: ..."
// on stderr, each distinct warning once (a verb may open one manifest several times). The
// handler runs under oci::Warn's lock, so the set needs none of its own; a long-running
// verb (admission serve) forgets them every 1,000 so that the set stays small.
void PrintWarningsOnce() {
  auto printed = std::make_shared<std::set<std::string>>();
  oci::SetWarningHandler([printed](const std::string& message) {
    if (printed->size() >= 1000) printed->clear();
    if (printed->insert(message).second) PrintLine("imgtool: warning: ", message);
  });
}

}  // namespace

int ParseAndRun(CLI::App& app, const Action& run, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // Usage errors read like every other error, and say where the usage is.
    PrintLine("imgtool: error: ", std::string(e.what()) + "\n(see '" + VerbPath(app) + " --help')");
    return 2;
  }
  PrintWarningsOnce();
  return run ? run() : 2;
}

int Fail(const Error& e) {
  PrintLine("imgtool: error: ", e.message);
  return ExitCodeFor(e.kind);
}

void PrintLine(const std::string& prefix, const std::string& line) {
  std::cerr << (prefix + oci::Printable(line) + "\n") << std::flush;
}

void PrintJson(const oci::Json& j) { std::cout << j.dump(2) << "\n"; }

}  // namespace imgtool::cli
