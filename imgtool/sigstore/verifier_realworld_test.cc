// Issue 25 on sigstore-python's own bundles (tests/fixtures/realworld/sigstore, as that
// project ships them): the hash a message signature was made over is the one the bundle
// and its log entry name (a P-384 key signing sha256), and RFC 3161 timestamps that do not
// verify are skipped beside a valid Rekor integrated time. tests/realworld_sigstore.sh
// holds every bundle against sigstore-python's own verdict.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "oci/canonical_json.h"
#include "oci/hex.h"
#include "sigstore/verifier.h"

namespace imgtool::sigstore {
namespace {

const std::filesystem::path kDir = IMGTOOL_REALWORLD_SIGSTORE;
const std::filesystem::path kAssets = kDir / "sigstore-python";

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TrustedRoot RootFile(const std::string& name) {
  auto root = ParseTrustedRoot(Slurp(kDir / "roots" / name), name);
  EXPECT_TRUE(root.ok()) << root.error().message;
  return root.ok() ? *root : TrustedRoot{};
}

// sigstore-python's tsa/trust_config.json: a ClientTrustConfig around a trusted root.
TrustedRoot TsaRoot() {
  auto config = oci::ParseJson(Slurp(kAssets / "tsa/trust_config.json"), "trust_config.json");
  EXPECT_TRUE(config.ok());
  auto root = ParseTrustedRoot((*config)["trustedRoot"].dump(), "trust_config.json trustedRoot");
  EXPECT_TRUE(root.ok()) << root.error().message;
  return root.ok() ? *root : TrustedRoot{};
}

Bundle BundleFile(const std::string& name) {
  auto b = ParseBundle(Slurp(kAssets / name), name);
  EXPECT_TRUE(b.ok()) << b.error().message;
  return b.ok() ? *b : Bundle{};
}

VerifyPolicy Identity(const std::string& subject, const std::string& issuer) {
  VerifyPolicy p;
  p.identity = IdentityPolicy{subject, {}, issuer, {}};
  return p;
}

bool DeniedWith(const Result<Verified>& v, std::string_view words) {
  return !v.ok() && v.error().kind == ErrorKind::kDenied && v.error().message.find(words) != std::string::npos;
}
std::string Why(const Result<Verified>& v) { return v.ok() ? "verified" : v.error().message; }

// The staging v0.1 bundle: a P-384 key whose signature is over the artifact's sha256, as
// its messageDigest and its hashedrekord entry say.
struct P384Case {
  Bundle bundle = BundleFile("bundle.txt.sigstore");
  TrustedRoot root = RootFile("staging-current.trusted_root.json");
  Artifact artifact = ArtifactOf(Slurp(kAssets / "bundle.txt"));
  VerifyPolicy policy = Identity("a@tny.town", "https://github.com/login/oauth");
  Result<Verified> Verify() const { return VerifyBundle(bundle, root, artifact, policy); }
};

TEST(RealWorldHash, AP384KeySigningSha256VerifiesWhenTheEntrySaysSha256) {
  P384Case c;
  EXPECT_EQ(c.bundle.message_signature->digest_algorithm, "SHA2_256");
  auto v = c.Verify();
  ASSERT_TRUE(v.ok()) << Why(v);
  EXPECT_EQ(v->signer, "a@tny.town");
  // Known by its sha256 alone (the digest form of verify-blob) it verifies too.
  c.artifact = Artifact{c.artifact.sha256, std::nullopt, {}};
  EXPECT_TRUE(c.Verify().ok()) << Why(c.Verify());
}

TEST(RealWorldHash, TheEntrysDigestMustBeTheArtifactsWithThatAlgorithm) {
  P384Case c;
  // Another artifact: its sha256 is neither the bundle's nor the entry's.
  P384Case other;
  other.artifact = ArtifactOf("another file\n");
  EXPECT_TRUE(DeniedWith(other.Verify(), "is not the artifact's sha256")) << Why(other.Verify());
  // The entry names another sha256 than the artifact's (and the bundle's): its body is refused.
  P384Case moved;
  std::string& body = moved.bundle.tlog_entries[0].canonicalized_body;
  std::string hex = oci::HexEncode(c.artifact.sha256);
  size_t at = body.find(hex);
  ASSERT_NE(at, std::string::npos);
  body.replace(at, hex.size(), oci::HexEncode(Sha256("another file\n")));
  EXPECT_TRUE(DeniedWith(moved.Verify(), "tlog entry body: spec.data.hash: digest differs")) << Why(moved.Verify());
  // The entry says sha384 (with the artifact's sha384): the signature, made over the
  // sha256, does not verify over it.
  P384Case sha384;
  sha384.bundle.message_signature->digest.clear();
  sha384.bundle.message_signature->digest_algorithm.clear();
  std::string& body384 = sha384.bundle.tlog_entries[0].canonicalized_body;
  auto json = oci::ParseJson(body384, "body");
  ASSERT_TRUE(json.ok());
  (*json)["spec"]["data"]["hash"] = {{"algorithm", "sha384"},
                                     {"value", oci::HexEncode(HashOf(HashAlgorithm::kSha384, *c.artifact.bytes))}};
  body384 = json->dump();
  EXPECT_TRUE(DeniedWith(sha384.Verify(), "the signature does not verify over the artifact's sha384"))
      << Why(sha384.Verify());
  // The bundle says SHA2_384 while its entry says sha256: they must agree.
  P384Case disagree;
  disagree.bundle.message_signature->digest_algorithm = "SHA2_384";
  disagree.bundle.message_signature->digest = HashOf(HashAlgorithm::kSha384, *c.artifact.bytes);
  EXPECT_TRUE(DeniedWith(disagree.Verify(), "names SHA2_256 but the bundle's signature is over SHA2_384"))
      << Why(disagree.Verify());
  // Outside the allow-list: refused by name.
  P384Case md5;
  md5.bundle.message_signature->digest_algorithm = "MD5";
  EXPECT_TRUE(DeniedWith(md5.Verify(), "'MD5' is not SHA2_256, SHA2_384 or SHA2_512")) << Why(md5.Verify());
  // Known by its sha256 alone, an artifact whose bundle signs its sha384 cannot be checked.
  sha384.artifact = Artifact{c.artifact.sha256, std::nullopt, {}};
  EXPECT_TRUE(DeniedWith(sha384.Verify(), "only its sha256 is known")) << Why(sha384.Verify());
  EXPECT_EQ(MessageHashes(sha384.bundle), std::vector<HashAlgorithm>{HashAlgorithm::kSha384});
  EXPECT_TRUE(MessageHashes(c.bundle).empty());
}

TEST(RealWorldHash, ADigestVerifiesUnderTheHashNamedNotTheKeys) {
  Pkey key(EVP_EC_gen("P-384"), sign::PkeyFree());
  ASSERT_TRUE(key);
  for (HashAlgorithm alg : {HashAlgorithm::kSha256, HashAlgorithm::kSha384, HashAlgorithm::kSha512}) {
    std::string digest = HashOf(alg, "message");
    std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new(key.get(), nullptr),
                                                                    &EVP_PKEY_CTX_free);
    ASSERT_EQ(EVP_PKEY_sign_init(ctx.get()), 1);
    ASSERT_EQ(EVP_PKEY_CTX_set_signature_md(ctx.get(), EvpMd(alg)), 1);
    size_t len = 0;
    const auto* d = reinterpret_cast<const unsigned char*>(digest.data());
    ASSERT_EQ(EVP_PKEY_sign(ctx.get(), nullptr, &len, d, digest.size()), 1);
    std::string sig(len, '\0');
    ASSERT_EQ(EVP_PKEY_sign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, d, digest.size()), 1);
    sig.resize(len);
    EXPECT_TRUE(VerifyDigest(key, alg, digest, sig)) << ProtobufName(alg);
    EXPECT_FALSE(VerifyDigest(key, alg, HashOf(alg, "other"), sig)) << ProtobufName(alg);
  }
  // A digest of another length than the algorithm's is refused outright.
  EXPECT_FALSE(VerifyDigest(key, HashAlgorithm::kSha384, HashOf(HashAlgorithm::kSha256, "message"), "sig"));
}

