// Parsing of trusted roots and bundles, on the public conformance vectors
// (tests/fixtures/sigstore, from sigstore-conformance) and on hand-made damage.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "oci/hex.h"
#include "sigstore/bundle.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {
namespace {

const std::filesystem::path kFixtures = IMGTOOL_SIGSTORE_FIXTURES;

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Time, Rfc3339RoundTripsAndDropsTheFraction) {
  EXPECT_EQ(*ParseRfc3339("1970-01-01T00:00:00Z", "t"), 0);
  EXPECT_EQ(*ParseRfc3339("2021-01-12T11:53:27Z", "t"), 1610452407);
  EXPECT_EQ(*ParseRfc3339("2022-12-31T23:59:59.999Z", "t"), 1672531199);
  EXPECT_EQ(FormatRfc3339(1610452407), "2021-01-12T11:53:27Z");
  EXPECT_EQ(*ParseRfc3339("2024-02-29T00:00:00Z", "t"), 1709164800);
}

TEST(Time, RefusesWhatIsNotUtcRfc3339) {
  for (const char* bad : {"", "2021-01-12", "2021-01-12T11:53:27", "2021-01-12T11:53:27+01:00", "2023-02-29T00:00:00Z",
                          "2021-13-01T00:00:00Z", "2021-01-12T11:53:27.Z", "2021-01-12 11:53:27Z"}) {
    EXPECT_FALSE(ParseRfc3339(bad, "t").ok()) << bad;
  }
}

TEST(Hex, DecodesLowercaseHexOnly) {
  EXPECT_EQ(oci::HexDecode("00ff7a"), std::string("\x00\xff\x7a", 3));
  EXPECT_EQ(oci::HexDecode(""), std::string());
  for (const char* bad : {"0F", "abc", "zz", "0x", " 0"}) EXPECT_FALSE(oci::HexDecode(bad).has_value()) << bad;
  EXPECT_EQ(oci::HexEncode(*oci::HexDecode("0123456789abcdef")), "0123456789abcdef");
}

TEST(TrustedRoot, PublicGoodAndStagingParse) {
  for (const char* name : {"public-good", "staging"}) {
    auto root = ParseTrustedRoot(Slurp(kFixtures / "trusted-roots" / name / "trusted_root.json"), name);
    ASSERT_TRUE(root.ok()) << root.error().message;
    EXPECT_GE(root->tlogs.size(), 1u) << name;
    EXPECT_GE(root->ctlogs.size(), 1u) << name;
    EXPECT_GE(root->certificate_authorities.size(), 1u) << name;
    for (const LogKey& log : root->tlogs) {
      // Rekor's log ID is the sha256 of its key: the parser kept both as written.
      if (log.key_details != "PKIX_ED25519") {
        EXPECT_EQ(log.log_id, KeyId(log.key)) << log.base_url;
      }
    }
  }
  auto root = ParseTrustedRoot(Slurp(kFixtures / "trusted-roots/public-good/trusted_root.json"), "pg");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->certificate_authorities[0].valid_for.end, *ParseRfc3339("2022-12-31T23:59:59Z", "t"));
  EXPECT_EQ(FindLogs(root->tlogs, root->tlogs[0].log_id).size(), 1u);
  EXPECT_TRUE(FindLogs(root->tlogs, "nope").empty());
}

TEST(TrustedRoot, KeyBasedReadsTheLogsAndTimestampAuthoritiesAlone) {
  auto text = Slurp(kFixtures / "trusted-roots/public-good/trusted_root.json");
  auto all = ParseTrustedRoot(text, "pg");
  auto keys = ParseTrustedRoot(text, "pg", RootUse::kKeyBased);
  ASSERT_TRUE(all.ok() && keys.ok());
  EXPECT_FALSE(all->certificate_authorities.empty());
  EXPECT_FALSE(all->ctlogs.empty());
  EXPECT_TRUE(keys->certificate_authorities.empty());
  EXPECT_TRUE(keys->ctlogs.empty());
  EXPECT_EQ(keys->tlogs.size(), all->tlogs.size());
  EXPECT_EQ(keys->timestamp_authorities.size(), all->timestamp_authorities.size());
  // The unread lists must still be lists; a bad CA is refused only where it is read.
  const std::string head = R"({"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1",)";
  EXPECT_FALSE(ParseTrustedRoot(head + R"("ctlogs":{}})", "r", RootUse::kKeyBased).ok());
  const std::string bad_ca =
      head + R"("certificateAuthorities":[{"certChain":{"certificates":[{"rawBytes":"AAAA"}]}}]})";
  EXPECT_FALSE(ParseTrustedRoot(bad_ca, "r").ok());
  EXPECT_TRUE(ParseTrustedRoot(bad_ca, "r", RootUse::kKeyBased).ok());
}

TEST(TrustedRoot, AMissingValidityStartIsRefused) {
  auto text = Slurp(kFixtures / "conformance/trust-root-tlog-missing-validity-start_fail/trusted_root.json");
  auto root = ParseTrustedRoot(text, "root");
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.error().message.find("validFor.start: missing"), std::string::npos) << root.error().message;
}

