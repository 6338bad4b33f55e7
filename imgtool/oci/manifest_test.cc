#include "oci/manifest.h"

#include <gtest/gtest.h>

#include "oci/image_config.h"
#include "oci/media_types.h"

namespace imgtool::oci {

namespace {
Descriptor Desc(std::string_view media_type, std::string_view content) {
  return Descriptor{
      std::string(media_type), Digest::Of(content), static_cast<int64_t>(content.size()), {}, std::nullopt};
}
}  // namespace

TEST(Manifest, SerializesCanonicallyAndParsesBack) {
  Manifest m;
  m.config = Desc(kMediaTypeConfig, "{}");
  m.layers.push_back(Desc(kMediaTypeLayerGzip, "layer"));
  auto bytes = SerializeManifest(m);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->find(' '), std::string::npos);
  EXPECT_EQ(bytes->rfind("{\"config\":{\"digest\":\"sha256:", 0), 0u) << *bytes;
  auto back = ParseManifest(*bytes, "m");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->layers.size(), 1u);
  EXPECT_EQ(back->layers[0].digest, m.layers[0].digest);
  EXPECT_EQ(*SerializeManifest(*back), *bytes);
}

TEST(Manifest, AcceptsAMissingTopLevelMediaType) {
  // umoci writes manifests without it.
  std::string raw = R"({"schemaVersion":2,"config":{"mediaType":")" + std::string(kMediaTypeConfig) +
                    R"(","digest":")" + Digest::Of("{}").str() + R"(","size":2},"layers":[]})";
  auto m = ParseManifest(raw, "m");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->media_type, kMediaTypeManifest);
}

TEST(Manifest, ErrorsNameTheJsonPath) {
  std::string raw = R"({"schemaVersion":2,"config":{"mediaType":"x","digest":"sha256:00","size":2},"layers":[]})";
  auto m = ParseManifest(raw, "manifest sha256:ab");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message.rfind("manifest sha256:ab: $.config: digest 'sha256:00'", 0), 0u) << m.error().message;
  EXPECT_EQ(ParseManifest(R"({"schemaVersion":1})", "m").error().message, "m: schemaVersion must be 2");
  auto neg = ParseManifest(R"({"schemaVersion":2,"config":{"mediaType":"x","digest":")" + Digest::Of("").str() +
                               R"(","size":-1},"layers":[]})",
                           "m");
  EXPECT_EQ(neg.error().message, "m: $.config: size missing or negative");
}

// Found by tests/fuzz (fuzz_manifest, with the type-changing dictionary entries): the
// schemaVersion, mediaType and platform variant were read with value(), which throws
// when the member has another type; any registry or layout could end the process.
TEST(Manifest, MembersOfAnotherTypeAreErrors) {
  EXPECT_EQ(ParseManifest(R"({"schemaVersion":"2"})", "m").error().message, "m: schemaVersion must be 2");
  EXPECT_EQ(ParseManifest(R"({"schemaVersion":2,"mediaType":[1]})", "m").error().message,
            "m: not an image manifest: mediaType [1]");
  EXPECT_EQ(ParseIndex(R"({"schemaVersion":{}})", "i").error().message, "i: not an image index (schemaVersion 2)");
  Index idx;
  Descriptor d = Desc(kMediaTypeManifest, "m");
  d.platform = Platform{"linux", "arm64", "v8"};
  idx.manifests.push_back(d);
  std::string raw = *SerializeIndex(idx);
  raw.replace(raw.find("\"v8\""), 4, "8");
  EXPECT_EQ(ParseIndex(raw, "i").error().message, "i: $.manifests[0].platform.variant: want a string");
  EXPECT_TRUE(ParseManifest(R"({"schemaVersion":2.0,"config":{"mediaType":"x","digest":")" + Digest::Of("").str() +
                                R"(","size":0},"layers":[]})",
                            "m")
                  .ok());
}

TEST(Index, KeepsAnnotationsAndPlatform) {
  Index idx;
  Descriptor d = Desc(kMediaTypeManifest, "m");
  d.annotations[std::string(kAnnotationRefName)] = "v1";
  d.platform = Platform{"linux", "amd64", ""};
  idx.manifests.push_back(d);
  auto back = ParseIndex(*SerializeIndex(idx), "index.json");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->manifests[0].annotations.at(std::string(kAnnotationRefName)), "v1");
  EXPECT_EQ(back->manifests[0].platform->architecture, "amd64");
}

TEST(ImageConfig, CreatedIsUtcWhateverTheTimeZone) {
  setenv("TZ", "Asia/Kolkata", 1);
  EXPECT_EQ(Rfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(Rfc3339(1700000000), "2023-11-14T22:13:20Z");
  unsetenv("TZ");
}

TEST(ImageConfig, DiffIdsAreCheckedDigests) {
  Json c = NewImageConfig("linux", "amd64");
  AppendLayerToConfig(c, Digest::Of("a"), {"1970-01-01T00:00:00Z", "test", false});
  auto ids = ConfigDiffIds(c);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ((*ids)[0], Digest::Of("a"));
  c["rootfs"]["diff_ids"][0] = "md5:1";
  EXPECT_FALSE(ConfigDiffIds(c).ok());
}

}  // namespace imgtool::oci
