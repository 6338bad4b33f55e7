// imgtool inspect REF / imgtool digest REF: look inside an image, an artifact or an
// index without unpacking it (open -> [--platform: the index's child] -> view).
#include <iomanip>
#include <iostream>

#include "cli/output.h"
#include "cli/remote_flags.h"
#include "oci/image_config.h"

namespace imgtool::cli {

namespace {

struct InspectFlags {
  std::string ref;
  std::string platform;
  bool json = false;
  bool raw = false;
  bool config = false;
  RemoteFlags remote;
};

std::string Join(const std::vector<std::string>& v) {
  oci::Json j = v;
  return j.dump();
}

// The config of an image whose summary is printed: RunInspect refused an image without
// one; an artifact may have none (its layers then have no createdBy).
const oci::Json& ConfigOrEmpty(const oci::Image& img) {
  static const oci::Json kEmpty = oci::Json::object();
  return img.config().ok() ? *img.config() : kEmpty;
}

oci::Json LayersJson(const oci::Image& img) {
  const oci::Json& cfg = ConfigOrEmpty(img);
  std::vector<std::string> created_by;
  if (cfg.contains("history") && cfg["history"].is_array()) {
    for (const auto& h : cfg["history"]) {
      if (!h.is_object() || (h.contains("empty_layer") && h["empty_layer"] == true)) continue;
      created_by.push_back(oci::ConfigField(h, "created_by"));
    }
  }
  oci::Json layers = oci::Json::array();
  auto ls = img.layers();
  for (size_t i = 0; i < ls.size(); ++i) {
    oci::Json l = {{"digest", ls[i]->digest().str()},
                   {"size", ls[i]->size()},
                   {"mediaType", ls[i]->media_type()},
                   {"createdBy", i < created_by.size() ? created_by[i] : ""}};
    if (!ls[i]->diff_id().empty()) l["diffId"] = ls[i]->diff_id().str();
    if (!ls[i]->descriptor().annotations.empty()) l["annotations"] = ls[i]->descriptor().annotations;
    layers.push_back(l);
  }
  return layers;
}

oci::Json ImageSummary(const std::string& ref, const oci::Image& img) {
  const oci::Json& cfg = ConfigOrEmpty(img);
  oci::Json s = {{"reference", ref},
                 {"digest", img.digest().str()},
                 {"mediaType", img.manifest().media_type},
                 {"config", oci::DescriptorToJson(img.manifest().config)},
                 {"annotations", img.manifest().annotations},
                 {"layers", LayersJson(img)}};
  if (img.manifest().subject) s["subject"] = oci::DescriptorToJson(*img.manifest().subject);
  if (img.is_artifact()) {
    s["artifactType"] = img.artifact_type();
    return s;
  }
  s.update({{"created", oci::ConfigField(cfg, "created")},
            {"os", oci::ConfigField(cfg, "os")},
            {"architecture", oci::ConfigField(cfg, "architecture")},
            {"variant", oci::ConfigField(cfg, "variant")},
            {"user", oci::ConfigUser(cfg)},
            {"env", oci::ConfigStringList(cfg, "Env")},
            {"entrypoint", oci::ConfigStringList(cfg, "Entrypoint")},
            {"cmd", oci::ConfigStringList(cfg, "Cmd")},
            {"workingDir", cfg.contains("config") ? oci::ConfigField(cfg["config"], "WorkingDir") : ""},
            {"labels", oci::ConfigLabels(cfg)}});
  return s;
}

oci::Json IndexSummary(const std::string& ref, const oci::ImageIndex& idx) {
  oci::Json manifests = oci::Json::array();
  for (const auto& c : idx.children()) {
    oci::Json m = oci::DescriptorToJson(c);
    if (c.platform) m["platform"] = oci::PlatformString(*c.platform);
    manifests.push_back(m);
  }
  oci::Json s = {{"reference", ref},
                 {"digest", idx.digest().str()},
                 {"mediaType", idx.descriptor().media_type},
                 {"annotations", idx.index().annotations},
                 {"manifests", manifests}};
  if (!idx.index().artifact_type.empty()) s["artifactType"] = idx.index().artifact_type;
  return s;
}

void PrintIndex(const oci::Json& s) {
  std::cout << "Reference:    " << s["reference"].get<std::string>() << "\n"
            << "Digest:       " << s["digest"].get<std::string>() << "\n"
            << "MediaType:    " << s["mediaType"].get<std::string>() << "\n"
            << "Manifests:\n";
  for (const auto& m : s["manifests"]) {
    std::string platform = m.contains("platform") ? m["platform"].get<std::string>() : "-";
    std::cout << "  " << std::left << std::setw(16) << platform << " " << m["digest"].get<std::string>() << "  "
              << HumanBytes(m["size"].get<uint64_t>()) << "  " << m["mediaType"].get<std::string>() << "\n";
  }
}

void PrintLayers(const oci::Json& s, const char* title) {
  std::cout << title << "\n";
  int n = 1;
  for (const auto& l : s["layers"]) {
    std::cout << "  " << n++ << "  " << l["digest"].get<std::string>() << "  " << HumanBytes(l["size"].get<uint64_t>())
              << "  " << l["mediaType"].get<std::string>() << "  " << l["createdBy"].get<std::string>() << "\n";
  }
}

void PrintArtifact(const oci::Json& s) {
  std::cout << "Reference:    " << s["reference"].get<std::string>() << "\n"
            << "Digest:       " << s["digest"].get<std::string>() << "\n"
            << "ArtifactType: " << s["artifactType"].get<std::string>() << "\n"
            << "Config:       " << s["config"]["mediaType"].get<std::string>() << "\n";
  if (s.contains("subject")) std::cout << "Subject:      " << s["subject"]["digest"].get<std::string>() << "\n";
  std::cout << "Annotations:\n";
  for (const auto& [k, v] : s["annotations"].items()) std::cout << "  " << k << "=" << v.get<std::string>() << "\n";
  PrintLayers(s, "Blobs:");
}

void PrintImage(const oci::Json& s) {
  std::string platform = s["os"].get<std::string>() + "/" + s["architecture"].get<std::string>();
  if (!s["variant"].get<std::string>().empty()) platform += "/" + s["variant"].get<std::string>();
  std::cout << "Reference:    " << s["reference"].get<std::string>() << "\n"
            << "Digest:       " << s["digest"].get<std::string>() << "\n"
            << "Created:      " << s["created"].get<std::string>() << "\n"
            << "Platform:     " << platform << "\n"
            << "User:         " << s["user"].get<std::string>() << "\n"
            << "WorkingDir:   " << s["workingDir"].get<std::string>() << "\n"
            << "Entrypoint:   " << Join(s["entrypoint"]) << "\n"
            << "Cmd:          " << Join(s["cmd"]) << "\n";
  std::cout << "Env:\n";
  for (const auto& e : s["env"]) std::cout << "  " << e.get<std::string>() << "\n";
  std::cout << "Labels:\n";
  for (const auto& [k, v] : s["labels"].items()) std::cout << "  " << k << "=" << v.get<std::string>() << "\n";
  PrintLayers(s, "Layers:");
}

// Opens the reference and, with --platform, the index's child for it.
Result<oci::Node> OpenSelected(const std::string& ref, const std::string& platform, const RemoteFlags& remote) {
  auto p = PlatformFlag(platform);
  if (!p.ok()) return p.error();
  auto opened = transport::Open(ref, ToRegistryOptions(remote));
  if (!opened.ok()) return opened.error();
  return transport::SelectPlatform(opened->node, *p);
}

int RunInspect(const InspectFlags& f) {
  auto node = OpenSelected(f.ref, f.platform, f.remote);
  if (!node.ok()) return Fail(node.error());
  // --raw / --config print the exact bytes, as skopeo inspect --raw / --config do.
  if (f.raw) {
    std::cout << (node->is_index() ? node->index->raw_manifest() : node->image->raw_manifest());
    return 0;
  }
  if (f.config) {
    if (node->is_index()) {
      return Fail(
          MakeError(ErrorKind::kInvalidInput, f.ref + ": an index has no config; pick an image with --platform"));
    }
    if (!node->image->raw_config().ok()) return Fail(node->image->raw_config().error());
    std::cout << *node->image->raw_config();
    return 0;
  }
  // An image's summary is its config's: without one it would show nothing true.
  if (node->image && !node->image->is_artifact() && !node->image->config().ok()) {
    return Fail(node->image->config().error());
  }
  oci::Json s = node->is_index() ? IndexSummary(f.ref, *node->index) : ImageSummary(f.ref, *node->image);
  if (f.json) {
    PrintJson(s);
  } else if (node->is_index()) {
    PrintIndex(s);
  } else if (node->image->is_artifact()) {
    PrintArtifact(s);
  } else {
    PrintImage(s);
  }
  return 0;
}

const char* kRefHelp =
    "oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:NAME:TAG|:@N] or docker://[HOST/]REPO[:TAG|@DIGEST]";

}  // namespace

void AddInspectCommands(CLI::App& app, Action& run) {
  auto f = std::make_shared<InspectFlags>();
  CLI::App* inspect =
      app.add_subcommand("inspect",
                         "Show what a reference names: an image's digest, platform, config (user, env,\n"
                         "entrypoint, labels) and layers; an index's platforms; an artifact's type and blobs.\n"
                         "Pipeline: open -> [--platform: the index's image] -> view.\n\n"
                         "Examples:\n  imgtool inspect oci:out/golden:latest --json | jq .layers\n"
                         "  imgtool inspect docker://127.0.0.1:5000/golden:multi                 # lists platforms\n"
                         "  imgtool inspect --platform linux/arm64 docker://127.0.0.1:5000/golden:multi");
  inspect->add_option("ref", f->ref, kRefHelp)->required();
  AddRemoteFlags(inspect, f->remote);
  inspect->add_option("--platform", f->platform, "For an index: the image for OS/ARCH[/VARIANT]");
  inspect->add_flag("--json", f->json, "Print a JSON object");
  inspect->add_flag("--raw", f->raw, "Print the manifest's exact bytes");
  inspect->add_flag("--config", f->config, "Print the config's exact bytes");
  inspect->callback([f, &run] { run = [f] { return RunInspect(*f); }; });

  auto d = std::make_shared<InspectFlags>();
  CLI::App* digest =
      app.add_subcommand("digest",
                         "Print the digest of what a reference names (sha256 of the manifest's or index's\n"
                         "exact bytes); --platform: of the index's image for that platform.\n\n"
                         "Examples:\n  imgtool digest oci:out/golden:latest\n"
                         "  imgtool digest --platform linux/amd64 docker://127.0.0.1:5000/golden:multi");
  digest->add_option("ref", d->ref, kRefHelp)->required();
  AddRemoteFlags(digest, d->remote);
  digest->add_option("--platform", d->platform, "For an index: the image for OS/ARCH[/VARIANT]");
  digest->callback([d, &run] {
    run = [d] {
      auto node = OpenSelected(d->ref, d->platform, d->remote);
      if (!node.ok()) return Fail(node.error());
      std::cout << node->descriptor.digest.str() << "\n";
      return 0;
    };
  });
}

}  // namespace imgtool::cli
