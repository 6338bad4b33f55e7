#include <memory>

#include "cli/apps.h"
#include "cli/output.h"

namespace imgtool::cli {

namespace {

// Each registration with the verbs it adds, in the order of `imgtool --help`. A command
// line naming one of these verbs first builds that registration alone: the whole tree
// (28 verbs, with their options and validators) was ~0.6 ms of a 5 ms `imgtool digest`.
// imgtool-docgen checks that each verb's tree built alone equals the whole tree's.
struct Registration {
  const char* verbs[5];
  void (*add)(CLI::App&, Action&);
};
constexpr Registration kRegistrations[] = {
    {{"build"}, AddBuildCommand},
    {{"lock"}, AddLockCommand},
    {{"inspect", "digest"}, AddInspectCommands},
    {{"verify"}, AddVerifyCommand},
    {{"verify-blob"}, AddVerifyBlobCommand},
    {{"diff"}, AddDiffCommand},
    {{"copy", "push", "pull", "resolve", "tags"}, AddCopyCommands},
    {{"index"}, AddIndexCommands},
    {{"login", "logout"}, AddLoginCommands},
    {{"keygen", "sign", "attest"}, AddSignCommands},
    {{"policy", "lint"}, AddPolicyCommands},
    {{"admission"}, AddAdmissionCommands},
    {{"unpack"}, AddUnpackCommand},
    {{"probe"}, AddProbeCommand},
    {{"fleet"}, AddFleetCommands},
    {{"version"}, AddVersionCommand},
};

const Registration* RegistrationOf(std::string_view verb) {
  for (const auto& r : kRegistrations) {
    for (const char* v : r.verbs) {
      if (v != nullptr && verb == v) return &r;
    }
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<CLI::App> MakeApp(Action& run, std::string_view verb) {
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
  const Registration* only = RegistrationOf(verb);
  for (const auto& r : kRegistrations) {
    if (only == nullptr || only == &r) r.add(*app, run);
  }
  return app;
}

}  // namespace imgtool::cli
