#include "builder/stack.h"

#include <gtest/gtest.h>

#include "builder/dpkg_status.h"

namespace imgtool::build {

namespace {
PackageRecord Pkg(PackageKind kind, const std::string& name, const std::string& version) {
  PackageRecord p;
  p.kind = kind;
  p.name = name;
  p.version = version;
  p.where = "$.layers[0].x";
  return p;
}
Spec WithStack(std::map<std::string, std::string> stack) {
  Spec s;
  s.stack = std::move(stack);
  return s;
}
}  // namespace

TEST(Stack, PinMatchesEqualOrDottedPrefix) {
  EXPECT_TRUE(PinMatches("9.19.0", "9.19.0.56"));
  EXPECT_TRUE(PinMatches("9.19.0.56", "9.19.0.56"));
  EXPECT_TRUE(PinMatches("2.28.9", "2.28.9-1+cuda13.0"));
  EXPECT_TRUE(PinMatches("13.0.96", "1:13.0.96-1"));
  EXPECT_FALSE(PinMatches("9.19.0.5", "9.19.0.56"));
  EXPECT_FALSE(PinMatches("9.19.1", "9.19.0.56"));
}

TEST(Stack, FindsProvidersAmongWheelsAndDebs) {
  auto json = StackJson(WithStack({{"cuda", "13.0"}, {"nccl", "2.28.9"}}),
                        {Pkg(PackageKind::kWheel, "Nvidia_Cuda_Runtime", "13.0.96"),
                         Pkg(PackageKind::kDeb, "libnccl2", "2.28.9-1+cuda13.0")});
  ASSERT_TRUE(json.ok()) << json.error().message;
  EXPECT_NE(json->find(R"("cuda":{"libraries":[],"package":"Nvidia_Cuda_Runtime","packageVersion":"13.0.96")"),
            std::string::npos)
      << *json;
  auto bad = StackJson(WithStack({{"cudnn", "9"}}), {Pkg(PackageKind::kDeb, "libnccl2", "2.28.9-1")});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kInvalidInput);
  auto plain = StackJson(WithStack({{"cudnn", "9"}}), {});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, "{\"components\":{\"cudnn\":{\"version\":\"9\"}},\"schemaVersion\":1}\n");
}

TEST(DpkgStatus, BaseFirstThenDebsByNameReplacingTheBase) {
  auto a = Pkg(PackageKind::kDeb, "zed", "1");
  a.status_stanza = "Package: zed\nStatus: install ok installed\nVersion: 1\n\n";
  auto b = Pkg(PackageKind::kDeb, "base2", "9");
  b.status_stanza = "Package: base2\nStatus: install ok installed\nVersion: 9\n\n";
  auto s = DpkgStatus("Package: base1\nVersion: 1\n\nPackage: base2\nVersion: 2\n", {a, b});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s,
            "Package: base1\nVersion: 1\n\n"
            "Package: base2\nStatus: install ok installed\nVersion: 9\n\n"
            "Package: zed\nStatus: install ok installed\nVersion: 1\n\n");
}

}  // namespace imgtool::build
