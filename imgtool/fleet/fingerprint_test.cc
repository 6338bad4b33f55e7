#include "fleet/fingerprint.h"

#include <gtest/gtest.h>

namespace imgtool::fleet {
namespace {

Fingerprint Small() {
  Fingerprint fp;
  fp.fields = {{"nccl", "2.28.9"}, {"cuda.runtime", "13.0"}};
  fp.node = {{"host.name", "node-a"}, {"gpu.uuid", "GPU-1"}};
  return fp;
}

std::string ErrorOf(const std::string& text) {
  auto r = FingerprintFromJson(text);
  return r.ok() ? "(ok)" : r.error().message;
}

TEST(FingerprintTest, DigestIsSha256OfCanonicalFieldsAndIgnoresNodeFields) {
  Fingerprint fp = Small();
  // sha256 of {"cuda.runtime":"13.0","nccl":"2.28.9"}, computed with sha256sum.
  EXPECT_EQ(FingerprintDigest(fp, {}), "sha256:cc76431a6c2c557f9b0c836b7226779163b6c00382e42e27fb3bfdfed2f5822b");
  Fingerprint other_node = fp;
  other_node.node = {{"host.name", "node-b"}};
  EXPECT_EQ(FingerprintDigest(other_node, {}), FingerprintDigest(fp, {}));
  Fingerprint other_field = fp;
  other_field.fields["nccl"] = "2.19.3";
  EXPECT_NE(FingerprintDigest(other_field, {}), FingerprintDigest(fp, {}));
}

TEST(FingerprintTest, IgnorePatternsAreExactNamesOrPrefixes) {
  EXPECT_TRUE(FieldIgnored("env.NCCL_ALGO", {"env.NCCL_ALGO"}));
  EXPECT_TRUE(FieldIgnored("env.NCCL_ALGO", {"gpu.*", "env.NCCL_*"}));
  EXPECT_TRUE(FieldIgnored("anything", {"*"}));
  EXPECT_FALSE(FieldIgnored("env.NCCL_ALGO", {"env.NCCL"}));  // no '*': exact only
  EXPECT_FALSE(FieldIgnored("env.NCCL", {"env.NCCL_*"}));
  EXPECT_FALSE(FieldIgnored("nccl", {}));
  EXPECT_FALSE(FieldIgnored("nccl", {""}));
  // Ignored fields do not count: as if the field were not there.
  EXPECT_EQ(FingerprintDigest(Small(), {"cuda.*"}),
            "sha256:85308014efaf6006668329c5bfc221e47976a645e19b8c2304ecd66695347c70");  // {"nccl":"2.28.9"}
}

TEST(FingerprintTest, InvalidUtf8StillGivesDistinctDigests) {
  Fingerprint a = Small(), b = Small();
  a.fields["env.X"] = "\xff";
  b.fields["env.X"] = "\xfe";
  EXPECT_NE(FingerprintDigest(a, {}), FingerprintDigest(b, {}));
  EXPECT_NE(FingerprintDigest(a, {}), FingerprintDigest(Small(), {}));
  EXPECT_EQ(FingerprintDigest(a, {"env.*"}), FingerprintDigest(Small(), {}));
}

TEST(FingerprintTest, JsonRoundTrip) {
  Fingerprint fp = Small();
  std::string text = ToJson(fp).dump();
  EXPECT_EQ(text,
            R"({"fields":{"cuda.runtime":"13.0","nccl":"2.28.9"},"node":{"gpu.uuid":"GPU-1","host.name":"node-a"}})");
  auto back = FingerprintFromJson(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->fields, fp.fields);
  EXPECT_EQ(back->node, fp.node);
  auto no_node = FingerprintFromJson(R"({"fields":{"nccl":"2.28.9"}})");
  ASSERT_TRUE(no_node.ok());
  EXPECT_TRUE(no_node->node.empty());
}

TEST(FingerprintTest, FromJsonRejectsWrongShapesNamingThePath) {
  EXPECT_EQ(ErrorOf("[]"), "$: not an object");
  EXPECT_EQ(ErrorOf(R"({"node":{}})"), "$.fields: missing");
  EXPECT_EQ(ErrorOf(R"({"fields":[]})"), "$.fields: not an object");
  EXPECT_EQ(ErrorOf(R"({"fields":{"nccl":2}})"), "$.fields.nccl: not a string");
  EXPECT_EQ(ErrorOf(R"({"fields":{},"node":{"host.name":null}})"), "$.node.host.name: not a string");
  EXPECT_EQ(ErrorOf(R"({"fields":{},"node":"x"})"), "$.node: not an object");
  EXPECT_EQ(ErrorOf(R"({"fields":{"":"x"}})"), "$.fields: empty field name");
  EXPECT_EQ(ErrorOf(R"({"fields":{"a":"1","a":"2"}})"), "fingerprint: duplicate key \"a\"");
  EXPECT_EQ(ErrorOf(R"({"fields":)").rfind("fingerprint: malformed JSON at byte ", 0), 0u);
  EXPECT_EQ(FingerprintFromJson("[]").error().kind, ErrorKind::kInvalidInput);
}

TEST(FingerprintTest, FromJsonIsBounded) {
  oci::Json fields = oci::Json::object();
  for (int i = 0; i < 4096; ++i) fields["f" + std::to_string(i)] = "v";
  EXPECT_TRUE(FingerprintFromJson(oci::Json({{"fields", fields}}).dump()).ok());
  fields["one-more"] = "v";
  EXPECT_EQ(ErrorOf(oci::Json({{"fields", fields}}).dump()), "$.fields: 4097 entries, more than the limit of 4096");

  EXPECT_TRUE(
      FingerprintFromJson(oci::Json({{"fields", {{std::string(256, 'k'), std::string(4096, 'v')}}}}).dump()).ok());
  EXPECT_EQ(ErrorOf(oci::Json({{"fields", {{std::string(257, 'k'), "v"}}}}).dump()),
            "$.fields." + std::string(40, 'k') + "...: field name longer than 256 bytes");
  EXPECT_EQ(ErrorOf(oci::Json({{"fields", {{"env.X", std::string(4097, 'v')}}}}).dump()),
            "$.fields.env.X: value of 4097 bytes, more than the limit of 4096");
  EXPECT_EQ(ErrorOf(std::string(kMaxFingerprintBytes + 1, ' ')),
            "fingerprint: 67108865 bytes, more than the limit of 67108864");
}

TEST(FingerprintTest, FromJsonAcceptsTheProbeOutputAndRejectsATamperedDigest) {
  Fingerprint fp = Small();
  oci::Json j = ToJson(fp);
  j["digest"] = FingerprintDigest(fp, {});
  j["timings"] = {{"total_ms", 12}};
  auto ok = FingerprintFromJson(j.dump());
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->fields, fp.fields);

  j["fields"]["nccl"] = "2.19.3";  // edited after the probe wrote it
  Fingerprint edited = fp;
  edited.fields["nccl"] = "2.19.3";
  auto tampered = FingerprintFromJson(j.dump());
  ASSERT_FALSE(tampered.ok());
  EXPECT_EQ(tampered.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(tampered.error().message, "$.digest: the file says " + FingerprintDigest(fp, {}) +
                                          " but its fields hash to " + FingerprintDigest(edited, {}) + " (edited?)");
  j["digest"] = 7;
  EXPECT_EQ(ErrorOf(j.dump()), "$.digest: not a string");
}

}  // namespace
}  // namespace imgtool::fleet
