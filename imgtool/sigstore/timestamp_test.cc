// RFC 3161 timestamps on the public conformance vectors (tests/fixtures/sigstore): each
// case's first timestamp over its bundle's signature, against the case's trusted root
// (public-good when it ships none), and on hand-made damage to both.
#include "sigstore/timestamp.h"

#include <gtest/gtest.h>
#include <openssl/ts.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

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

// One conformance case, as the verifier sees it: the timestamp, what it stamps, whom to trust.
struct Case {
  std::string timestamp;  // the first rfc3161Timestamps entry, DER
  std::string signed_bytes;
  TrustedRoot root;
};

Case Load(const std::string& name) {
  std::filesystem::path dir = kFixtures / "conformance" / name;
  auto bundle = ParseBundle(Slurp(dir / "bundle.sigstore.json"), name);
  EXPECT_TRUE(bundle.ok()) << name << ": " << bundle.error().message;
  std::filesystem::path root_file = dir / "trusted_root.json";
  if (!std::filesystem::exists(root_file)) root_file = kFixtures / "trusted-roots/public-good/trusted_root.json";
  auto root = ParseTrustedRoot(Slurp(root_file), root_file.string());
  EXPECT_TRUE(root.ok()) << name << ": " << root.error().message;
  Case c;
  if (!bundle.ok() || !root.ok()) return c;
  c.root = *root;
  EXPECT_FALSE(bundle->rfc3161_timestamps.empty()) << name;
  if (!bundle->rfc3161_timestamps.empty()) c.timestamp = bundle->rfc3161_timestamps[0];
  if (bundle->message_signature) c.signed_bytes = bundle->message_signature->signature;
  if (bundle->dsse_envelope && !bundle->dsse_envelope->signatures.empty()) {
    c.signed_bytes = bundle->dsse_envelope->signatures[0].sig;
  }
  EXPECT_FALSE(c.signed_bytes.empty()) << name;
  return c;
}

Result<Time> Verify(const Case& c) { return VerifyTimestamp(c.timestamp, c.signed_bytes, c.root); }

bool Mentions(const Error& e, const std::string& what) { return e.message.find(what) != std::string::npos; }

// Where `part` lies within the response's DER: [begin, end), empty when it is not there.
std::pair<size_t, size_t> SignedRegion(const std::string& der, const std::string& part) {
  size_t at = part.empty() ? std::string::npos : der.find(part);
  return at == std::string::npos ? std::pair<size_t, size_t>{0, 0} : std::pair{at, at + part.size()};
}

std::unique_ptr<TS_RESP, decltype(&TS_RESP_free)> ParsedResponse(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  return {d2i_TS_RESP(nullptr, &p, static_cast<long>(der.size())), &TS_RESP_free};
}

// The TSTInfo's DER (the token's signed content), as OpenSSL parsed it.
std::string TstInfoDer(const std::string& der) {
  auto resp = ParsedResponse(der);
  unsigned char* out = nullptr;
  int n = resp ? i2d_TS_TST_INFO(TS_RESP_get_tst_info(resp.get()), &out) : -1;
  std::string s = n > 0 ? std::string(reinterpret_cast<char*>(out), static_cast<size_t>(n)) : "";
  OPENSSL_free(out);
  return s;
}

// The signer's signature value.
std::string SignatureValue(const std::string& der) {
  auto resp = ParsedResponse(der);
  if (!resp) return "";
  STACK_OF(PKCS7_SIGNER_INFO)* infos = PKCS7_get_signer_info(TS_RESP_get_token(resp.get()));
  if (infos == nullptr || sk_PKCS7_SIGNER_INFO_num(infos) != 1) return "";
  const ASN1_OCTET_STRING* sig = sk_PKCS7_SIGNER_INFO_value(infos, 0)->enc_digest;
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(sig)),
                     static_cast<size_t>(ASN1_STRING_length(sig)));
}

class Verifies : public testing::TestWithParam<std::string> {};

TEST_P(Verifies, AndGenTimeIsInTheTsaValidity) {
  Case c = Load(GetParam());
  auto t = Verify(c);
  ASSERT_TRUE(t.ok()) << t.error().message;
  bool within_some = false;
  for (const CertAuthority& ca : c.root.timestamp_authorities) within_some |= ca.valid_for.Contains(*t);
  EXPECT_TRUE(within_some) << FormatRfc3339(*t);
}

