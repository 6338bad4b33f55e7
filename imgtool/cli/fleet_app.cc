#include <memory>

#include "cli/apps.h"

namespace imgtool::cli {

std::unique_ptr<CLI::App> MakeFleetApp(Action& run) {
  auto app = std::make_unique<CLI::App>(
      "imgtool " IMGTOOL_VERSION
      " (fleet verbs only: the build that ships inside training images): prove every worker of\n"
      "a training job runs the same stack before it starts. The full imgtool has every verb.\n\n"
      "Exit codes: 0 ok; 1 stacks differ; 2 invalid input; 3 not found or workers missing;\n"
      "6 transport; 70 internal error.",
      "imgtool");
  app->require_subcommand(1);
  app->set_version_flag("--version", "imgtool " IMGTOOL_VERSION " (fleet)");
  AddProbeCommand(*app, run);
  AddFleetCommands(*app, run);
  return app;
}

}  // namespace imgtool::cli
