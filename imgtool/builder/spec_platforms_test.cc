#include "builder/spec_platforms.h"

#include <gtest/gtest.h>

namespace imgtool::build {

namespace {

std::string ErrorOf(const std::string& raw) {
  auto s = ParseSpec(raw, "/ctx", "spec.json");
  return s.ok() ? "ok" : s.error().message;
}

// Two platforms; a layer with one deb per platform, a file for arm64 only, and a layer
// for amd64 only.
const char* kMulti = R"({"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},
  "platforms":["linux/amd64","linux/arm64"],
  "layers":[
    {"name":"runtime","debs":[
      {"src":"a.deb","sha256":"1111111111111111111111111111111111111111111111111111111111111111","name":"libc6","version":"1","platforms":["linux/amd64"]},
      {"src":"b.deb","sha256":"2222222222222222222222222222222222222222222222222222222222222222","name":"libc6","version":"1","platforms":["linux/arm64"]}],
     "files":[{"src":"common","dest":"/opt/"},{"src":"arm","dest":"/opt/arm","platforms":["linux/arm64"]}]},
    {"name":"cuda-plugin","platforms":["linux/amd64"],"files":[{"src":"plugin.so","dest":"/opt/"}]}]})";

oci::Platform P(const std::string& s) { return *oci::ParsePlatform(s); }

}  // namespace

TEST(SpecPlatforms, ParsesPlatformsAndFilters) {
  auto s = ParseSpec(kMulti, "/ctx", "spec.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->platforms.size(), 2u);
  EXPECT_EQ(oci::PlatformString(s->platforms[1]), "linux/arm64");
  EXPECT_EQ(s->layers[0].packages[1].platforms, std::vector<oci::Platform>{P("linux/arm64")});
  EXPECT_TRUE(s->layers[0].files[0].platforms.empty());
  EXPECT_EQ(s->layers[1].platforms, std::vector<oci::Platform>{P("linux/amd64")});
  EXPECT_EQ(SpecPlatforms(*s).size(), 2u);
}

TEST(SpecPlatforms, ResolvesEachPlatform) {
  auto s = ParseSpec(kMulti, "/ctx", "spec.json");
  ASSERT_TRUE(s.ok());
  auto amd = ForPlatform(*s, P("linux/amd64"));
  ASSERT_TRUE(amd.ok()) << amd.error().message;
  EXPECT_EQ(amd->platform, P("linux/amd64"));
  EXPECT_TRUE(amd->platforms.empty());
  ASSERT_EQ(amd->layers.size(), 2u);
  ASSERT_EQ(amd->layers[0].packages.size(), 1u);
  EXPECT_EQ(amd->layers[0].packages[0].src, "/ctx/a.deb");
  EXPECT_EQ(amd->layers[0].files.size(), 1u);
  auto arm = ForPlatform(*s, P("linux/arm64"));
  ASSERT_TRUE(arm.ok()) << arm.error().message;
  ASSERT_EQ(arm->layers.size(), 1u);  // the amd64-only plugin layer is not there
  EXPECT_EQ(arm->layers[0].packages[0].src, "/ctx/b.deb");
  EXPECT_EQ(arm->layers[0].files.size(), 2u);
  auto other = ForPlatform(*s, P("linux/riscv64"));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().message, "platform linux/riscv64: the spec builds linux/amd64, linux/arm64");
}

TEST(SpecPlatforms, SinglePlatformSpecsResolveToThemselves) {
  auto s = ParseSpec(R"({"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},
    "platform":{"architecture":"arm64"},"layers":[{"files":[{"src":"a","dest":"/a"}]}]})",
                     "/ctx", "spec.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(SpecPlatforms(*s).size(), 1u);
  auto same = ForPlatform(*s, P("linux/arm64"));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->layers.size(), 1u);
  EXPECT_FALSE(ForPlatform(*s, P("linux/amd64")).ok());
}

TEST(SpecPlatforms, BadListsAndFiltersNameTheirPath) {
  const std::string head = R"({"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},)";
  const std::string layer = R"("layers":[{"files":[{"src":"a","dest":"/a"}]}]})";
  EXPECT_EQ(ErrorOf(head + R"("platforms":[],)" + layer),
            "spec.json: $.platforms: want a non-empty array such as [\"linux/amd64\", \"linux/arm64\"]");
  EXPECT_EQ(ErrorOf(head + R"("platforms":["linux/amd64","linux/amd64"],)" + layer),
            "spec.json: $.platforms[1]: linux/amd64 is listed twice");
  EXPECT_NE(ErrorOf(head + R"("platforms":["amd64"],)" + layer).find("$.platforms[0]"), std::string::npos);
  EXPECT_EQ(ErrorOf(head + R"("platforms":["linux/amd64"],"platform":{"os":"linux"},)" + layer),
            "spec.json: $.platforms: name the platforms here or in $.platform, not both");
  EXPECT_EQ(
      ErrorOf(
          head +
          R"("platforms":["linux/amd64"],"layers":[{"files":[{"src":"a","dest":"/a","platforms":["linux/s390x"]}]}]})"),
      "spec.json: $.layers[0].files[0].platforms: linux/s390x is not in $.platforms (linux/amd64)");
  EXPECT_EQ(ErrorOf(head + R"("layers":[{"platforms":["linux/amd64"],"files":[{"src":"a","dest":"/a"}]}]})"),
            "spec.json: $.layers[0].platforms: the spec names no platforms ($.platforms)");
}

TEST(SpecPlatforms, ALayerLeftEmptyForAPlatformIsNamed) {
  auto s = ParseSpec(R"({"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},
    "platforms":["linux/amd64","linux/arm64"],
    "layers":[{"name":"bin","files":[{"src":"a","dest":"/a","platforms":["linux/amd64"]}]}]})",
                     "/ctx", "spec.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(ForPlatform(*s, P("linux/amd64")).ok());
  auto arm = ForPlatform(*s, P("linux/arm64"));
  ASSERT_FALSE(arm.ok());
  EXPECT_EQ(arm.error().message,
            "$.layers[0]: layer 'bin' has no inputs for linux/arm64 (give the layer a \"platforms\" list)");
}

}  // namespace imgtool::build