INSTANTIATE_TEST_SUITE_P(Conformance, Verifies,
                         testing::Values("rekor2-happy-path", "rekor2-timestamp-with-embedded-cert",
                                         "rekor2-timestamp-without-embedded-cert",
                                         "rekor2-timestamp-with-expired-cert-chain",
                                         "trust-root-tsa-validity-end-inclusive", "rekor2-dsse-happy-path",
                                         "managed-key-happy-path", "rekor2-checkpoint-cosigned",
                                         // Refused elsewhere (the Fulcio leaf at genTime), not here:
                                         "rekor2-timestamp-with-incorrect-time_fail"),
                         [](const testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& ch : n) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return n;
                         });

struct Refusal {
  const char* name;
  const char* why;  // a piece of the message that says which rule refused it
};
void PrintTo(const Refusal& r, std::ostream* os) { *os << r.name; }

class Refuses : public testing::TestWithParam<Refusal> {};

TEST_P(Refuses, WithTheRuleThatSaysNo) {
  Case c = Load(GetParam().name);
  auto t = Verify(c);
  ASSERT_FALSE(t.ok()) << GetParam().name << " verified at " << FormatRfc3339(*t);
  EXPECT_EQ(t.error().kind, ErrorKind::kDenied);
  EXPECT_TRUE(Mentions(t.error(), GetParam().why)) << t.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Conformance, Refuses,
    testing::Values(Refusal{"rekor2-timestamp-payload-mismatch_fail", "message imprint"},
                    Refusal{"rekor2-timestamp-untrusted-tsa-with-embedded-cert_fail", "not signed by the TSA"},
                    Refusal{"rekor2-timestamp-untrusted-tsa-without-embedded-cert_fail", "not signed by the TSA"},
                    Refusal{"rekor2-timestamp-outside-trust-root-tsa-validity_fail", "outside the TSA's validity"},
                    Refusal{"rekor2-timestamp-outside-tsa-cert-validity_fail", "certificate has expired"}),
    [](const testing::TestParamInfo<Refusal>& p) {
      std::string n = p.param.name;
      for (char& ch : n) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      return n;
    });

TEST(Timestamp, GenTimeIsTheTokensOwn) {
  // The end-inclusive case moved its TSA's validFor.end onto the token's genTime
  // (2025-06-12T12:02:20Z, its README), so that end is exactly what must come back.
  Case c = Load("trust-root-tsa-validity-end-inclusive");
  auto t = Verify(c);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(*t, c.root.timestamp_authorities[0].valid_for.end);
  EXPECT_EQ(FormatRfc3339(*t), "2025-06-12T12:02:20Z");
  // The happy path is the same token.
  auto happy = Verify(Load("rekor2-happy-path"));
  ASSERT_TRUE(happy.ok());
  EXPECT_EQ(*happy, *t);
}

TEST(Timestamp, TheTsaValidityBoundsAreInclusiveAndChecked) {
  Case c = Load("rekor2-happy-path");
  Time t = *Verify(c);
  CertAuthority& ca = c.root.timestamp_authorities[0];
  ca.valid_for = Validity{t, t};
  EXPECT_TRUE(Verify(c).ok());
  ca.valid_for = Validity{t + 1, Validity{}.end};
  EXPECT_FALSE(Verify(c).ok());
  ca.valid_for = Validity{Validity{}.start, t - 1};
  EXPECT_FALSE(Verify(c).ok());
}

TEST(Timestamp, ADifferentSignatureIsRefused) {
  Case c = Load("rekor2-happy-path");
  ASSERT_TRUE(Verify(c).ok());
  c.signed_bytes[c.signed_bytes.size() / 2] ^= 0x01;
  auto t = Verify(c);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Mentions(t.error(), "message imprint")) << t.error().message;
  EXPECT_FALSE(VerifyTimestamp(c.timestamp, "", c.root).ok());
}

TEST(Timestamp, OnlyTheTrustedRootsTsasCount) {
  // The staging TSA's token against the public-good root: a real TSA, not this one.
  Case c = Load("rekor2-timestamp-with-embedded-cert");
  Case prod = Load("managed-key-happy-path");
  EXPECT_FALSE(VerifyTimestamp(c.timestamp, c.signed_bytes, prod.root).ok());
  // No authorities at all.
  TrustedRoot none = c.root;
  none.timestamp_authorities.clear();
  auto t = VerifyTimestamp(c.timestamp, c.signed_bytes, none);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Mentions(t.error(), "no timestamp authorities")) << t.error().message;
  // Another, unrelated authority listed first does not stop the right one from vouching.
  TrustedRoot both = c.root;
  both.timestamp_authorities.insert(both.timestamp_authorities.begin(), prod.root.timestamp_authorities[0]);
  EXPECT_TRUE(VerifyTimestamp(c.timestamp, c.signed_bytes, both).ok());
}

