#include "builder/package_layer.h"

#include <gtest/gtest.h>

namespace imgtool::build {

namespace {

LayerSpec Layer() {
  LayerSpec l;
  l.name = "pkgs";
  PackageSpec deb;
  deb.kind = PackageKind::kDeb;
  deb.sha256 = oci::Digest::Of("deb");
  deb.name = "alpha";
  deb.version = "1.0-1";
  deb.given = "debs/alpha.deb";
  deb.where = "$.layers[0].debs[0]";
  l.packages.push_back(deb);
  return l;
}

PackageRecord Record() {
  return {PackageKind::kDeb,
          "alpha",
          "1.0-1",
          oci::Digest::Of("deb"),
          3,
          "old/path.deb",
          "Package: alpha\nVersion: 1.0-1\n",
          {{"/usr/lib/libalpha.so.1", oci::Digest::Of("lib")}},
          "$.old"};
}

}  // namespace

TEST(PackageLayer, OnlyDebAndWheelLayersQualify) {
  LayerSpec l = Layer();
  EXPECT_TRUE(IsPackageOnlyLayer(l));
  l.files.push_back({});
  EXPECT_FALSE(IsPackageOnlyLayer(l));
  l = Layer();
  l.packages[0].kind = PackageKind::kInstalledWheel;
  EXPECT_FALSE(IsPackageOnlyLayer(l));
  EXPECT_FALSE(IsPackageOnlyLayer(LayerSpec{}));
}

TEST(PackageLayer, FingerprintFollowsEveryPin) {
  std::string base = PackageLayerFingerprint(Layer());
  for (int field = 0; field < 4; ++field) {
    LayerSpec l = Layer();
    PackageSpec& p = l.packages[0];
    if (field == 0) p.sha256 = oci::Digest::Of("other");
    if (field == 1) p.version = "1.0-2";
    if (field == 2) p.allow_setuid = true;
    if (field == 3) p.prefix = "opt";
    EXPECT_NE(PackageLayerFingerprint(l), base) << field;
  }
  LayerSpec moved = Layer();
  moved.packages[0].given = "elsewhere/alpha.deb";  // the same bytes from another path
  EXPECT_EQ(PackageLayerFingerprint(moved), base);
}

TEST(PackageLayer, RecordsRoundTripWithTheSpecsPlaceAndSource) {
  std::string json = PackageRecordsJson({Record()}, {"alpha has maintainer scripts"});
  auto back = ParsePackageRecords(json, Layer());
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->records.size(), 1u);
  const PackageRecord& r = back->records[0];
  EXPECT_EQ(r.status_stanza, Record().status_stanza);
  EXPECT_EQ(r.libraries[0].path, "/usr/lib/libalpha.so.1");
  EXPECT_EQ(r.libraries[0].sha256, oci::Digest::Of("lib"));
  EXPECT_EQ(r.size, 3u);
  EXPECT_EQ(r.source, "debs/alpha.deb");
  EXPECT_EQ(r.where, "$.layers[0].debs[0]");
  EXPECT_EQ(back->notes, std::vector<std::string>{"alpha has maintainer scripts"});
}

TEST(PackageLayer, ASidecarThatDoesNotFitIsAMiss) {
  std::string json = PackageRecordsJson({Record()}, {});
  LayerSpec other = Layer();
  other.packages[0].sha256 = oci::Digest::Of("other");
  EXPECT_FALSE(ParsePackageRecords(json, other).has_value());
  LayerSpec two = Layer();
  two.packages.push_back(two.packages[0]);
  EXPECT_FALSE(ParsePackageRecords(json, two).has_value());
  EXPECT_FALSE(ParsePackageRecords("{\"packages\": 1}", Layer()).has_value());
  EXPECT_FALSE(ParsePackageRecords("not json", Layer()).has_value());
}

}  // namespace imgtool::build
