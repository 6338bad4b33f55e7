// imgtool: reproducible OCI images for GPU training fleets. A thin main: each verb
// lives in its own cmd_*.cc; the libraries do the work and never print.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/output.h"

int main(int argc, char** argv) {
  CLI::App app{"imgtool " IMGTOOL_VERSION
               ": build, inspect and verify bit-for-bit reproducible OCI images.\n\n"
               "Images are named as skopeo names them: oci:DIR[:TAG] (an OCI image layout) or\n"
               "oci-archive:FILE[:TAG] (a tar of one) or docker://HOST[:PORT]/REPO[:TAG|@DIGEST] (a registry),\n"
               "or docker-archive:FILE[:NAME:TAG|:@N] (a docker save tarball; its digest is that of the manifest\n"
               "skopeo makes up for it).\n\n"
               "Exit codes: 0 ok; 1 images differ (diff), stacks differ (fleet check); 2 invalid input;\n"
               "3 not found, workers missing (fleet check);\n"
               "4 integrity failure (a blob does not match its digest); 5 denied; 6 transport;\n"
               "70 internal error.",
               "imgtool"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "imgtool " IMGTOOL_VERSION);
  imgtool::cli::Action run;
  imgtool::cli::AddBuildCommand(app, run);
  imgtool::cli::AddLockCommand(app, run);
  imgtool::cli::AddInspectCommands(app, run);
  imgtool::cli::AddVerifyCommand(app, run);
  imgtool::cli::AddVerifyBlobCommand(app, run);
  imgtool::cli::AddDiffCommand(app, run);
  imgtool::cli::AddCopyCommands(app, run);
  imgtool::cli::AddIndexCommands(app, run);
  imgtool::cli::AddLoginCommands(app, run);
  imgtool::cli::AddSignCommands(app, run);
  imgtool::cli::AddPolicyCommands(app, run);
  imgtool::cli::AddAdmissionCommands(app, run);
  imgtool::cli::AddUnpackCommand(app, run);
  imgtool::cli::AddProbeCommand(app, run);
  imgtool::cli::AddFleetCommands(app, run);
  return imgtool::cli::ParseAndRun(app, run, argc, argv);
}
