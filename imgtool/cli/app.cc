#include <memory>

#include "cli/apps.h"
#include "cli/output.h"

namespace imgtool::cli {

std::unique_ptr<CLI::App> MakeApp(Action& run) {
  auto app = std::make_unique<CLI::App>(
      "imgtool " IMGTOOL_VERSION
      ": build, inspect and verify bit-for-bit reproducible OCI images.\n\n"
      "Images are named as skopeo names them: oci:DIR[:TAG] (an OCI image layout) or\n"
      "oci-archive:FILE[:TAG] (a tar of one) or docker://HOST[:PORT]/REPO[:TAG|@DIGEST] (a registry),\n"
      "or docker-archive:FILE[:NAME:TAG|:@N] (a docker save tarball; its digest is that of the manifest\n"
      "skopeo makes up for it).\n\n"
      "Exit codes: 0 ok; 1 images differ (diff), stacks differ (fleet check); 2 invalid input;\n"
      "3 not found, workers missing (fleet check);\n"
      "4 integrity failure (a blob does not match its digest); 5 denied; 6 transport;\n"
      "70 internal error.",
      "imgtool");
  app->require_subcommand(1);
  app->set_version_flag("--version", "imgtool " IMGTOOL_VERSION);
  AddBuildCommand(*app, run);
  AddLockCommand(*app, run);
  AddInspectCommands(*app, run);
  AddVerifyCommand(*app, run);
  AddVerifyBlobCommand(*app, run);
  AddDiffCommand(*app, run);
  AddCopyCommands(*app, run);
  AddIndexCommands(*app, run);
  AddLoginCommands(*app, run);
  AddSignCommands(*app, run);
  AddPolicyCommands(*app, run);
  AddAdmissionCommands(*app, run);
  AddUnpackCommand(*app, run);
  AddProbeCommand(*app, run);
  AddFleetCommands(*app, run);
  AddVersionCommand(*app, run);
  return app;
}

}  // namespace imgtool::cli
