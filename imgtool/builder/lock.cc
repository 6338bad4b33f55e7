#include "builder/lock.h"

#include <algorithm>
#include <map>
#include <set>

#include "archive/layer.h"
#include "builder/base_image.h"
#include "builder/base_spec.h"
#include "builder/spec_platforms.h"
#include "fs/atomic_file.h"
#include "fs/hashed_file.h"
#include "fs/safe_open.h"
#include "oci/canonical_json.h"

namespace imgtool::build {

namespace {

using oci::Json;

constexpr int kLockVersion = 1;

std::string Label(const LockInput& in) {
  std::string where = in.platform.empty() ? "" : in.platform + ": ";
  if (!in.layer.empty()) where += "layer " + in.layer + ": ";
  return where + in.kind + " " + in.name;
}

// A file planning saw as regular, hashed from one open that follows nothing planning
// did not (archive::OpenSource, as the layer opens it).
Result<oci::FileDigest> DigestPlannedFile(const archive::Entry& e) {
  auto fd = archive::OpenSource(e);
  if (!fd.ok()) return fd.error();
  fs::HashingReader hashed(std::make_unique<fs::FdReader>(std::move(*fd)));
  return hashed.Finish();
}

Error Bad(const std::string& name, const std::string& what) {
  return MakeError(ErrorKind::kInvalidInput, name + ": " + what + " (rewrite it with `imgtool lock SPEC`)");
}

}  // namespace

std::string LockFileName() { return "imgtool.lock.json"; }

void TagPlatform(Lock& lock, const oci::Platform& platform) {
  for (auto& in : lock.inputs) in.platform = oci::PlatformString(platform);
}

Lock OnlyPlatform(const Lock& lock, const oci::Platform& platform) {
  bool per_platform =
      std::any_of(lock.inputs.begin(), lock.inputs.end(), [](const LockInput& in) { return !in.platform.empty(); });
  if (!per_platform) return lock;
  Lock out;
  for (const auto& in : lock.inputs) {
    if (in.platform == oci::PlatformString(platform)) out.inputs.push_back(in);
  }
  TagPlatform(out, platform);
  return out;
}

Result<Lock> MakeLock(const Spec& spec, const oci::Digest& base_manifest, const std::vector<PlannedLayer>& plans,
                      const KnownDigests& known) {
  Lock lock;
  if (!spec.base.scratch) {
    lock.inputs.push_back({"", "base", "base", "", spec.base.digest, 0, BaseSource(spec.base), base_manifest});
  }
  for (size_t l = 0; l < plans.size() && l < spec.layers.size(); ++l) {
    const PlannedLayer& plan = plans[l];
    for (const auto& p : plan.packages) {
      lock.inputs.push_back({plan.name, PackageKindName(p.kind), p.name, p.version, p.sha256, p.size, p.source, {}});
    }
    std::optional<std::vector<oci::Digest>> digests;
    if (known) digests = known(l);
    for (size_t i = 0; i < plan.entries.size(); ++i) {
      const archive::Entry& e = plan.entries[i];
      if (plan.inputs[i].empty() || e.type != archive::EntryType::kFile) continue;
      LockInput in{plan.name, "file", "/" + e.path, "", {}, e.size, plan.inputs[i], {}};
      if (digests && i < digests->size() && !(*digests)[i].empty()) {
        in.sha256 = (*digests)[i];
      } else {
        auto d = DigestPlannedFile(e);
        if (!d.ok()) return d.error().Context("layer " + plan.name + ": " + plan.inputs[i]);
        if (d->size != e.size) {
          return MakeError(ErrorKind::kIntegrity,
                           "layer " + plan.name + ": " + plan.inputs[i] + " changed while locking");
        }
        in.sha256 = d->digest;
      }
      lock.inputs.push_back(std::move(in));
    }
  }
  return lock;
}

std::string LockJson(const Lock& lock) {
  Json inputs = Json::array();
  for (const auto& in : lock.inputs) {
    Json j = {{"kind", in.kind}, {"name", in.name}, {"sha256", in.sha256.str()}, {"size", in.size}};
    if (!in.layer.empty()) j["layer"] = in.layer;
    if (!in.version.empty()) j["version"] = in.version;
    if (!in.source.empty()) j["source"] = in.source;
    if (!in.manifest.empty()) j["manifest"] = in.manifest.str();
    if (!in.platform.empty()) j["platform"] = in.platform;
    inputs.push_back(std::move(j));
  }
  // Indented so a change reviews as a one-line diff; nlohmann sorts keys, so this is stable.
  Json doc = {{"lockVersion", kLockVersion}, {"inputs", inputs}};
  return doc.dump(2) + "\n";
}

namespace {

// One platform's inputs: its base opened (from the download cache, fetched there when
// missing), its URLs fetched, its packages staged and checked, its files hashed.
Result<Lock> LockImage(Spec spec, const std::string& spec_path, const FetchOptions& fetch,
                       const remote::RegistryOptions& registry) {
  oci::Digest base_manifest;
  if (!spec.base.scratch) {
    auto base = OpenBase(spec, BaseOptions{fetch.cache_dir, registry, fetch.progress});
    if (!base.ok()) return base.error().Context("base image");
    base_manifest = (*base)->digest();
  }
  IMGTOOL_TRY(FetchPackageUrls(spec, fetch));
  std::vector<PlannedLayer> plans;
  for (const auto& layer : spec.layers) {
    auto plan = PlanLayer(layer);
    if (!plan.ok()) return plan.error().Context(spec_path);
    plans.push_back(std::move(*plan));
  }
  return MakeLock(spec, base_manifest, plans);
}

}  // namespace

Result<Lock> LockSpec(const std::string& spec_path, const FetchOptions& fetch, const remote::RegistryOptions& registry,
                      const std::optional<oci::Platform>& only) {
  auto spec = LoadSpec(spec_path);
  if (!spec.ok()) return spec.error();
  std::vector<oci::Platform> platforms = SpecPlatforms(*spec);
  if (only) platforms = {*only};  // ForPlatform names the spec's platforms when it is not one
  Lock lock;
  for (const auto& platform : platforms) {
    auto resolved = ForPlatform(*spec, platform);
    if (!resolved.ok()) return resolved.error().Context(spec_path);
    auto one = LockImage(std::move(*resolved), spec_path, fetch, registry);
    if (!one.ok()) return one.error();
    if (!spec->platforms.empty()) TagPlatform(*one, platform);
    lock.inputs.insert(lock.inputs.end(), one->inputs.begin(), one->inputs.end());
  }
  return lock;
}

Result<Lock> ParseLock(std::string_view text, const std::string& name) {
  auto doc = oci::ParseJson(text, name);
  if (!doc.ok()) return doc.error();
  if (!doc->is_object() || !doc->contains("lockVersion") || !(*doc)["lockVersion"].is_number_integer()) {
    return Bad(name, "not an imgtool lock file (no lockVersion)");
  }
  if ((*doc)["lockVersion"].get<int64_t>() != kLockVersion) {
    return Bad(name, "lockVersion " + (*doc)["lockVersion"].dump() + " is not " + std::to_string(kLockVersion));
  }
  if (!doc->contains("inputs") || !(*doc)["inputs"].is_array()) return Bad(name, "$.inputs: want an array");
  Lock lock;
  const Json& inputs = (*doc)["inputs"];
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Json& j = inputs[i];
    std::string where = "$.inputs[" + std::to_string(i) + "]";
    if (!j.is_object()) return Bad(name, where + ": want an object");
    auto text_of = [&](const char* key, bool required, std::string* out) -> Status {
      if (!j.contains(key)) return required ? Bad(name, where + "." + key + ": required") : Status::Ok();
      if (!j[key].is_string()) return Bad(name, where + "." + key + ": want a string");
      *out = j[key].get<std::string>();
      return Status::Ok();
    };
    LockInput in;
    std::string digest;
    IMGTOOL_TRY(text_of("layer", false, &in.layer));
    IMGTOOL_TRY(text_of("kind", true, &in.kind));
    IMGTOOL_TRY(text_of("name", true, &in.name));
    IMGTOOL_TRY(text_of("version", false, &in.version));
    IMGTOOL_TRY(text_of("source", false, &in.source));
    IMGTOOL_TRY(text_of("platform", false, &in.platform));
    IMGTOOL_TRY(text_of("sha256", true, &digest));
    auto d = oci::Digest::Parse(digest);
    if (!d.ok()) return Bad(name, where + ".sha256: '" + digest + "' is not a sha256 digest");
    in.sha256 = *d;
    std::string manifest;
    IMGTOOL_TRY(text_of("manifest", false, &manifest));
    if (!manifest.empty()) {
      auto m = oci::Digest::Parse(manifest);
      if (!m.ok()) return Bad(name, where + ".manifest: '" + manifest + "' is not a sha256 digest");
      in.manifest = *m;
    } else if (in.kind == "base") {
      in.manifest = in.sha256;  // written before the lock recorded it: the pin is the image
    }
    if (!j.contains("size") || !j["size"].is_number_unsigned()) return Bad(name, where + ".size: want a byte count");
    in.size = j["size"].get<uint64_t>();
    lock.inputs.push_back(std::move(in));
  }
  return lock;
}

