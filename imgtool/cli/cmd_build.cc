// imgtool build SPEC -o REF: spec -> plan -> layers -> config -> the output's sink (builder/builder.h).
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <map>

#include "builder/builder.h"
#include "builder/fetch.h"
#include "builder/layer_cache.h"
#include "builder/lock.h"
#include "cli/output.h"
#include "cli/remote_flags.h"
#include "fs/atomic_file.h"

namespace imgtool::cli {

namespace {

struct BuildFlags {
  std::string spec;
  std::string output;
  bool json = false;
  bool no_cache = false;
  bool quiet = false;
  std::string cache_dir;
  std::string record;
  std::string compression;
  std::string epoch;
  std::string download_dir;
  bool locked = false;
  std::string lock_file;
  std::string platform;
  std::string builder_id;
  RemoteFlags remote;  // a docker:// base or output
};

// The CI variables the provenance's builder id and invocation id come from
// (builder/provenance.h, BuilderFrom); read here so the library stays a pure function.
std::map<std::string, std::string> CiEnvironment() {
  std::map<std::string, std::string> env;
  for (const char* name :
       {"GITHUB_ACTIONS", "GITHUB_SERVER_URL", "GITHUB_WORKFLOW_REF", "GITHUB_REPOSITORY", "GITHUB_RUN_ID",
        "GITHUB_RUN_ATTEMPT", "GITLAB_CI", "CI_SERVER_URL", "CI_PROJECT_PATH", "CI_RUNNER_ID", "CI_JOB_URL"}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  return env;
}

oci::Json ImageJson(const build::ImageResult& image) {
  oci::Json layers = oci::Json::array();
  for (const auto& l : image.layers) {
    layers.push_back({{"name", l.name},
                      {"digest", l.descriptor.digest.str()},
                      {"diffId", l.diff_id.str()},
                      {"size", l.descriptor.size},
                      {"mediaType", l.descriptor.media_type},
                      {"cached", l.cached},
                      {"seconds", l.seconds}});
  }
  return {{"platform", oci::PlatformString(image.platform)},
          {"digest", image.manifest.digest.str()},
          {"config", image.config.digest.str()},
          {"layers", layers}};
}

// --json: the reference, the output's digest (the index's for a multi-platform spec),
// record and SBOM; a single image's config and layers at the top, as before; every image
// under "images".
void PrintBuildJson(const build::BuildResult& r, int64_t epoch) {
  oci::Json images = oci::Json::array();
  for (const auto& image : r.images) images.push_back(ImageJson(image));
  oci::Json out = {{"reference", r.output},
                   {"digest", r.manifest.digest.str()},
                   {"mediaType", r.manifest.media_type},
                   {"images", images},
                   {"record", r.record_path},
                   {"sbom", r.sbom_path},
                   {"provenance", r.provenance_path},
                   {"sourceDateEpoch", epoch}};
  if (!r.is_index) {
    out["config"] = images[0]["config"];
    out["layers"] = images[0]["layers"];
  }
  PrintJson(out);
}

Result<int64_t> EpochFrom(const std::string& flag) {
  std::string text = flag;
  if (text.empty()) {
    const char* env = std::getenv("SOURCE_DATE_EPOCH");
    text = env ? env : "0";
  }
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos) {
    return MakeError(ErrorKind::kInvalidInput, "SOURCE_DATE_EPOCH '" + text + "': want whole seconds since 1970");
  }
  return static_cast<int64_t>(std::stoll(text));
}

int RunBuild(const BuildFlags& f) {
  build::BuildOptions o;
  o.spec_path = f.spec;
  auto ref = ref::ParseReference(f.output);
  if (!ref.ok()) return Fail(ref.error());
  o.output = *ref;
  auto epoch = EpochFrom(f.epoch);
  if (!epoch.ok()) return Fail(epoch.error());
  o.epoch = *epoch;
  if (!f.compression.empty()) {
    auto c = archive::CompressionFromName(f.compression);
    if (!c.ok()) return Fail(c.error().Context("--compression"));
    o.compression = *c;
  }
  o.cache_dir = f.no_cache ? "" : (f.cache_dir.empty() ? build::LayerCache::DefaultDir() : f.cache_dir);
  o.record_path = f.record;
  o.builder_id = f.builder_id;
  o.ci_env = CiEnvironment();
  o.download_dir = f.download_dir.empty() ? build::DefaultDownloadDir() : f.download_dir;
  o.registry = ToRegistryOptions(f.remote);
  if (f.locked || !f.lock_file.empty()) {
    o.lock_path = f.lock_file.empty() ? fs::DirName(f.spec) + "/" + build::LockFileName() : f.lock_file;
  }
  if (!f.platform.empty()) {
    auto p = oci::ParsePlatform(f.platform);
    if (!p.ok()) return Fail(p.error().Context("--platform"));
    o.platform = *p;
  }
  if (!f.quiet) o.progress = [](const std::string& line) { PrintLine("imgtool: ", line); };
  auto r = build::Build(o);
  if (!r.ok()) return Fail(r.error());
  if (f.json) {
    PrintBuildJson(*r, o.epoch);
  } else {
    std::cout << r->output << "\n" << r->manifest.digest.str() << "\n";
  }
  return 0;
}

}  // namespace

void AddBuildCommand(CLI::App& app, Action& run) {
  auto f = std::make_shared<BuildFlags>();
  CLI::App* cmd = app.add_subcommand(
      "build",
      "Build an image from a JSON spec, reproducibly.\n\n"
      "Pipeline: base (scratch, or pinned by digest: a layout, or a registry image kept in the\n"
      "download cache so a rebuild is offline) -> the spec's layers ->\n"
      "a metadata layer (/etc/passwd and /etc/group with the non-root user,\n"
      "/etc/imgtool/stack.json) -> config -> written as `imgtool copy` writes: oci:DIR[:TAG],\n"
      "oci-archive:FILE[:TAG], docker://HOST/REPO[:TAG] (pushed; the registry flags apply) or\n"
      "docker-archive:FILE[:NAME:TAG] (one image).\n"
      "The same spec, inputs and SOURCE_DATE_EPOCH give the same digest on any machine,\n"
      "in any folder, under any umask, TZ or locale. A spec that names \"platforms\" builds\n"
      "one image per platform into one index (--platform builds one of them alone).\n"
      "The manifest (or index) digest is the last line on stdout; a build record (inputs and outputs by digest) is "
      "written to\n"
      "OUTPUT.build.json, the SPDX SBOM to OUTPUT.spdx.json and SLSA Provenance v1 (an in-toto\n"
      "Statement: inputs of the lock by digest, builder, SBOM digest) to OUTPUT.provenance.json\n"
      "(OUTPUT: the output's path; for a registry, the repository's last path component in the\n"
      "current folder, e.g. ./app.build.json);\n"
      "`imgtool attest --provenance` signs it. Unchanged layers come from a cache (--cache-dir); package URLs\n"
      "(http, https, file) are fetched once into a download cache and checked against their sha256.\n\n"
      "Examples:\n  imgtool build examples/golden/spec.json -o oci:out/golden:latest\n"
      "  imgtool build examples/golden/spec.json -o docker://127.0.0.1:5000/golden:v1\n"
      "  imgtool build examples/golden/spec.json --platform linux/arm64 -o oci:out/golden-arm64");
  cmd->add_option("spec", f->spec, "Build spec (JSON); relative paths in it resolve against its folder")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", f->output,
                  "Where to write: oci:DIR[:TAG], oci-archive:FILE[:TAG], docker://HOST/REPO[:TAG] or\n"
                  "docker-archive:FILE[:NAME:TAG] (TAG defaults to latest)")
      ->required();
  cmd->add_flag("--json", f->json, "Print a JSON summary instead of the reference and digest");
  cmd->add_option("--compression", f->compression,
                  "Layer compression: gzip (default), zstd or none; overrides the spec");
  cmd->add_option("--epoch", f->epoch, "Timestamp for every file and the config (default: $SOURCE_DATE_EPOCH, else 0)");
  cmd->add_option("--cache-dir", f->cache_dir,
                  "Layer cache folder (default: $IMGTOOL_CACHE, $XDG_CACHE_HOME/imgtool or ~/.cache/imgtool)");
  cmd->add_flag("--no-cache", f->no_cache, "Rebuild every layer from its sources (downloads stay cached)");
  cmd->add_option("--download-dir", f->download_dir,
                  "Where package URLs and registry bases are fetched to (default: $IMGTOOL_CACHE/downloads or\n"
                  "~/.cache/imgtool/downloads)");
  AddRemoteFlags(cmd, f->remote);
  cmd->add_flag("--locked", f->locked,
                "Refuse to build, before writing anything, when any input differs from the lock file\n"
                "(imgtool.lock.json beside the spec; write it with `imgtool lock SPEC`)");
  cmd->add_option("--lock-file", f->lock_file, "The lock file for --locked (implies --locked)");
  cmd->add_option("--platform", f->platform,
                  "Build only this platform's image of a multi-platform spec (OS/ARCH[/VARIANT],\n"
                  "e.g. linux/arm64): an image, not an index");
  cmd->add_option("--record", f->record, "Where to write the build record (default: OUTPUT.build.json)");
  cmd->add_option("--builder-id", f->builder_id,
                  "The provenance's runDetails.builder.id, a URI (default: from GitHub Actions or GitLab CI "
                  "variables, else https://imgtool.invalid/builders/local)");
  cmd->add_flag("-q,--quiet", f->quiet, "No progress on stderr");
  cmd->callback([f, &run] { run = [f] { return RunBuild(*f); }; });
}

}  // namespace imgtool::cli
