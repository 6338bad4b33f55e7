// imgtool-fleet: imgtool's fleet verbs (probe, fleet check) alone, for the trainer image.
// The preflight must run inside the image whose stack it certifies, and that image holds
// only what the trainer links (libc, libstdc++, OpenSSL's libcrypto, zlib, Gloo). The full
// imgtool also links libcurl, libarchive, zstd, ISA-L and their dependencies; this one
// does not, so the golden image carries it as /usr/local/bin/imgtool and the same command
// lines work in a pod and on a workstation. It also starts faster (fewer libraries to
// map), which matters when hundreds of workers start at once. Its command tree is
// fleet_app.cc's. It has no `version` verb: its bytes must not depend on the commit
// (tests/reproducible_binaries.sh builds it from a copy without git).
#include "cli/apps.h"
#include "oci/main_guard.h"

int main(int argc, char** argv) {
  return imgtool::RunGuarded("imgtool", [&] {
    imgtool::cli::Action run;
    auto app = imgtool::cli::MakeFleetApp(run);
    return imgtool::cli::ParseAndRun(*app, run, argc, argv);
  });
}