TEST(Timestamp, TheEmbeddedSignerCertificateIsNotTrustedByItself) {
  // The token embeds the staging TSA's signing certificate, which chains to the staging
  // TSA root. A trusted root naming another signing certificate under that same root must
  // not let the embedded one stand in for it.
  Case c = Load("rekor2-timestamp-with-embedded-cert");
  ASSERT_TRUE(Verify(c).ok());
  Case other = Load("rekor2-timestamp-with-expired-cert-chain");
  CertAuthority& ca = c.root.timestamp_authorities[0];
  ASSERT_EQ(ca.chain.size(), 2u);
  ca.chain.front() = other.root.timestamp_authorities[0].chain.front();
  auto t = Verify(c);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Mentions(t.error(), "not signed by the TSA's signing certificate")) << t.error().message;
  // A chain without its signing certificate, or without its anchor, is no chain.
  c = Load("rekor2-timestamp-with-embedded-cert");
  c.root.timestamp_authorities[0].chain.erase(c.root.timestamp_authorities[0].chain.begin());
  EXPECT_FALSE(Verify(c).ok());
  c = Load("rekor2-timestamp-with-embedded-cert");
  c.root.timestamp_authorities[0].chain.pop_back();
  EXPECT_FALSE(Verify(c).ok());
  c.root.timestamp_authorities[0].chain.clear();
  EXPECT_FALSE(Verify(c).ok());
}

TEST(Timestamp, TheExpiredChainIsCheckedAtGenTimeNotNow) {
  // Its certificates lived eight minutes in 2025; the token is from within them. The
  // refused twin differs only in being stamped after they expired.
  Case ok = Load("rekor2-timestamp-with-expired-cert-chain");
  Case late = Load("rekor2-timestamp-outside-tsa-cert-validity_fail");
  auto t = Verify(ok);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto signing = ok.root.timestamp_authorities[0].chain.front();
  EXPECT_LT(X509_cmp_time(X509_get0_notAfter(signing.get()), nullptr), 0) << "the chain was meant to be expired now";
  // The late token verifies under the same trust except for the chain's lifetime.
  EXPECT_FALSE(VerifyTimestamp(late.timestamp, late.signed_bytes, ok.root).ok());
}

TEST(Timestamp, DamagedDerIsRefusedCleanly) {
  Case c = Load("rekor2-timestamp-without-embedded-cert");
  ASSERT_TRUE(Verify(c).ok());
  for (const std::string& bad : {std::string(), std::string("garbage"), std::string(64, '\0'),
                                 std::string("\x30\x80", 2), c.timestamp + '\0', c.timestamp + c.timestamp}) {
    auto t = VerifyTimestamp(bad, c.signed_bytes, c.root);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().kind, ErrorKind::kInvalidInput) << t.error().message;
  }
  // Every truncation is refused.
  for (size_t n = 0; n < c.timestamp.size(); ++n) {
    EXPECT_FALSE(VerifyTimestamp(c.timestamp.substr(0, n), c.signed_bytes, c.root).ok()) << n;
  }
  // Every changed byte of what the TSA signed (the TSTInfo) or of its signature is refused.
  // (Elsewhere OpenSSL's parser forgives some envelope changes, e.g. a SET tag's constructed
  // bit or the signature algorithm's OID, that leave the signed content as it was.)
  for (auto [begin, end] :
       {SignedRegion(c.timestamp, TstInfoDer(c.timestamp)), SignedRegion(c.timestamp, SignatureValue(c.timestamp))}) {
    ASSERT_LT(begin, end);
    for (size_t n = begin; n < end; ++n) {
      std::string flipped = c.timestamp;
      flipped[n] ^= 0x20;
      EXPECT_FALSE(VerifyTimestamp(flipped, c.signed_bytes, c.root).ok()) << n;
    }
  }
}

TEST(Timestamp, ARejectionOrAnOversizedResponseIsRefused) {
  Case c = Load("rekor2-happy-path");
  // TimeStampResp { status { status rejection(2) } }: no token.
  auto rejected = VerifyTimestamp(std::string("\x30\x05\x30\x03\x02\x01\x02", 7), c.signed_bytes, c.root);
  ASSERT_FALSE(rejected.ok());
  EXPECT_TRUE(Mentions(rejected.error(), "status 2")) << rejected.error().message;
  // Granted but no token (OpenSSL's parser already refuses it).
  auto empty = VerifyTimestamp(std::string("\x30\x05\x30\x03\x02\x01\x00", 7), c.signed_bytes, c.root);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, ErrorKind::kInvalidInput) << empty.error().message;
  auto big = VerifyTimestamp(std::string(kMaxTimestamp + 1, '\x30'), c.signed_bytes, c.root);
  ASSERT_FALSE(big.ok());
  EXPECT_TRUE(Mentions(big.error(), "at most")) << big.error().message;
}

}  // namespace
}  // namespace imgtool::sigstore
