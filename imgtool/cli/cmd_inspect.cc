// imgtool inspect REF / imgtool digest REF: look inside an image without unpacking it.
#include <iostream>

#include "cli/output.h"
#include "cli/remote_flags.h"
#include "oci/image_config.h"

namespace imgtool::cli {

namespace {

struct InspectFlags {
  std::string ref;
  bool json = false;
  bool raw = false;
  bool config = false;
  RemoteFlags remote;
};

std::string Join(const std::vector<std::string>& v) {
  oci::Json j = v;
  return j.dump();
}

oci::Json Summary(const std::string& ref, const oci::Image& img) {
  const oci::Json& cfg = img.config();
  oci::Json layers = oci::Json::array();
  auto history = cfg.value("history", oci::Json::array());
  std::vector<std::string> created_by;
  for (const auto& h : history) {
    if (!h.value("empty_layer", false)) created_by.push_back(h.value("created_by", std::string()));
  }
  auto ls = img.layers();
  for (size_t i = 0; i < ls.size(); ++i) {
    layers.push_back({{"digest", ls[i]->digest().str()},
                      {"diffId", ls[i]->diff_id().str()},
                      {"size", ls[i]->size()},
                      {"mediaType", ls[i]->media_type()},
                      {"createdBy", i < created_by.size() ? created_by[i] : ""}});
  }
  return {{"reference", ref},
          {"digest", img.digest().str()},
          {"mediaType", img.manifest().media_type},
          {"config", oci::DescriptorToJson(img.manifest().config)},
          {"created", cfg.value("created", std::string())},
          {"os", cfg.value("os", std::string())},
          {"architecture", cfg.value("architecture", std::string())},
          {"user", oci::ConfigUser(cfg)},
          {"env", oci::ConfigStringList(cfg, "Env")},
          {"entrypoint", oci::ConfigStringList(cfg, "Entrypoint")},
          {"cmd", oci::ConfigStringList(cfg, "Cmd")},
          {"workingDir", cfg.contains("config") ? cfg["config"].value("WorkingDir", std::string()) : ""},
          {"labels", oci::ConfigLabels(cfg)},
          {"annotations", img.manifest().annotations},
          {"layers", layers}};
}

int RunInspect(const InspectFlags& f) {
  auto opened = OpenRef(f.ref, ToRegistryOptions(f.remote));
  if (!opened.ok()) return Fail(opened.error());
  const oci::Image& img = *opened->image;
  // --raw / --config print the exact bytes, as skopeo inspect --raw / --config do.
  if (f.raw) {
    std::cout << img.raw_manifest();
    return 0;
  }
  if (f.config) {
    std::cout << img.raw_config();
    return 0;
  }
  oci::Json s = Summary(f.ref, img);
  if (f.json) {
    PrintJson(s);
    return 0;
  }
  std::cout << "Reference:    " << f.ref << "\n"
            << "Digest:       " << s["digest"].get<std::string>() << "\n"
            << "Created:      " << s["created"].get<std::string>() << "\n"
            << "Platform:     " << s["os"].get<std::string>() << "/" << s["architecture"].get<std::string>() << "\n"
            << "User:         " << s["user"].get<std::string>() << "\n"
            << "WorkingDir:   " << s["workingDir"].get<std::string>() << "\n"
            << "Entrypoint:   " << Join(s["entrypoint"]) << "\n"
            << "Cmd:          " << Join(s["cmd"]) << "\n";
  std::cout << "Env:\n";
  for (const auto& e : s["env"]) std::cout << "  " << e.get<std::string>() << "\n";
  std::cout << "Labels:\n";
  for (const auto& [k, v] : s["labels"].items()) std::cout << "  " << k << "=" << v.get<std::string>() << "\n";
  std::cout << "Layers:\n";
  int n = 1;
  for (const auto& l : s["layers"]) {
    std::cout << "  " << n++ << "  " << l["digest"].get<std::string>() << "  " << HumanBytes(l["size"].get<uint64_t>())
              << "  " << l["mediaType"].get<std::string>() << "  " << l["createdBy"].get<std::string>() << "\n";
  }
  return 0;
}

}  // namespace

void AddInspectCommands(CLI::App& app, Action& run) {
  auto f = std::make_shared<InspectFlags>();
  CLI::App* inspect = app.add_subcommand(
      "inspect",
      "Show an image's digest, config (user, env, entrypoint, labels) and layers.\n\n"
      "Example:\n  imgtool inspect oci:out/golden:latest --json | jq .layers");
  inspect->add_option("ref", f->ref, "oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker://HOST/REPO[:TAG|@DIGEST]")
      ->required();
  AddRemoteFlags(inspect, f->remote);
  inspect->add_flag("--json", f->json, "Print a JSON object");
  inspect->add_flag("--raw", f->raw, "Print the manifest's exact bytes");
  inspect->add_flag("--config", f->config, "Print the config's exact bytes");
  inspect->callback([f, &run] { run = [f] { return RunInspect(*f); }; });

  auto ref = std::make_shared<std::string>();
  auto remote_flags = std::make_shared<RemoteFlags>();
  CLI::App* digest = app.add_subcommand(
      "digest", "Print the manifest digest of an image (sha256 of the manifest's exact bytes).");
  digest->add_option("ref", *ref, "oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker://HOST/REPO[:TAG|@DIGEST]")
      ->required();
  AddRemoteFlags(digest, *remote_flags);
  digest->callback([ref, remote_flags, &run] {
    run = [ref, remote_flags] {
      auto opened = OpenRef(*ref, ToRegistryOptions(*remote_flags));
      if (!opened.ok()) return Fail(opened.error());
      std::cout << opened->image->digest().str() << "\n";
      return 0;
    };
  });
}

}  // namespace imgtool::cli
