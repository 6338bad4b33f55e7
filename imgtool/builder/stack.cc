#include "builder/stack.h"

#include <fnmatch.h>

#include <map>

#include "oci/canonical_json.h"

namespace imgtool::build {

namespace {

const std::map<std::string, std::vector<std::string>>& Providers() {
  static const std::map<std::string, std::vector<std::string>> kProviders = {
      {"cuda", {"nvidia-cuda-runtime", "nvidia-cuda-runtime-cu[0-9]*", "cuda-cudart-[0-9]*"}},
      {"cublas", {"nvidia-cublas", "nvidia-cublas-cu[0-9]*", "libcublas-[0-9]*"}},
      {"cudnn", {"nvidia-cudnn-cu[0-9]*", "libcudnn9-cuda-[0-9]*"}},
      {"nccl", {"nvidia-nccl-cu[0-9]*", "libnccl2"}},
  };
  return kProviders;
}

bool Provides(const std::vector<std::string>& patterns, const PackageRecord& p) {
  std::string name = p.kind == PackageKind::kDeb ? p.name : NormalizeWheelName(p.name);
  for (const auto& pat : patterns) {
    if (::fnmatch(pat.c_str(), name.c_str(), 0) == 0) return true;
  }
  return false;
}

// "1:2.28.9-1+cuda13.0" -> "2.28.9"; wheel versions have neither part.
std::string Upstream(const std::string& version) {
  std::string v = version;
  if (auto colon = v.find(':'); colon != std::string::npos) v = v.substr(colon + 1);
  if (auto dash = v.rfind('-'); dash != std::string::npos) v = v.substr(0, dash);
  return v;
}

}  // namespace

bool PinMatches(const std::string& pin, const std::string& package_version) {
  std::string v = Upstream(package_version);
  return v == pin || (v.size() > pin.size() && v.compare(0, pin.size(), pin) == 0 && v[pin.size()] == '.');
}

Result<std::string> StackJson(const Spec& spec, const std::vector<PackageRecord>& packages) {
  oci::Json components = oci::Json::object();
  for (const auto& [name, version] : spec.stack) {
    oci::Json c = {{"version", version}};
    auto it = Providers().find(name);
    std::vector<const PackageRecord*> providers;
    for (const auto& p : packages) {
      if (it != Providers().end() && Provides(it->second, p)) providers.push_back(&p);
    }
    if (providers.empty() && !packages.empty() && it != Providers().end()) {
      std::string looked;
      for (const auto& pat : it->second) looked += (looked.empty() ? "" : ", ") + pat;
      return MakeError(ErrorKind::kInvalidInput, "$.stack." + name + ": '" + version +
                                                     "' is pinned but no package of the spec provides " + name +
                                                     " (looked for " + looked + ")");
    }
    for (const auto* p : providers) {
      if (!PinMatches(version, p->version)) {
        return MakeError(ErrorKind::kIntegrity, "$.stack." + name + ": the spec pins '" + version + "' but " +
                                                    p->where + " (" + p->name + ") is version '" + p->version + "'");
      }
    }
    if (!providers.empty()) {
      const PackageRecord& first = *providers.front();
      c["package"] = first.name;
      c["packageVersion"] = first.version;
      oci::Json libs = oci::Json::array();
      for (const auto* p : providers) {
        for (const auto& l : p->libraries) libs.push_back({{"path", l.path}, {"sha256", l.sha256.str()}});
      }
      c["libraries"] = libs;
    }
    components[name] = c;
  }
  oci::Json j = {{"schemaVersion", 1}, {"components", components}};
  auto s = oci::CanonicalJson(j);
  if (!s.ok()) return s.error();
  return *s + "\n";
}

}  // namespace imgtool::build