Result<Lock> ReadLock(const std::string& path) {
  auto text = fs::ReadSmallFile(path);
  if (!text.ok()) return text.error().Context("lock file (write one with `imgtool lock SPEC`)");
  return ParseLock(*text, path);
}

Status CompareLock(const Lock& locked, const Lock& now, const std::string& lock_name) {
  auto key = [](const LockInput& in) { return Label(in); };
  std::map<std::string, const LockInput*> before;
  for (const auto& in : locked.inputs) before[key(in)] = &in;
  std::vector<std::string> problems;
  std::set<std::string> seen;
  for (const auto& in : now.inputs) {
    seen.insert(key(in));
    auto it = before.find(key(in));
    if (it == before.end()) {
      problems.push_back(Label(in) + ": not in the lock (" + in.sha256.str() + ")");
      continue;
    }
    const LockInput& old = *it->second;
    auto differ = [&](const char* field, const std::string& a, const std::string& b) {
      if (a != b) problems.push_back(Label(in) + ": " + field + " locked '" + a + "', now '" + b + "'");
    };
    differ("version", old.version, in.version);
    differ("sha256", old.sha256.str(), in.sha256.str());
    differ("size", std::to_string(old.size), std::to_string(in.size));
    differ("source", old.source, in.source);
    auto text = [](const oci::Digest& d) { return d.empty() ? std::string() : d.str(); };
    differ("manifest", text(old.manifest), text(in.manifest));
  }
  for (const auto& in : locked.inputs) {
    if (!seen.count(key(in))) problems.push_back(Label(in) + ": locked but no longer an input");
  }
  if (problems.empty()) return Status::Ok();
  std::string msg = std::to_string(problems.size()) + " input" + (problems.size() == 1 ? "" : "s") + " differ from " +
                    lock_name + " (run `imgtool lock SPEC` to accept them):";
  for (const auto& p : problems) msg += "\n  " + p;
  return MakeError(ErrorKind::kIntegrity, msg);
}

}  // namespace imgtool::build
