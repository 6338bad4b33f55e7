#include "builder/provenance.h"

#include <algorithm>

#include "builder/builder.h"
#include "builder/sbom.h"
#include "builder/spec.h"
#include "fs/atomic_file.h"
#include "oci/canonical_json.h"
#include "ref/url.h"
#include "transport/open.h"

namespace imgtool::build {

namespace {

using oci::Json;

std::string Env(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

Json Sha256(const oci::Digest& d) { return {{"sha256", d.hex()}}; }

// A lock input as a SLSA ResourceDescriptor: what it is (annotations), where it came
// from (uri, without credentials), its digest. A size is bytes; a base's is not known.
Json Dependency(const LockInput& in) {
  Json annotations = {{"kind", in.kind}};
  if (!in.layer.empty()) annotations["layer"] = in.layer;
  if (!in.version.empty()) annotations["version"] = in.version;
  if (!in.platform.empty()) annotations["platform"] = in.platform;
  if (!in.manifest.empty()) annotations["manifest"] = in.manifest.str();
  if (in.kind != "base") annotations["size"] = in.size;
  Json d = {{"name", in.name}, {"digest", Sha256(in.sha256)}, {"annotations", annotations}};
  if (std::string uri = ref::WithoutUserinfo(in.source); !uri.empty()) d["uri"] = uri;
  return d;
}

Json ExternalParameters(const ProvenanceInput& in) {
  return {{"spec", {{"name", in.spec_name}, {"digest", Sha256(in.spec_digest)}}},
          {"platforms", in.platforms},
          {"compression", in.compression},
          {"sourceDateEpoch", in.epoch},
          {"locked", in.locked}};
}

Json InternalParameters(const ProvenanceInput& in) {
  Json toolchains = Json::array();
  for (const auto& t : in.toolchains) {
    Json one = {{"layer", t.layer}, {"path", t.path}, {"toolchain", t.toolchain}};
    if (!t.platform.empty()) one["platform"] = t.platform;
    toolchains.push_back(std::move(one));
  }
  return {{"imgtool", {{"version", in.tool_version}}}, {"toolchains", toolchains}};
}

Json RunDetails(const ProvenanceInput& in) {
  Json byproducts = Json::array();
  for (const auto& b : in.byproducts) {
    byproducts.push_back({{"name", b.name}, {"mediaType", b.media_type}, {"digest", Sha256(b.digest)}});
  }
  Json run = {{"builder", {{"id", in.builder.id}, {"version", {{"imgtool", in.tool_version}}}}},
              {"byproducts", byproducts}};
  if (!in.builder.invocation_id.empty()) run["metadata"] = {{"invocationId", in.builder.invocation_id}};
  return run;
}

}  // namespace

BuilderIdentity BuilderFrom(const std::string& flag, const std::map<std::string, std::string>& env) {
  auto e = [&](const char* name) { return Env(env, name); };
  BuilderIdentity b;
  if (e("GITHUB_ACTIONS") == "true" && !e("GITHUB_SERVER_URL").empty() && !e("GITHUB_WORKFLOW_REF").empty()) {
    b.id = e("GITHUB_SERVER_URL") + "/" + e("GITHUB_WORKFLOW_REF");
    if (!e("GITHUB_REPOSITORY").empty() && !e("GITHUB_RUN_ID").empty()) {
      b.invocation_id = e("GITHUB_SERVER_URL") + "/" + e("GITHUB_REPOSITORY") + "/actions/runs/" + e("GITHUB_RUN_ID");
      if (!e("GITHUB_RUN_ATTEMPT").empty()) b.invocation_id += "/attempts/" + e("GITHUB_RUN_ATTEMPT");
    }
  } else if (e("GITLAB_CI") == "true" && !e("CI_SERVER_URL").empty() && !e("CI_PROJECT_PATH").empty() &&
             !e("CI_RUNNER_ID").empty()) {
    b.id = e("CI_SERVER_URL") + "/" + e("CI_PROJECT_PATH") + "/-/runners/" + e("CI_RUNNER_ID");
    b.invocation_id = e("CI_JOB_URL");
  } else {
    b.id = std::string(kLocalBuilderId);
  }
  // The flag names the builder; the CI's run id still says which run this was.
  if (!flag.empty()) b.id = flag;
  b.id = ref::WithoutUserinfo(b.id);
  b.invocation_id = ref::WithoutUserinfo(b.invocation_id);
  return b;
}

Result<std::string> ProvenanceJson(const ProvenanceInput& in) {
  if (in.subjects.empty()) return MakeError(ErrorKind::kInternal, "provenance: no subjects");
  Json subjects = Json::array();
  for (const auto& s : in.subjects) subjects.push_back({{"name", s.name}, {"digest", Sha256(s.digest)}});
  Json deps = Json::array();
  for (const auto& i : in.inputs) deps.push_back(Dependency(i));
  Json predicate = {{"buildDefinition",
                     {{"buildType", std::string(kImgtoolBuildType)},
                      {"externalParameters", ExternalParameters(in)},
                      {"internalParameters", InternalParameters(in)},
                      {"resolvedDependencies", deps}}},
                    {"runDetails", RunDetails(in)}};
  Json statement = {{"_type", std::string(kStatementV1Type)},
                    {"subject", subjects},
                    {"predicateType", std::string(kSlsaProvenanceV1)},
                    {"predicate", predicate}};
  auto s = oci::CanonicalJson(statement);
  if (!s.ok()) return s.error().Context("provenance");
  return *s + "\n";
}

std::string FileSource(const std::string& layer_root, const std::string& spec_dir, const std::string& path) {
  if (layer_root == spec_dir) return path;
  if (layer_root.size() > spec_dir.size() && layer_root.compare(0, spec_dir.size(), spec_dir) == 0 &&
      layer_root[spec_dir.size()] == '/') {
    return layer_root.substr(spec_dir.size() + 1) + "/" + path;
  }
  return layer_root + "/" + path;
}

std::string ProvenancePathFor(const std::string& output_path) { return output_path + ".provenance.json"; }

namespace {

// Each image's lock, files made relative to the spec's folder; a multi-platform spec's
// inputs carry their platform, as `imgtool lock` writes them.
std::vector<LockInput> Inputs(const Spec& spec, const BuildResult& r) {
  std::map<std::string, std::string> roots;
  for (const auto& l : spec.layers) roots.emplace(l.name, l.root);
  std::vector<LockInput> out;
  for (const auto& image : r.images) {
    Lock lock = image.lock;
    if (!spec.platforms.empty()) TagPlatform(lock, image.platform);
    for (auto& in : lock.inputs) {
      if (in.kind == "file" && roots.count(in.layer)) in.source = FileSource(roots[in.layer], spec.dir, in.source);
      out.push_back(std::move(in));
    }
  }
  return out;
}

std::vector<ToolchainUse> Toolchains(const Spec& spec, const BuildResult& r) {
  std::vector<ToolchainUse> out;
  for (const auto& image : r.images) {
    for (const auto& i : image.inputs) {
      if (i.toolchain.empty()) continue;
      out.push_back({spec.platforms.empty() ? "" : oci::PlatformString(image.platform), i.layer, i.path, i.toolchain});
    }
  }
  return out;
}

}  // namespace

ProvenanceInput ProvenanceInputFor(const Spec& spec, const BuildResult& r, const BuildOptions& opt,
                                   std::string_view sbom_json, std::string_view record_json) {
  ProvenanceInput in;
  std::string name =
      fs::BaseName(transport::BesidePath(opt.output)) + ":" + (opt.output.tag.empty() ? "latest" : opt.output.tag);
  in.subjects.push_back({name, r.manifest.digest});
  if (r.is_index) {
    for (const auto& image : r.images) {
      in.subjects.push_back({name + " (" + oci::PlatformString(image.platform) + ")", image.manifest.digest});
    }
  }
  in.spec_name = fs::BaseName(opt.spec_path);
  in.spec_digest = spec.digest;
  for (const auto& image : r.images) in.platforms.push_back(oci::PlatformString(image.platform));
  in.compression = r.compression;
  in.epoch = opt.epoch;
  in.locked = !opt.lock_path.empty();
  in.tool_version = IMGTOOL_VERSION;
  in.toolchains = Toolchains(spec, r);
  in.inputs = Inputs(spec, r);
  in.builder = BuilderFrom(opt.builder_id, opt.ci_env);
  in.byproducts.push_back({fs::BaseName(r.sbom_path), std::string(kMediaTypeSpdxJson), oci::Digest::Of(sbom_json)});
  in.byproducts.push_back({fs::BaseName(r.record_path), "application/json", oci::Digest::Of(record_json)});
  return in;
}

}  // namespace imgtool::build
