// imgtool index create DEST IMAGE... / imgtool index append [--base IDX] DEST IMAGE...:
// assemble a multi-platform index from images (crane's `index append`). Pipeline: open
// each image -> write it (and its signatures) into DEST's repository -> write the index
// naming each with its platform -> tag DEST.
#include <iostream>

#include "cli/output.h"
#include "cli/remote_flags.h"
#include "transport/index.h"

namespace imgtool::cli {

namespace {

struct IndexFlags {
  std::string dest;
  std::vector<std::string> images;
  std::string base;
  std::vector<std::string> annotations;  // KEY=VALUE
  RemoteFlags remote;
  bool no_artifacts = false;
  bool json = false;
};

Result<std::map<std::string, std::string>> Annotations(const std::vector<std::string>& kvs) {
  std::map<std::string, std::string> out;
  for (const auto& a : kvs) {
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      return MakeError(ErrorKind::kInvalidInput, "--annotation " + a + ": want KEY=VALUE");
    out[a.substr(0, eq)] = a.substr(eq + 1);
  }
  return out;
}

int RunIndex(const IndexFlags& f, bool append) {
  auto dst = ref::ParseReference(f.dest);
  if (!dst.ok()) return Fail(dst.error());
  std::vector<ref::Reference> images;
  for (const auto& i : f.images) {
    auto r = ref::ParseReference(i);
    if (!r.ok()) return Fail(r.error());
    images.push_back(*r);
  }
  transport::IndexOptions opts;
  opts.copy.source = ToRegistryOptions(f.remote);
  opts.copy.destination.registry = ToRegistryOptions(f.remote);
  opts.copy.destination.upload.state_dir = remote::DefaultUploadStateDir();
  opts.copy.artifacts = !f.no_artifacts;
  auto ann = Annotations(f.annotations);
  if (!ann.ok()) return Fail(ann.error());
  opts.annotations = *ann;
  if (append) {
    auto base = ref::ParseReference(f.base.empty() ? f.dest : f.base);
    if (!base.ok()) return Fail(base.error().Context("--base"));
    opts.base = *base;
  }
  auto report = transport::AssembleIndex(images, *dst, opts);
  if (!report.ok()) return Fail(report.error());
  if (f.json) {
    oci::Json entries = oci::Json::array();
    for (const auto& e : report->entries) {
      oci::Json j = oci::DescriptorToJson(e);
      if (e.platform) j["platform"] = oci::PlatformString(*e.platform);
      entries.push_back(j);
    }
    PrintJson({{"reference", f.dest},
               {"digest", report->digest.str()},
               {"manifests", entries},
               {"artifacts", report->artifacts}});
    return 0;
  }
  for (const auto& e : report->entries) {
    std::cerr << "  " << (e.platform ? oci::PlatformString(*e.platform) : std::string("-")) << "  " << e.digest.str()
              << "\n";
  }
  std::cout << report->digest.str() << "\n";
  return 0;
}

void AddIndexVerb(CLI::App* index, Action& run, bool append) {
  auto f = std::make_shared<IndexFlags>();
  const char* help =
      append ? "Add images to an existing index (DEST itself, or --base) and write the new index to DEST.\n\n"
               "Example:\n  imgtool index append oci:out/golden:multi oci:out/golden-riscv:v1\n"
               "  imgtool index append --base docker://127.0.0.1:5000/golden:multi \\\n"
               "      docker://127.0.0.1:5000/golden:multi2 oci:out/golden-arm64:v1"
             : "Write an index naming each image with the platform its config states; each image (with\n"
               "its signatures, unless --no-artifacts) is copied into DEST's repository first.\n\n"
               "Example:\n  imgtool index create oci:out/golden:multi oci:out/golden-amd64:v1 oci:out/golden-arm64:v1";
  CLI::App* cmd = index->add_subcommand(append ? "append" : "create", help);
  cmd->add_option("dest", f->dest, "Where the index goes: oci:DIR[:TAG], oci-archive:FILE[:TAG], docker://REPO[:TAG]")
      ->required();
  cmd->add_option("images", f->images, "Images (or indexes) to name, any transport")->required(!append);
  if (append) cmd->add_option("--base", f->base, "The index to start from (default: DEST)");
  cmd->add_option("--annotation,-a", f->annotations, "KEY=VALUE annotation on the index; repeatable");
  AddRemoteFlags(cmd, f->remote);
  cmd->add_flag("--no-artifacts", f->no_artifacts, "Do not copy the images' sha256-<hex>.sig/.att/.sbom tags");
  cmd->add_flag("--json", f->json, "Print a JSON object");
  cmd->callback([f, &run, append] { run = [f, append] { return RunIndex(*f, append); }; });
}

}  // namespace

void AddIndexCommands(CLI::App& app, Action& run) {
  CLI::App* index = app.add_subcommand(
      "index",
      "Assemble multi-platform indexes from images (crane's `index append`).\n\n"
      "Examples:\n  imgtool index create oci:out/golden:multi oci:out/golden-amd64:v1 oci:out/golden-arm64:v1\n"
      "  imgtool index append oci:out/golden:multi oci:out/golden-riscv:v1");
  index->require_subcommand(1);
  AddIndexVerb(index, run, false);
  AddIndexVerb(index, run, true);
}

}  // namespace imgtool::cli
