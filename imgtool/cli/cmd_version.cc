// imgtool version [--json]: what this binary is, for bug reports and for fleets that must
// run one build of imgtool everywhere (the commit is the build's, cli/build_info.h).
#include <iostream>
#include <memory>

#include "cli/apps.h"
#include "cli/build_info.h"

namespace imgtool::cli {

namespace {

oci::Json VersionJson(const BuildInfo& b) {
  oci::Json features = oci::Json::object();
  for (const auto& [name, value] : b.features) {
    if (value == "yes" || value == "no") {
      features[name] = value == "yes";
    } else {
      features[name] = value;
    }
  }
  return {{"version", b.version},
          {"commit", b.commit},
          {"toolchain", {{"compiler", b.compiler}, {"version", b.compiler_version}}},
          {"features", features}};
}

int RunVersion(bool json) {
  const BuildInfo& b = GetBuildInfo();
  if (json) {
    PrintJson(VersionJson(b));
    return 0;
  }
  std::cout << "imgtool " << b.version << "\ncommit:    " << b.commit << "\ntoolchain: " << b.compiler << " "
            << b.compiler_version << "\nfeatures: ";
  for (const auto& [name, value] : b.features) std::cout << " " << name << "=" << value;
  std::cout << "\n";
  return 0;
}

}  // namespace

void AddVersionCommand(CLI::App& app, Action& run) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("version",
                                     "Print imgtool's version, the commit it was built from, the compiler and the\n"
                                     "optional parts built in (the CUDA trainer) with the versions of the libraries\n"
                                     "that shape its output (zstd, ISA-L, libarchive, OpenSSL).\n\n"
                                     "Examples:\n  imgtool version\n  imgtool version --json | jq -r .commit");
  cmd->add_flag("--json", *json, "Print a JSON object");
  cmd->callback([json, &run] { run = [json] { return RunVersion(*json); }; });
}

}  // namespace imgtool::cli
