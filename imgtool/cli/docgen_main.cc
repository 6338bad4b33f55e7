// imgtool-docgen OUTDIR: imgtool's and imgtool-fleet's man pages (OUTDIR/man/*.1) and
// shell completions (OUTDIR/bash/, OUTDIR/zsh/) from the same command trees main()
// parses (app.cc, fleet_app.cc). Run at build time by the target imgtool_docs, which
// compresses the pages; installed by cmake --install (README, "Install"). It fails the
// build when a verb's tree built alone, as main builds it, differs from the whole tree.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/apps.h"
#include "docgen/completion.h"
#include "docgen/man.h"

namespace {

namespace fs = std::filesystem;

bool Write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) std::cerr << "imgtool-docgen: cannot write " << file << "\n";
  return static_cast<bool>(out);
}

bool WriteProgram(CLI::App& app, const imgtool::docgen::ManInfo& info, bool verbs, const fs::path& dir) {
  bool ok = Write(dir / "man" / (info.program + ".1"), imgtool::docgen::ProgramPage(app, info).text);
  if (verbs) {
    for (const auto& page : imgtool::docgen::VerbPages(app, info))
      ok &= Write(dir / "man" / (page.name + ".1"), page.text);
  }
  ok &= Write(dir / "bash" / info.program, imgtool::docgen::BashCompletion(app, info.program));
  return ok && Write(dir / "zsh" / ("_" + info.program), imgtool::docgen::ZshCompletion(app, info.program));
}

// main builds a verb's registration alone (MakeApp(run, verb)): each verb, and each verb
// below it, must read the same there as in the whole tree the pages come from.
bool SameTree(const CLI::App& whole, const CLI::App& alone, const std::string& path) {
  bool same = whole.help() == alone.help();
  if (!same) std::cerr << "imgtool-docgen: '" << path << " --help' differs when its verb is built alone\n";
  for (const CLI::App* sub : whole.get_subcommands({})) {
    const CLI::App* twin = nullptr;
    for (const CLI::App* s : alone.get_subcommands({})) {
      if (s->get_name() == sub->get_name()) twin = s;
    }
    if (twin == nullptr) std::cerr << "imgtool-docgen: '" << path << " " << sub->get_name() << "' missing alone\n";
    same &= twin != nullptr && SameTree(*sub, *twin, path + " " + sub->get_name());
  }
  return same;
}

bool EachVerbAlone(const CLI::App& whole) {
  bool ok = true;
  for (const CLI::App* verb : whole.get_subcommands({})) {
    imgtool::cli::Action run;
    auto alone = imgtool::cli::MakeApp(run, verb->get_name());
    const CLI::App* twin = nullptr;
    for (const CLI::App* s : alone->get_subcommands({})) {
      if (s->get_name() == verb->get_name()) twin = s;
    }
    if (twin == nullptr) std::cerr << "imgtool-docgen: 'imgtool " << verb->get_name() << "' missing alone\n";
    ok &= twin != nullptr && SameTree(*verb, *twin, "imgtool " + verb->get_name());
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: imgtool-docgen OUTDIR\n";
    return 2;
  }
  imgtool::cli::Action run;
  auto app = imgtool::cli::MakeApp(run);
  auto fleet = imgtool::cli::MakeFleetApp(run);
  if (!EachVerbAlone(*app)) return 1;
  const std::string source = "imgtool " IMGTOOL_VERSION;
  bool ok = WriteProgram(*app, {"imgtool", "build, inspect and verify reproducible OCI images", source}, true, argv[1]);
  // imgtool-fleet's verbs are imgtool's: its page points at imgtool-probe(1) and imgtool-fleet-check(1).
  ok &= WriteProgram(*fleet, {"imgtool-fleet", "imgtool's fleet preflight verbs alone, for training images", source},
                     false, argv[1]);
  return ok ? 0 : 1;
}
