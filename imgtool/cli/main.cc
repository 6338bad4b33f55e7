// imgtool: reproducible OCI images for GPU training fleets. A thin main: the command tree
// is built in app.cc (which imgtool-docgen also walks), each verb lives in its cmd_*.cc;
// the libraries do the work and never print.
#include "cli/apps.h"
#include "oci/main_guard.h"

int main(int argc, char** argv) {
  return imgtool::RunGuarded("imgtool", [&] {
    imgtool::cli::Action run;
    auto app = imgtool::cli::MakeApp(run, argc > 1 ? argv[1] : "");
    return imgtool::cli::ParseAndRun(*app, run, argc, argv);
  });
}