// sigstore-python's tsa/bundle.txt.sigstore under its tsa/trust_config.json: neither of its
// two RFC 3161 timestamps verifies against that root's TSA, and its Rekor entry's time does.
struct TsaCase {
  Bundle bundle = BundleFile("tsa/bundle.txt.sigstore");
  TrustedRoot root = TsaRoot();
  Artifact artifact = ArtifactOf(Slurp(kAssets / "tsa/bundle.txt"));
  VerifyPolicy policy = Identity("alexis.challande@trailofbits.com", "https://accounts.google.com");
  Result<Verified> Verify() const { return VerifyBundle(bundle, root, artifact, policy); }
};

TEST(RealWorldTimes, FailingTimestampsAreSkippedAndTheRekorTimeCounts) {
  TsaCase c;
  ASSERT_EQ(c.bundle.rfc3161_timestamps.size(), 2u);
  auto v = c.Verify();
  ASSERT_TRUE(v.ok()) << Why(v);
  ASSERT_EQ(v->times.size(), 1u);
  EXPECT_NE(v->times[0].source.find("rekor integrated time"), std::string::npos) << v->times[0].source;
}

TEST(RealWorldTimes, AThresholdTheBundleCannotMeetIsDenied) {
  TsaCase c;
  c.policy.times.threshold = 2;
  EXPECT_TRUE(
      DeniedWith(c.Verify(), "1 source (1 log integrated time, 0 timestamp authorities), the timestamp threshold is 2"))
      << Why(c.Verify());
  c.policy.times = TimePolicy{1, 1, false};  // cosign --use-signed-timestamps
  EXPECT_TRUE(DeniedWith(c.Verify(), "the signed timestamp threshold is 1")) << Why(c.Verify());
  c.policy.times = TimePolicy{0, 0, false};
  EXPECT_EQ(c.Verify().error().kind, ErrorKind::kInvalidInput);
}

TEST(RealWorldTimes, StrictModeRefusesTheBundle) {
  TsaCase c;
  c.policy.times.strict = true;
  EXPECT_TRUE(DeniedWith(c.Verify(), "timestamp 0: ")) << Why(c.Verify());
}

TEST(RealWorldTimes, ARepeatedTimestampIsRefusedAsSigstorePythonDoes) {
  TsaCase c;
  c.bundle = BundleFile("tsa/bundle.duplicate.sigstore");
  EXPECT_TRUE(DeniedWith(c.Verify(), "timestamps 0 and 2 are the same bytes")) << Why(c.Verify());
  // A log entry listed twice proves its time once: refused too.
  TsaCase twice;
  twice.bundle.tlog_entries.push_back(twice.bundle.tlog_entries[0]);
  EXPECT_TRUE(DeniedWith(twice.Verify(), "is listed twice")) << Why(twice.Verify());
}

TEST(RealWorldTimes, MoreThan32TimestampsAreRefused) {
  auto many = ParseBundle(Slurp(kAssets / "tsa/bundle.many_timestamp.sigstore"), "many");
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.error().message.find("33 items, more than 32"), std::string::npos) << many.error().message;
}

}  // namespace
}  // namespace imgtool::sigstore
