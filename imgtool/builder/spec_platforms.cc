#include "builder/spec_platforms.h"

#include <algorithm>

namespace imgtool::build {

namespace {

Error Bad(const std::string& where, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, where + ": " + why);
}

bool Contains(const std::vector<oci::Platform>& list, const oci::Platform& p) {
  return std::find(list.begin(), list.end(), p) != list.end();
}

// An entry without a filter is for every platform.
bool AppliesTo(const std::vector<oci::Platform>& filter, const oci::Platform& p) {
  return filter.empty() || Contains(filter, p);
}

std::string Joined(const std::vector<oci::Platform>& list) {
  std::string out;
  for (const auto& p : list) out += (out.empty() ? "" : ", ") + oci::PlatformString(p);
  return out;
}

Status CheckFilter(const std::vector<oci::Platform>& filter, const std::vector<oci::Platform>& platforms,
                   const std::string& where) {
  if (filter.empty()) return Status::Ok();
  if (platforms.empty()) return Bad(where + ".platforms", "the spec names no platforms ($.platforms)");
  for (const auto& p : filter) {
    if (!Contains(platforms, p)) {
      return Bad(where + ".platforms", oci::PlatformString(p) + " is not in $.platforms (" + Joined(platforms) + ")");
    }
  }
  return Status::Ok();
}

template <typename T>
std::vector<T> Filtered(const std::vector<T>& entries, const oci::Platform& p) {
  std::vector<T> out;
  for (const auto& e : entries) {
    if (AppliesTo(e.platforms, p)) out.push_back(e);
  }
  return out;
}

}  // namespace

Result<std::vector<oci::Platform>> ParsePlatformList(const oci::Json& j, const std::string& where) {
  if (!j.is_array() || j.empty())
    return Bad(where, "want a non-empty array such as [\"linux/amd64\", \"linux/arm64\"]");
  std::vector<oci::Platform> out;
  for (size_t i = 0; i < j.size(); ++i) {
    std::string w = where + "[" + std::to_string(i) + "]";
    if (!j[i].is_string()) return Bad(w, "want a string such as \"linux/arm64\"");
    auto p = oci::ParsePlatform(j[i].get<std::string>());
    if (!p.ok()) return p.error().Context(w);
    if (Contains(out, *p)) return Bad(w, oci::PlatformString(*p) + " is listed twice");
    out.push_back(*p);
  }
  return out;
}

Status CheckPlatformFilters(const Spec& spec) {
  for (const auto& layer : spec.layers) {
    IMGTOOL_TRY(CheckFilter(layer.platforms, spec.platforms, layer.where));
    for (const auto& f : layer.files) IMGTOOL_TRY(CheckFilter(f.platforms, spec.platforms, f.where));
    for (const auto& p : layer.packages) IMGTOOL_TRY(CheckFilter(p.platforms, spec.platforms, p.where));
  }
  return Status::Ok();
}

std::vector<oci::Platform> SpecPlatforms(const Spec& spec) {
  return spec.platforms.empty() ? std::vector<oci::Platform>{spec.platform} : spec.platforms;
}

Result<Spec> ForPlatform(const Spec& spec, const oci::Platform& platform) {
  std::vector<oci::Platform> all = SpecPlatforms(spec);
  if (!Contains(all, platform)) {
    return MakeError(ErrorKind::kInvalidInput,
                     "platform " + oci::PlatformString(platform) + ": the spec builds " + Joined(all));
  }
  Spec out = spec;
  out.platform = platform;
  out.platforms.clear();
  out.layers.clear();
  for (const auto& layer : spec.layers) {
    if (!AppliesTo(layer.platforms, platform)) continue;
    LayerSpec l = layer;
    l.files = Filtered(layer.files, platform);
    l.packages = Filtered(layer.packages, platform);
    if (l.files.empty() && l.packages.empty()) {
      return Bad(layer.where, "layer '" + layer.name + "' has no inputs for " + oci::PlatformString(platform) +
                                  " (give the layer a \"platforms\" list)");
    }
    out.layers.push_back(std::move(l));
  }
  return out;
}

}  // namespace imgtool::build
