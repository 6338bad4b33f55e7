// Keyless image signatures (keyless.h) on the public sigstore-conformance vectors: a
// v0.1 bundle rewritten into cosign's legacy layer annotations verifies through the same
// verifier, up to the one check only an image signature has (its payload must name the
// image; a.txt is no simple-signing payload); a bundle stored as an artifact is judged
// against the image digest. Images signed end to end: tests/sigstore_images.sh.
#include "sign/keyless.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "oci/base64.h"
#include "oci/canonical_json.h"
#include "oci/hex.h"

namespace imgtool::sign {
namespace {

const std::filesystem::path kFixtures = IMGTOOL_SIGSTORE_FIXTURES;
const sigstore::IdentityPolicy kSigner{
    "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/"
    "extremely-dangerous-oidc-beacon.yml@refs/heads/main",
    {},
    "https://token.actions.githubusercontent.com",
    {}};

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

KeylessPolicy Policy(const sigstore::IdentityPolicy& id = kSigner) {
  auto root = sigstore::ParseTrustedRoot(Slurp(kFixtures / "trusted-roots/public-good/trusted_root.json"), "root");
  EXPECT_TRUE(root.ok());
  return {id, std::make_shared<const sigstore::TrustedRoot>(std::move(*root)), {}};
}

// happy-path-v0.1 as cosign's legacy layer over a.txt.
SignatureLayer LegacyLayer() {
  auto b = sigstore::ParseBundle(Slurp(kFixtures / "conformance/happy-path-v0.1/bundle.sigstore.json"), "b");
  EXPECT_TRUE(b.ok());
  const sigstore::TlogEntry& e = b->tlog_entries[0];
  oci::Json rekor = {{"SignedEntryTimestamp", oci::Base64Encode(e.signed_entry_timestamp)},
                     {"Payload",
                      {{"body", oci::Base64Encode(e.canonicalized_body)},
                       {"integratedTime", *e.integrated_time},
                       {"logIndex", e.log_index},
                       {"logID", oci::HexEncode(e.log_id)}}}};
  SignatureLayer l;
  l.payload = Slurp(kFixtures / "conformance/a.txt");
  l.descriptor.media_type = "application/vnd.dev.cosign.simplesigning.v1+json";
  l.descriptor.digest = oci::Digest::Of(l.payload);
  l.descriptor.annotations[std::string(kSignatureAnnotation)] = oci::Base64Encode(b->message_signature->signature);
  l.descriptor.annotations[std::string(kCertificateAnnotation)] = sigstore::CertificatePem(b->certificates[0]);
  l.descriptor.annotations[std::string(kRekorBundleAnnotation)] = rekor.dump();
  return l;
}

const oci::Digest kImage = oci::Digest::Of("an image manifest");

TEST(Keyless, LegacyLayerBecomesABundleThatVerifiesUpToThePayloadClaims) {
  auto b = BundleFromLegacyLayer(LegacyLayer());
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->minor_version, 1);
  ASSERT_EQ(b->tlog_entries.size(), 1u);
  EXPECT_EQ(b->tlog_entries[0].kind, "hashedrekord");
  EXPECT_EQ(b->tlog_entries[0].kind_version, "0.0.1");
  Decision d = VerifyKeylessSignatures({LegacyLayer()}, {}, kImage, Policy());
  ASSERT_EQ(d.signatures.size(), 1u);
  EXPECT_FALSE(d.ok);
  // Everything Sigstore checks passed: the signer is named, the denial is the payload's.
  EXPECT_NE(d.signatures[0].key.find("extremely-dangerous-oidc-beacon"), std::string::npos) << d.signatures[0].key;
  EXPECT_NE(d.signatures[0].reason.find("payload"), std::string::npos) << d.signatures[0].reason;
}

TEST(Keyless, LegacyLayerDenialsNameTheCause) {
  Decision other =
      VerifyKeylessSignatures({LegacyLayer()}, {}, kImage, Policy({"someone@example.com", {}, kSigner.issuer, {}}));
  EXPECT_FALSE(other.ok);
  EXPECT_NE(other.reason.find("someone@example.com"), std::string::npos) << other.reason;
  EXPECT_TRUE(other.signatures[0].key.empty());

  SignatureLayer tampered = LegacyLayer();
  tampered.payload += " ";
  Decision t = VerifyKeylessSignatures({tampered}, {}, kImage, Policy());
  EXPECT_NE(t.signatures[0].reason.find("signature does not verify"), std::string::npos) << t.signatures[0].reason;

  SignatureLayer no_cert = LegacyLayer();
  no_cert.descriptor.annotations.erase(std::string(kCertificateAnnotation));
  Decision n = VerifyKeylessSignatures({no_cert}, {}, kImage, Policy());
  EXPECT_NE(n.signatures[0].reason.find("key-based"), std::string::npos) << n.signatures[0].reason;

  SignatureLayer no_rekor = LegacyLayer();
  no_rekor.descriptor.annotations.erase(std::string(kRekorBundleAnnotation));
  Decision r = VerifyKeylessSignatures({no_rekor}, {}, kImage, Policy());
  EXPECT_NE(r.signatures[0].reason.find("no transparency log entry"), std::string::npos) << r.signatures[0].reason;

  SignatureLayer bad_set = LegacyLayer();
  auto rekor = oci::ParseJson(bad_set.descriptor.annotations[std::string(kRekorBundleAnnotation)], "r");
  (*rekor)["Payload"]["integratedTime"] = (*rekor)["Payload"]["integratedTime"].get<int64_t>() + 1;
  bad_set.descriptor.annotations[std::string(kRekorBundleAnnotation)] = rekor->dump();
  EXPECT_FALSE(VerifyKeylessSignatures({bad_set}, {}, kImage, Policy()).signatures[0].ok);
  EXPECT_EQ(VerifyKeylessSignatures({}, {}, kImage, Policy()).reason.find("no keyless signature found"), 0u);
}

TEST(Keyless, ABundleArtifactIsJudgedAgainstTheImageDigest) {
  // A message-signature bundle over a.txt stored as if it referred to kImage: its digest
  // is a.txt's, not the image's, so it is denied for that reason.
  SignatureLayer l;
  l.payload = Slurp(kFixtures / "conformance/happy-path-v0.3/bundle.sigstore.json");
  l.descriptor.media_type = std::string(kBundleArtifactType);
  l.descriptor.digest = oci::Digest::Of(l.payload);
  Decision d = VerifyKeylessSignatures({}, {l}, kImage, Policy());
  EXPECT_FALSE(d.ok);
  EXPECT_NE(d.signatures[0].reason.find("not the artifact's sha256 " + kImage.hex()), std::string::npos)
      << d.signatures[0].reason;
  // The same bundle for the image whose digest is a.txt's sha256 verifies.
  auto as_image = oci::Digest::Parse("sha256:" + oci::Digest::Of(Slurp(kFixtures / "conformance/a.txt")).hex());
  ASSERT_TRUE(as_image.ok());
  EXPECT_TRUE(VerifyKeylessSignatures({}, {l}, *as_image, Policy()).ok);
  // As an attestation it is refused: a message signature attests nothing.
  EXPECT_FALSE(VerifyKeylessAttestations({}, {l}, *as_image, Policy(), "").ok);
}

}  // namespace
}  // namespace imgtool::sign
