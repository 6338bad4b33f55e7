#include "builder/provenance.h"

#include <gtest/gtest.h>

#include "oci/canonical_json.h"

namespace imgtool::build {
namespace {

ProvenanceInput Sample() {
  ProvenanceInput in;
  in.subjects = {{"golden:latest", oci::Digest::Of("manifest")}};
  in.spec_name = "spec.json";
  in.spec_digest = oci::Digest::Of("spec");
  in.platforms = {"linux/amd64"};
  in.compression = "gzip";
  in.tool_version = "0.1.0";
  in.inputs = {
      {"", "base", "base", "", oci::Digest::Of("base"), 0, "docker://r.example/base:1", oci::Digest::Of("m")},
      {"debs", "deb", "libc6", "2.36", oci::Digest::Of("deb"), 7, "https://u:s3cret@deb.example/libc6.deb", {}},
      {"app", "file", "/opt/app", "", oci::Digest::Of("app"), 3, "cache/bin/app", {}}};
  in.toolchains = {{"", "app", "app", {"GCC: (Debian 12.2.0-14) 12.2.0"}}};
  in.builder = BuilderFrom("", {});
  in.byproducts = {{"golden.spdx.json", "application/spdx+json", oci::Digest::Of("sbom")}};
  return in;
}

oci::Json Parsed(const ProvenanceInput& in) {
  auto s = ProvenanceJson(in);
  EXPECT_TRUE(s.ok());
  return *oci::ParseJson(*s, "provenance");
}

TEST(Provenance, StatementV1WithSlsaPredicate) {
  oci::Json j = Parsed(Sample());
  EXPECT_EQ(j["_type"], "https://in-toto.io/Statement/v1");
  EXPECT_EQ(j["predicateType"], "https://slsa.dev/provenance/v1");
  EXPECT_EQ(j["subject"][0]["digest"]["sha256"], oci::Digest::Of("manifest").hex());
  const oci::Json& def = j["predicate"]["buildDefinition"];
  EXPECT_EQ(def["buildType"], "https://imgtool.invalid/buildtypes/build/v1");
  EXPECT_EQ(def["externalParameters"]["spec"]["digest"]["sha256"], oci::Digest::Of("spec").hex());
  EXPECT_EQ(def["internalParameters"]["toolchains"][0]["path"], "app");
  ASSERT_EQ(def["resolvedDependencies"].size(), 3u);
  EXPECT_EQ(def["resolvedDependencies"][0]["annotations"]["manifest"], oci::Digest::Of("m").str());
  EXPECT_EQ(def["resolvedDependencies"][2]["uri"], "cache/bin/app");
  EXPECT_EQ(j["predicate"]["runDetails"]["byproducts"][0]["digest"]["sha256"], oci::Digest::Of("sbom").hex());
  // No clock: the build's times are not claimed, and no invocation outside CI.
  EXPECT_FALSE(j["predicate"]["runDetails"].contains("metadata"));
}

TEST(Provenance, SameInputsSameBytes) {
  auto a = ProvenanceJson(Sample());
  auto b = ProvenanceJson(Sample());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  ProvenanceInput moved = Sample();
  moved.inputs[1].sha256 = oci::Digest::Of("other deb");
  EXPECT_NE(*ProvenanceJson(moved), *a);
}

TEST(Provenance, NoCredentialsFromUrls) {
  ProvenanceInput in = Sample();
  in.builder = BuilderFrom("https://ci:tok3n@ci.example/builder", {});
  auto s = ProvenanceJson(in);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->find("s3cret"), std::string::npos);
  EXPECT_EQ(s->find("u:"), std::string::npos);
  EXPECT_EQ(s->find("tok3n"), std::string::npos);
  EXPECT_NE(s->find("\"uri\":\"https://deb.example/libc6.deb\""), std::string::npos);
  EXPECT_NE(s->find("\"id\":\"https://ci.example/builder\""), std::string::npos);
}

TEST(Provenance, IndexSubjectsAndNoSubjectsRefused) {
  ProvenanceInput in = Sample();
  in.subjects.push_back({"golden:latest (linux/arm64)", oci::Digest::Of("arm64")});
  oci::Json j = Parsed(in);
  ASSERT_EQ(j["subject"].size(), 2u);
  EXPECT_EQ(j["subject"][1]["name"], "golden:latest (linux/arm64)");
  in.subjects.clear();
  EXPECT_FALSE(ProvenanceJson(in).ok());
}

TEST(Provenance, BuilderIdPrecedence) {
  std::map<std::string, std::string> gh = {{"GITHUB_ACTIONS", "true"},
                                           {"GITHUB_SERVER_URL", "https://github.com"},
                                           {"GITHUB_WORKFLOW_REF", "o/r/.github/workflows/g.yml@refs/heads/main"},
                                           {"GITHUB_REPOSITORY", "o/r"},
                                           {"GITHUB_RUN_ID", "42"},
                                           {"GITHUB_RUN_ATTEMPT", "2"}};
  std::map<std::string, std::string> gl = {{"GITLAB_CI", "true"},
                                           {"CI_SERVER_URL", "https://gitlab.example"},
                                           {"CI_PROJECT_PATH", "g/p"},
                                           {"CI_RUNNER_ID", "7"},
                                           {"CI_JOB_URL", "https://gitlab.example/g/p/-/jobs/9"}};
  EXPECT_EQ(BuilderFrom("", {}).id, "https://imgtool.invalid/builders/local");
  EXPECT_EQ(BuilderFrom("", {}).invocation_id, "");
  EXPECT_EQ(BuilderFrom("", gh).id, "https://github.com/o/r/.github/workflows/g.yml@refs/heads/main");
  EXPECT_EQ(BuilderFrom("", gh).invocation_id, "https://github.com/o/r/actions/runs/42/attempts/2");
  EXPECT_EQ(BuilderFrom("", gl).id, "https://gitlab.example/g/p/-/runners/7");
  EXPECT_EQ(BuilderFrom("", gl).invocation_id, "https://gitlab.example/g/p/-/jobs/9");
  EXPECT_EQ(BuilderFrom("https://b.example/x", gh).id, "https://b.example/x");
  EXPECT_EQ(BuilderFrom("https://b.example/x", gh).invocation_id, "https://github.com/o/r/actions/runs/42/attempts/2");
  gh["GITHUB_ACTIONS"] = "false";  // not in Actions: local, whatever else is set
  EXPECT_EQ(BuilderFrom("", gh).id, "https://imgtool.invalid/builders/local");
  gl.erase("CI_RUNNER_ID");  // incomplete: local
  EXPECT_EQ(BuilderFrom("", gl).id, "https://imgtool.invalid/builders/local");
}

TEST(Provenance, FilesRelativeToTheSpec) {
  EXPECT_EQ(FileSource("/w/spec", "/w/spec", "a.txt"), "a.txt");
  EXPECT_EQ(FileSource("/w/spec/cache/bin", "/w/spec", "trainer"), "cache/bin/trainer");
  EXPECT_EQ(FileSource("/w/spec/../x", "/w/spec", "f"), "../x/f");
  EXPECT_EQ(FileSource("/w/specs", "/w/spec", "f"), "/w/specs/f");  // a sibling, not inside
  EXPECT_EQ(FileSource("/usr/local/cuda", "/w/spec", "lib/x.so"), "/usr/local/cuda/lib/x.so");
  EXPECT_EQ(ProvenancePathFor("out/golden"), "out/golden.provenance.json");
}

}  // namespace
}  // namespace imgtool::build
