// imgtool-fleet: imgtool's fleet verbs (probe, fleet check) alone, for the trainer image.
// The preflight must run inside the image whose stack it certifies, and that image holds
// only what the trainer links (libc, libstdc++, OpenSSL's libcrypto, zlib, Gloo). The full
// imgtool also links libcurl, libarchive, zstd, ISA-L and their dependencies; this one
// does not, so the golden image carries it as /usr/local/bin/imgtool and the same command
// lines work in a pod and on a workstation. It also starts faster (fewer libraries to
// map), which matters when hundreds of workers start at once.
#include <CLI/CLI.hpp>

#include "cli/common.h"

int main(int argc, char** argv) {
  CLI::App app{"imgtool " IMGTOOL_VERSION
               " (fleet verbs only: the build that ships inside training images): prove every worker of\n"
               "a training job runs the same stack before it starts. The full imgtool has every verb.\n\n"
               "Exit codes: 0 ok; 1 stacks differ; 2 invalid input; 3 not found or workers missing;\n"
               "6 transport; 70 internal error.",
               "imgtool"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "imgtool " IMGTOOL_VERSION " (fleet)");
  imgtool::cli::Action run;
  imgtool::cli::AddProbeCommand(app, run);
  imgtool::cli::AddFleetCommands(app, run);
  return imgtool::cli::ParseAndRun(app, run, argc, argv);
}