TEST(TrustedRoot, RefusesOtherDocuments) {
  EXPECT_FALSE(ParseTrustedRoot("{}", "r").ok());
  EXPECT_FALSE(ParseTrustedRoot(R"({"mediaType":"application/json"})", "r").ok());
  EXPECT_FALSE(ParseTrustedRoot(std::string(kMaxTrustedRoot + 1, ' '), "r").ok());
  auto bad_key = ParseTrustedRoot(
      R"({"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1","tlogs":[{"publicKey":{"rawBytes":"AAAA","validFor":{"start":"2021-01-01T00:00:00Z"}},"logId":{"keyId":"AAAA"}}]})",
      "r");
  ASSERT_FALSE(bad_key.ok());
  EXPECT_NE(bad_key.error().message.find("malformed public key"), std::string::npos) << bad_key.error().message;
}

// The cases whose bundle itself is malformed; every other conformance bundle parses.
bool MalformedBundle(const std::string& name) {
  for (const char* bad : {"bundle-malformed-json_fail", "bundle-unknown-version_fail", "bundle-negative-log-index_fail",
                          "bundle-invalid-base64-signature_fail", "bundle-empty-certificate-chain_fail"}) {
    if (name == bad) return true;
  }
  return false;
}

TEST(Bundle, EveryConformanceBundleParsesUnlessItIsMalformed) {
  int parsed = 0, refused = 0;
  for (const auto& dir : std::filesystem::directory_iterator(kFixtures / "conformance")) {
    if (!dir.is_directory()) continue;
    std::string name = dir.path().filename();
    auto b = ParseBundle(Slurp(dir.path() / "bundle.sigstore.json"), name);
    if (MalformedBundle(name)) {
      EXPECT_FALSE(b.ok()) << name;
      ++refused;
      continue;
    }
    ASSERT_TRUE(b.ok()) << name << ": " << b.error().message;
    EXPECT_TRUE(b->message_signature.has_value() != b->dsse_envelope.has_value()) << name;
    EXPECT_TRUE(b->has_public_key || !b->certificates.empty()) << name;
    ++parsed;
  }
  EXPECT_EQ(refused, 5);
  EXPECT_GE(parsed, 60);
}

TEST(Bundle, HappyPathV03Fields) {
  auto b = ParseBundle(Slurp(kFixtures / "conformance/happy-path-v0.3/bundle.sigstore.json"), "b");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->minor_version, 3);
  ASSERT_EQ(b->certificates.size(), 1u);
  ASSERT_EQ(b->tlog_entries.size(), 1u);
  const TlogEntry& e = b->tlog_entries[0];
  EXPECT_EQ(e.log_index, 79571823);
  EXPECT_EQ(e.kind, "hashedrekord");
  EXPECT_EQ(e.kind_version, "0.0.1");
  EXPECT_EQ(e.integrated_time.value_or(0), 1710869186);
  EXPECT_FALSE(e.signed_entry_timestamp.empty());
  ASSERT_TRUE(e.inclusion_proof.has_value());
  EXPECT_EQ(e.inclusion_proof->tree_size, 75408393);
  EXPECT_EQ(e.inclusion_proof->hashes.size(), 11u);
  EXPECT_EQ(e.inclusion_proof->root_hash.size(), 32u);
  EXPECT_EQ(e.canonicalized_body.rfind(R"({"apiVersion":"0.0.1","kind":"hashedrekord")", 0), 0u);
  ASSERT_TRUE(b->message_signature.has_value());
  EXPECT_EQ(b->message_signature->digest_algorithm, "SHA2_256");
  EXPECT_EQ(b->message_signature->digest.size(), 32u);
}

TEST(Bundle, DsseAndTimestamps) {
  auto b = ParseBundle(Slurp(kFixtures / "conformance/rekor2-dsse-happy-path/bundle.sigstore.json"), "b");
  ASSERT_TRUE(b.ok()) << b.error().message;
  ASSERT_TRUE(b->dsse_envelope.has_value());
  EXPECT_EQ(b->dsse_envelope->payload_type, "application/vnd.in-toto+json");
  EXPECT_EQ(b->dsse_envelope->signatures.size(), 1u);
  EXPECT_EQ(b->rfc3161_timestamps.size(), 1u);
  EXPECT_FALSE(b->tlog_entries[0].integrated_time.has_value() && *b->tlog_entries[0].integrated_time != 0);
}

TEST(Bundle, ADsseEnvelopeAloneParsesWithTheSameRules) {
  auto e = ParseDsseEnvelope(
      R"({"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"sig":"AAAA"}]})", "e");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->payload, "{}");
  EXPECT_FALSE(ParseDsseEnvelope(R"({"payloadType":"t","payload":"","signatures":[]})", "e").ok());
  EXPECT_FALSE(ParseDsseEnvelope("[]", "e").ok());
}

TEST(Bundle, RefusesBothOrNeitherContent) {
  const std::string head =
      R"({"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":"x"}})";
  EXPECT_FALSE(ParseBundle(head + "}", "b").ok());
  EXPECT_TRUE(ParseBundle(head + R"(,"messageSignature":{"signature":"AAAA"}})", "b").ok());
  EXPECT_FALSE(
      ParseBundle(
          head +
              R"(,"messageSignature":{"signature":"AAAA"},"dsseEnvelope":{"payloadType":"t","payload":"","signatures":[{"sig":"AAAA"}]}})",
          "b")
          .ok());
}

}  // namespace
}  // namespace imgtool::sigstore
