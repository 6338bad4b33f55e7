// imgtool-docgen OUTDIR: imgtool's and imgtool-fleet's man pages (OUTDIR/man/*.1) and
// shell completions (OUTDIR/bash/, OUTDIR/zsh/) from the same command trees main()
// parses (app.cc, fleet_app.cc). Run at build time by the target imgtool_docs, which
// compresses the pages; installed by cmake --install (README, "Install").
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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: imgtool-docgen OUTDIR\n";
    return 2;
  }
  imgtool::cli::Action run;
  auto app = imgtool::cli::MakeApp(run);
  auto fleet = imgtool::cli::MakeFleetApp(run);
  const std::string source = "imgtool " IMGTOOL_VERSION;
  bool ok = WriteProgram(*app, {"imgtool", "build, inspect and verify reproducible OCI images", source}, true, argv[1]);
  // imgtool-fleet's verbs are imgtool's: its page points at imgtool-probe(1) and imgtool-fleet-check(1).
  ok &= WriteProgram(*fleet, {"imgtool-fleet", "imgtool's fleet preflight verbs alone, for training images", source},
                     false, argv[1]);
  return ok ? 0 : 1;
}
