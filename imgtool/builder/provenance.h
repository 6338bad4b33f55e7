// SLSA Provenance v1 for a build: an in-toto Statement v1 whose subjects are what the
// build wrote (the image, or the index and every image of it) and whose predicate says
// how (the buildType https://imgtool.invalid/buildtypes/build/v1, its parameters, every
// input of the lock as a resolved dependency, the builder, the SBOM as a byproduct).
// Written to OUTPUT.provenance.json beside the build record and the SBOM.
//
// Reproducible like the record: canonical JSON, no host paths (subject names from the
// output's basename and tag, files relative to the spec's folder), no clock (no
// startedOn/finishedOn: the build's real times would differ, and SOURCE_DATE_EPOCH is
// not when it ran), no hostname (a local build's builder id is a constant). Credentials
// in package URLs and CI variables are removed (ref::WithoutUserinfo).
//
// Pure: the CI environment comes in as a map, never from getenv here.
// Not here: signing the statement (`imgtool attest --provenance`, sign_core/dsse.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "builder/lock.h"
#include "oci/digest.h"
#include "oci/result.h"

namespace imgtool::build {

struct BuildOptions;
struct BuildResult;
struct Spec;

inline constexpr std::string_view kStatementV1Type = "https://in-toto.io/Statement/v1";
inline constexpr std::string_view kSlsaProvenanceV1 = "https://slsa.dev/provenance/v1";
// Documented in imgtool/builder/README.md ("Provenance"). imgtool owns no domain: .invalid
// (RFC 2606) can never be registered, so the URI cannot come to mean another's type.
inline constexpr std::string_view kImgtoolBuildType = "https://imgtool.invalid/buildtypes/build/v1";
// The builder id of a build outside CI (no --builder-id): the same everywhere, so two
// machines or folders that build the same inputs write the same bytes.
inline constexpr std::string_view kLocalBuilderId = "https://imgtool.invalid/builders/local";

// runDetails.builder.id and runDetails.metadata.invocationId.
struct BuilderIdentity {
  std::string id;
  std::string invocation_id;  // empty outside CI
};

// --builder-id when given; else GitHub Actions (GITHUB_ACTIONS=true:
// $GITHUB_SERVER_URL/$GITHUB_WORKFLOW_REF, the workflow file and ref that ran the build;
// invocation .../actions/runs/$GITHUB_RUN_ID/attempts/$GITHUB_RUN_ATTEMPT); else GitLab CI
// (GITLAB_CI=true: $CI_SERVER_URL/$CI_PROJECT_PATH/-/runners/$CI_RUNNER_ID; invocation
// $CI_JOB_URL); else kLocalBuilderId. A CI whose variables are incomplete counts as local.
BuilderIdentity BuilderFrom(const std::string& flag, const std::map<std::string, std::string>& env);

// A file the build record names compilers for (elf_toolchain.h).
struct ToolchainUse {
  std::string platform;  // "" for a single-platform build
  std::string layer;
  std::string path;  // under the layer root
  std::vector<std::string> toolchain;
};

struct ProvenanceSubject {
  std::string name;
  oci::Digest digest;
};

struct ProvenanceByproduct {
  std::string name;
  std::string media_type;
  oci::Digest digest;
};

struct ProvenanceInput {
  std::vector<ProvenanceSubject> subjects;
  std::string spec_name;  // the spec file's name, without its folder
  oci::Digest spec_digest;
  std::vector<std::string> platforms;  // the platforms built ("linux/amd64")
  std::string compression;             // "gzip", "zstd", "none"
  int64_t epoch = 0;                   // SOURCE_DATE_EPOCH
  bool locked = false;                 // --locked
  std::string tool_version;
  std::vector<ToolchainUse> toolchains;
  // Every input of the lock, each image's (platform-tagged for a multi-platform spec). A
  // file's source is its path relative to the spec's folder (see FileSource).
  std::vector<LockInput> inputs;
  BuilderIdentity builder;
  std::vector<ProvenanceByproduct> byproducts;
};

// The statement, canonical JSON plus a newline. Refuses an input without subjects.
Result<std::string> ProvenanceJson(const ProvenanceInput& input);

// What the builder hands ProvenanceJson: subjects (BASENAME:TAG for the output; an
// index's images as "BASENAME:TAG (linux/arm64)"), the lock of every image, the
// toolchains, the byproducts' bytes digested. `env`: the CI variables (BuilderFrom).
ProvenanceInput ProvenanceInputFor(const Spec& spec, const BuildResult& result, const BuildOptions& options,
                                   std::string_view sbom_json, std::string_view record_json);

// A file input's source, relative to the spec's folder when its layer root is inside it
// ("cache/bin/trainer"), else the root as an absolute path joined with the file's.
std::string FileSource(const std::string& layer_root, const std::string& spec_dir, const std::string& path);

// "<output path>.provenance.json", beside "<output path>.build.json".
std::string ProvenancePathFor(const std::string& output_path);

}  // namespace imgtool::build
