#include "builder/sbom.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>

#include "fs/atomic_file.h"
#include "layout/layout_reader.h"
#include "layout/layout_writer.h"
#include "oci/media_types.h"

namespace imgtool::build {

namespace {

PackageRecord Deb(const std::string& name, const std::string& version, const std::string& arch) {
  PackageRecord r;
  r.kind = PackageKind::kDeb;
  r.name = name;
  r.version = version;
  r.sha256 = oci::Digest::Of(name + version);
  r.size = 1000;
  r.source = "debs/" + name + ".deb";
  r.status_stanza =
      "Package: " + name + "\nStatus: install ok installed\nArchitecture: " + arch + "\nVersion: " + version + "\n";
  r.where = "$.layers[0].debs[0]";
  return r;
}

PackageRecord Wheel(PackageKind kind, const std::string& name, const std::string& version) {
  PackageRecord r;
  r.kind = kind;
  r.name = name;
  r.version = version;
  r.sha256 = oci::Digest::Of(name + version);
  r.source = "wheels/" + name + ".whl";
  r.where = "$.layers[1].wheels[0]";
  return r;
}

SbomInput Input() {
  SbomInput in;
  in.image_name = "trainer";
  in.manifest = {std::string(oci::kMediaTypeManifest), oci::Digest::Of("manifest"), 8, {}, std::nullopt};
  in.epoch = 1700000000;
  in.tool_version = "0.1.0";
  in.packages = {Deb("libnccl2", "2.28.9-1+cuda13.0", "amd64"), Deb("alpha", "1:2.3-4", "all"),
                 Wheel(PackageKind::kWheel, "Nvidia_NCCL.cu13", "2.28.9"),
                 Wheel(PackageKind::kInstalledWheel, "nvidia-cudnn-cu13", "9.19.0.56")};
  return in;
}

// A one-layer image in a fresh layout, tagged v1; returns its manifest descriptor.
oci::Descriptor WriteImage(const std::string& dir) {
  auto w = layout::LayoutWriter::Open(dir);
  EXPECT_TRUE(w.ok());
  oci::Manifest m;
  m.config = *w->WriteBlob(R"({"architecture":"amd64","os":"linux","rootfs":{"diff_ids":[],"type":"layers"}})",
                           oci::kMediaTypeConfig);
  auto desc = w->WriteBlob(*oci::SerializeManifest(m), oci::kMediaTypeManifest);
  EXPECT_TRUE(w->SetTag(*desc, "v1").ok());
  return *desc;
}

}  // namespace

TEST(Sbom, DebPurlKeepsTheEpochColonAndEncodesPlus) {
  // purl-spec: ':' must not be percent-encoded, '+' is outside the allowed set.
  EXPECT_EQ(DebPurl("alpha", "1:2.3-4", "amd64"), "pkg:deb/debian/alpha@1:2.3-4?arch=amd64");
  EXPECT_EQ(DebPurl("libnccl2", "2.28.9-1+cuda13.0", "amd64"),
            "pkg:deb/debian/libnccl2@2.28.9-1%2Bcuda13.0?arch=amd64");
  EXPECT_EQ(DebPurl("zlib1g", "1:1.2.13.dfsg-1~deb12u1", ""), "pkg:deb/debian/zlib1g@1:1.2.13.dfsg-1~deb12u1");
  EXPECT_EQ(PurlFor(Deb("alpha", "1.0", "arm64")), "pkg:deb/debian/alpha@1.0?arch=arm64");
}

TEST(Sbom, PypiPurlNormalizesTheName) {
  EXPECT_EQ(PypiPurl("Nvidia_NCCL.cu13", "2.28.9"), "pkg:pypi/nvidia-nccl-cu13@2.28.9");
  EXPECT_EQ(PypiPurl("torch", "2.9.0+cu130"), "pkg:pypi/torch@2.9.0%2Bcu130");
  EXPECT_EQ(PypiPurl("weird", "1!2.0"), "pkg:pypi/weird@1%212.0");
  EXPECT_EQ(PurlFor(Wheel(PackageKind::kInstalledWheel, "Foo__Bar", "1")), "pkg:pypi/foo-bar@1");
}

TEST(Sbom, OciPurlAndImageName) {
  oci::Digest d = oci::Digest::Of("x");
  EXPECT_EQ(OciPurl("Trainer", d), "pkg:oci/trainer@sha256:" + d.hex());
  EXPECT_EQ(SbomImageName({{"org.opencontainers.image.title", "golden"}}, "v1"), "golden");
  EXPECT_EQ(SbomImageName({}, "v1"), "v1");
  EXPECT_EQ(SbomImageName({}, ""), "image");
}

TEST(Sbom, DocumentFields) {
  SbomInput in = Input();
  auto json = SpdxJson(in);
  ASSERT_TRUE(json.ok()) << json.error().message;
  auto doc = *oci::ParseJson(*json, "sbom");
  EXPECT_EQ(doc["spdxVersion"], "SPDX-2.3");
  EXPECT_EQ(doc["dataLicense"], "CC0-1.0");
  EXPECT_EQ(doc["creationInfo"]["created"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(doc["creationInfo"]["creators"][0], "Tool: imgtool-0.1.0");
  EXPECT_EQ(doc["documentNamespace"], "https://imgtool.invalid/spdx/trainer/sha256-" + in.manifest.digest.hex());
  ASSERT_EQ(doc["packages"].size(), 5u);
  const auto& image = doc["packages"][0];
  EXPECT_EQ(image["SPDXID"], "SPDXRef-image");
  EXPECT_EQ(image["primaryPackagePurpose"], "CONTAINER");
  EXPECT_EQ(image["checksums"][0]["checksumValue"], in.manifest.digest.hex());
  EXPECT_EQ(image["externalRefs"][0]["referenceLocator"], "pkg:oci/trainer@sha256:" + in.manifest.digest.hex());
  // Sorted by kind name, then name: deb alpha, deb libnccl2, installed-wheel, wheel.
  std::vector<std::string> names;
  for (size_t i = 1; i < 5; ++i) names.push_back(doc["packages"][i]["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "libnccl2", "nvidia-cudnn-cu13", "Nvidia_NCCL.cu13"}));
  const auto& alpha = doc["packages"][1];
  EXPECT_EQ(alpha["versionInfo"], "1:2.3-4");
  EXPECT_EQ(alpha["checksums"][0]["algorithm"], "SHA256");
  EXPECT_EQ(alpha["checksums"][0]["checksumValue"], oci::Digest::Of("alpha1:2.3-4").hex());
  EXPECT_EQ(alpha["externalRefs"][0]["referenceCategory"], "PACKAGE-MANAGER");
  EXPECT_EQ(alpha["externalRefs"][0]["referenceLocator"], "pkg:deb/debian/alpha@1:2.3-4?arch=all");
  EXPECT_EQ(alpha["filesAnalyzed"], false);
  EXPECT_EQ(alpha["downloadLocation"], "NOASSERTION");
  std::string id = alpha["SPDXID"];
  EXPECT_EQ(id.rfind("SPDXRef-deb-alpha-1-2.3-4-", 0), 0u) << id;
  EXPECT_TRUE(doc["packages"][3].contains("comment"));  // the installed wheel's checksum is RECORD's
  ASSERT_EQ(doc["relationships"].size(), 5u);
  EXPECT_EQ(doc["relationships"][0]["relationshipType"], "DESCRIBES");
  EXPECT_EQ(doc["relationships"][1]["relatedSpdxElement"], id);
  EXPECT_EQ(doc["relationships"][1]["relationshipType"], "CONTAINS");
}

// The ids single-image documents have always had (the golden digests depend on them):
// "SPDXRef-image", and a package's readable part plus 8 hex digits of its exact key.
TEST(Sbom, PackageIdsAreTheReadablePartAndAShortHash) {
  auto doc = *oci::ParseJson(*SpdxJson(Input()), "sbom");
  EXPECT_EQ(doc["packages"][1]["SPDXID"], "SPDXRef-deb-alpha-1-2.3-4-" + oci::Digest::Of(std::string("deb\0alpha\0"
                                                                                                     "1:2.3-4",
                                                                                                     17))
                                                                             .hex()
                                                                             .substr(0, 8));
}

SbomIndexInput IndexOf(const std::vector<oci::Platform>& platforms) {
  SbomIndexInput in;
  in.image_name = "trainer";
  in.index = {std::string(oci::kMediaTypeIndex), oci::Digest::Of("index"), 5, {}, std::nullopt};
  in.tool_version = "0.1.0";
  for (const auto& p : platforms) {
    SbomPlatformImage image;
    image.platform = p;
    image.manifest = {
        std::string(oci::kMediaTypeManifest), oci::Digest::Of(oci::PlatformString(p)), 8, {}, std::nullopt};
    image.packages = {Deb("alpha", "1:2.3-4", p.architecture)};
    in.images.push_back(image);
  }
  return in;
}

std::vector<std::string> Ids(const oci::Json& doc) {
  std::vector<std::string> ids;
  for (const auto& p : doc["packages"]) ids.push_back(p["SPDXID"]);
  return ids;
}

bool AllUnique(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  return std::adjacent_find(ids.begin(), ids.end()) == ids.end();
}

// Two platforms whose names differ only in punctuation once gave one SPDXID to two
// images. The platform is encoded injectively; the usual ones keep their ids.
TEST(Sbom, PlatformsThatDifferInPunctuationGetTwoIds) {
  auto json = SpdxIndexJson(IndexOf({{"linux", "arm64", "v8"},
                                     {"linux", "arm64-v8", ""},
                                     {"linux", "amd64", ""},
                                     {"linux", "arm64.v8", ""},
                                     {"linux", "arm64_v8", ""}}));
  ASSERT_TRUE(json.ok()) << json.error().message;
  auto doc = *oci::ParseJson(*json, "sbom");
  auto ids = Ids(doc);
  EXPECT_TRUE(AllUnique(ids)) << doc.dump(1);
  EXPECT_EQ(ids[0], "SPDXRef-index");
  EXPECT_EQ(ids[1], "SPDXRef-image-linux-arm64-v8");
  EXPECT_EQ(ids[3], "SPDXRef-image-linux-arm64.2Dv8");
  EXPECT_EQ(ids[5], "SPDXRef-image-linux-amd64");
  EXPECT_EQ(ids[7], "SPDXRef-image-linux-arm64.2Ev8");
  EXPECT_EQ(ids[9], "SPDXRef-image-linux-arm64.5Fv8");
  // Each image CONTAINS its own package, by its own id.
  std::map<std::string, int> contains;
  for (const auto& r : doc["relationships"]) {
    if (r["relationshipType"] == "CONTAINS") ++contains[r["spdxElementId"]];
  }
  for (size_t i = 1; i < ids.size(); i += 2) EXPECT_EQ(contains[ids[i]], 1) << ids[i];
}

// The exact key of a deb in a single-image document, as the id's hash covers it.
std::string DebKey(const std::string& name, const std::string& version) {
  return std::string("deb") + '\0' + name + '\0' + version;
}

// Two names that sanitize alike ('+', ':', '~' all read '-') and whose 8-digit hashes
// meet: found by trying names until two collide (about 2^16 tries), as an attacker
// choosing package names could. Both then carry the whole hash; a third keeps its id.
TEST(Sbom, PackagesWhoseShortIdsCollideGetTheWholeHash) {
  std::map<std::string, std::string> by_short;
  std::string a, b;
  const char kPunct[] = "+:~";
  for (uint64_t i = 0; a.empty(); ++i) {
    std::string name = "p";
    for (uint64_t k = i; name.size() < 24; k /= 3) name += kPunct[k % 3];
    std::string short_hash = oci::Digest::Of(DebKey(name, "1")).hex().substr(0, 8);
    auto [it, fresh] = by_short.emplace(short_hash, name);
    if (!fresh && it->second != name) a = it->second, b = name;
  }
  SbomInput in = Input();
  in.packages.push_back(Deb(a, "1", "all"));
  in.packages.push_back(Deb(b, "1", "all"));
  auto json = SpdxJson(in);
  ASSERT_TRUE(json.ok()) << json.error().message;
  auto doc = *oci::ParseJson(*json, "sbom");
  auto ids = Ids(doc);
  EXPECT_TRUE(AllUnique(ids));
  const std::string readable = "SPDXRef-deb-p" + std::string(23, '-') + "-1-";
  std::map<std::string, std::string> id_of;
  for (const auto& p : doc["packages"]) id_of[p["name"]] = p["SPDXID"];
  EXPECT_EQ(id_of[a], readable + oci::Digest::Of(DebKey(a, "1")).hex());
  EXPECT_EQ(id_of[b], readable + oci::Digest::Of(DebKey(b, "1")).hex());
  EXPECT_EQ(id_of["alpha"],
            "SPDXRef-deb-alpha-1-2.3-4-" + oci::Digest::Of(DebKey("alpha", "1:2.3-4")).hex().substr(0, 8));
}

// Uniqueness is asserted before anything is written, whatever built the ids.
TEST(Sbom, ADuplicateIdIsRefused) {
  auto json = SpdxIndexJson(IndexOf({{"linux", "amd64", ""}, {"linux", "amd64", ""}}));
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.error().kind, ErrorKind::kInternal);
  EXPECT_EQ(json.error().message, "SBOM: SPDXID SPDXRef-image-linux-amd64 names two elements");
}

TEST(Sbom, SameBytesWhateverTheInputOrder) {
  SbomInput in = Input();
  std::string first = *SpdxJson(in);
  std::mt19937 rng(7);
  for (int i = 0; i < 5; ++i) {
    std::shuffle(in.packages.begin(), in.packages.end(), rng);
    EXPECT_EQ(*SpdxJson(in), first);
  }
}

TEST(Sbom, RefusesTheSamePackageTwice) {
  SbomInput in = Input();
  in.packages.push_back(in.packages[1]);
  in.packages.back().where = "$.layers[2].debs[0]";
  auto json = SpdxJson(in);
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.error().kind, ErrorKind::kInvalidInput);
  EXPECT_NE(json.error().message.find("deb alpha 1:2.3-4 is also installed by"), std::string::npos)
      << json.error().message;
}

TEST(Sbom, ArtifactManifestReferstoTheImage) {
  auto tmp = *fs::TempDir::Create("sbom-test-");
  std::string dir = tmp.path() + "/layout";
  oci::Descriptor image = WriteImage(dir);
  SbomInput in = Input();
  in.manifest = image;
  std::string json = *SpdxJson(in);
  auto artifact = WriteSbomArtifact(dir, image, json);
  ASSERT_TRUE(artifact.ok()) << artifact.error().message;

  auto found = layout::ResolveManifest(dir, "sha256-" + image.digest.hex() + ".sbom");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->digest, artifact->digest);
  EXPECT_EQ(layout::ResolveManifest(dir, "v1")->digest, image.digest);  // the image's tag stays

  auto raw = layout::ReadVerifiedBlob(dir, *artifact);
  ASSERT_TRUE(raw.ok());
  auto m = *oci::ParseJson(*raw, "artifact");
  EXPECT_EQ(m["schemaVersion"], 2);
  EXPECT_EQ(m["mediaType"], "application/vnd.oci.image.manifest.v1+json");
  EXPECT_EQ(m["artifactType"], "application/spdx+json");
  EXPECT_EQ(m["config"]["mediaType"], "application/vnd.oci.empty.v1+json");
  EXPECT_EQ(m["config"]["digest"], oci::Digest::Of("{}").str());
  EXPECT_EQ(m["config"]["size"], 2);
  EXPECT_EQ(*fs::ReadSmallFile(layout::BlobPathIn(dir, oci::Digest::Of("{}"))), "{}");
  ASSERT_EQ(m["layers"].size(), 1u);
  EXPECT_EQ(m["layers"][0]["mediaType"], "application/spdx+json");
  EXPECT_EQ(m["layers"][0]["digest"], oci::Digest::Of(json).str());
  EXPECT_EQ(m["subject"], oci::DescriptorToJson(image));
  EXPECT_FALSE(m["subject"].contains("annotations"));
}

TEST(Sbom, RerunLeavesIndexByteIdentical) {
  auto tmp = *fs::TempDir::Create("sbom-test-");
  std::string dir = tmp.path() + "/layout";
  oci::Descriptor image = WriteImage(dir);
  SbomInput in = Input();
  in.manifest = image;
  auto first = WriteSbom(in, dir, tmp.path() + "/layout.spdx.json");
  ASSERT_TRUE(first.ok()) << first.error().message;
  std::string index = *fs::ReadSmallFile(dir + "/index.json");
  EXPECT_EQ(layout::ReadIndex(dir)->manifests.size(), 2u);
  // Same as a rebuild: the builder retags the image, then stores the SBOM again.
  auto w = layout::LayoutWriter::Open(dir);
  ASSERT_TRUE(w->SetTag(image, "v1").ok());
  auto second = WriteSbom(in, dir, tmp.path() + "/layout.spdx.json");
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->artifact.digest, first->artifact.digest);
  EXPECT_EQ(*fs::ReadSmallFile(dir + "/index.json"), index);
  EXPECT_EQ(*fs::ReadSmallFile(first->path), *SpdxJson(in));
  EXPECT_EQ(first->document.digest, oci::Digest::Of(*SpdxJson(in)));
}

TEST(Sbom, RefusesAFolderThatIsNotALayout) {
  auto tmp = *fs::TempDir::Create("sbom-test-");
  oci::Descriptor image{std::string(oci::kMediaTypeManifest), oci::Digest::Of("m"), 1, {}, std::nullopt};
  auto r = WriteSbomArtifact(tmp.path(), image, "{}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(r.error().message, "storing SBOM: " + tmp.path() + ": not an OCI image layout (no oci-layout file)");
  EXPECT_FALSE(fs::Exists(tmp.path() + "/oci-layout"));  // nothing created

  // A layout that does not hold the subject.
  std::string dir = tmp.path() + "/layout";
  WriteImage(dir);
  r = WriteSbomArtifact(dir, image, "{}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(r.error().message, "storing SBOM: subject: " + dir + ": blob " + image.digest.str() +
                                   " (application/vnd.oci.image.manifest.v1+json): missing");
}

}  // namespace imgtool::build
