// imgtool diff A B: which config fields, layers and paths differ between two images.
#include <iostream>

#include "check/diff.h"
#include "cli/output.h"

namespace imgtool::cli {

namespace {

struct DiffFlags {
  std::string a;
  std::string b;
  bool json = false;
};

int RunDiff(const DiffFlags& f) {
  auto a = OpenRef(f.a);
  if (!a.ok()) return Fail(a.error());
  auto b = OpenRef(f.b);
  if (!b.ok()) return Fail(b.error());
  auto d = check::DiffImages(*a->image, *b->image);
  if (!d.ok()) return Fail(d.error());
  if (f.json) {
    oci::Json config = oci::Json::array();
    for (const auto& c : d->config) config.push_back({{"path", c.path}, {"a", c.a}, {"b", c.b}});
    oci::Json layers = oci::Json::array();
    for (const auto& l : d->layers) {
      oci::Json changes = oci::Json::array();
      for (const auto& c : l.changes) changes.push_back({{"path", "/" + c.path}, {"field", c.field}, {"a", c.a}, {"b", c.b}});
      layers.push_back({{"index", l.index}, {"a", l.a_digest}, {"b", l.b_digest}, {"changes", changes}});
    }
    PrintJson({{"a", d->a_digest}, {"b", d->b_digest}, {"identical", d->identical()}, {"config", config}, {"layers", layers}});
  } else if (d->identical()) {
    std::cout << "identical: " << d->a_digest << "\n";
  } else {
    std::cout << "--- " << f.a << " " << d->a_digest << "\n+++ " << f.b << " " << d->b_digest << "\n";
    for (const auto& c : d->config) std::cout << "config " << c.path << ": " << c.a << " -> " << c.b << "\n";
    for (const auto& l : d->layers) {
      std::cout << "layer " << l.index << ": " << (l.a_digest.empty() ? "(none)" : l.a_digest) << " -> "
                << (l.b_digest.empty() ? "(none)" : l.b_digest) << "\n";
      for (const auto& c : l.changes) {
        if (c.field == "added") {
          std::cout << "  + /" << c.path << " (" << c.b << ")\n";
        } else if (c.field == "removed") {
          std::cout << "  - /" << c.path << " (" << c.a << ")\n";
        } else {
          std::cout << "  ~ /" << c.path << " " << c.field << ": " << c.a << " -> " << c.b << "\n";
        }
      }
    }
  }
  return d->identical() ? 0 : 1;
}

}  // namespace

void AddDiffCommand(CLI::App& app, Action& run) {
  auto f = std::make_shared<DiffFlags>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "Explain why two images differ: config fields (as JSON pointers), then each\n"
      "differing layer and, inside it, each path whose presence, type, content digest,\n"
      "mode, owner, mtime or link target changed. Exit 0 identical, 1 different.\n\n"
      "Example:\n  imgtool diff oci:ci-build:latest oci:my-build:latest");
  cmd->add_option("a", f->a, "First image (oci:DIR[:TAG] or oci-archive:FILE[:TAG])")->required();
  cmd->add_option("b", f->b, "Second image")->required();
  cmd->add_flag("--json", f->json, "Print a JSON object");
  cmd->callback([f, &run] { run = [f] { return RunDiff(*f); }; });
}

}  // namespace imgtool::cli
