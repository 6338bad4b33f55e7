#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <tuple>

#include "oci/base64.h"
#include "oci/canonical_json.h"
#include "sign_core/dsse.h"
#include "sign_core/encrypted_key.h"
#include "sign_core/keys.h"
#include "sign_core/payload.h"
#include "sign_core/verify.h"

namespace imgtool::sign {
namespace {

const oci::Digest kImage = oci::Digest::Of("image manifest");
const oci::Digest kOther = oci::Digest::Of("another manifest");
// Cheap scrypt for tests; files name their parameters, so loading follows them.
const ScryptParams kFast{1024, 8, 1};

Pkey NewKey() {
  auto k = GenerateP256Key();
  EXPECT_TRUE(k.ok());
  return *k;
}

SignatureLayer Signed(const Pkey& key, const std::string& payload) {
  auto sig = SignSha256(key, payload);
  EXPECT_TRUE(sig.ok());
  oci::Descriptor d{std::string(kSimpleSigningMediaType),
                    oci::Digest::Of(payload),
                    static_cast<int64_t>(payload.size()),
                    {{std::string(kSignatureAnnotation), oci::Base64Encode(*sig)}},
                    std::nullopt};
  return {d, payload};
}

std::string PayloadFor(const oci::Digest& d) { return *SimpleSigningPayload("127.0.0.1:5000/team/img", d); }

TEST(Payload, ByteForByteAsCosign) {
  oci::Digest d = *oci::Digest::Parse("sha256:" + std::string(64, 'a'));
  EXPECT_EQ(
      *SimpleSigningPayload("127.0.0.1:5000/team/img", d),
      R"({"critical":{"identity":{"docker-reference":"127.0.0.1:5000/team/img"},"image":{"docker-manifest-digest":"sha256:)" +
          std::string(64, 'a') + R"("},"type":"cosign container image signature"},"optional":null})");
  // Annotations: sorted keys, Go's HTML-safe escaping.
  EXPECT_EQ(
      *SimpleSigningPayload("r", d, {{"z", "1"}, {"a", "<b>&\"q\""}}),
      R"({"critical":{"identity":{"docker-reference":"r"},"image":{"docker-manifest-digest":"sha256:)" +
          std::string(64, 'a') +
          R"("},"type":"cosign container image signature"},"optional":{"a":"\u003cb\u003e\u0026\"q\"","z":"1"}})");
  EXPECT_FALSE(SimpleSigningPayload("r", d, {{"k", "a\nb"}}).ok());
}

TEST(Payload, ParsesClaims) {
  auto c = ParseSimpleSigningPayload(*SimpleSigningPayload("h/r", kImage, {{"k", "v"}}), "p");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->type, kSimpleSigningType);
  EXPECT_EQ(c->docker_reference, "h/r");
  EXPECT_EQ(c->manifest_digest, kImage.str());
  EXPECT_EQ(c->annotations.at("k"), "v");
  EXPECT_FALSE(ParseSimpleSigningPayload(R"({"critical":{},"critical":{}})", "p").ok());
}

TEST(Keys, EncryptedPemRoundTrip) {
  Pkey key = NewKey();
  auto pem = EncryptedPrivateKeyPem(key, "pw", kFast);
  ASSERT_TRUE(pem.ok());
  EXPECT_EQ(pem->rfind("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n", 0), 0u);
  auto back = ParseEncryptedPrivateKeyPem(*pem, "pw", "k");
  ASSERT_TRUE(back.ok()) << back.error().message;
  auto pub = ParsePublicKeyPem(*PublicKeyPem(key), "pub");
  ASSERT_TRUE(pub.ok());
  auto sig = SignSha256(*back, "msg");
  ASSERT_TRUE(sig.ok());
  EXPECT_TRUE(VerifySha256(*pub, "msg", *sig));
  EXPECT_FALSE(VerifySha256(*pub, "msg!", *sig));
  // The older PEM type cosign wrote loads too.
  std::string old = *pem;
  for (std::string from : {"SIGSTORE"}) {
    size_t pos = 0;
    while ((pos = old.find(from, pos)) != std::string::npos) old.replace(pos, from.size(), "COSIGN");
  }
  EXPECT_TRUE(ParseEncryptedPrivateKeyPem(old, "pw", "k").ok());
}

TEST(Keys, WrongPasswordIsDenied) {
  auto pem = EncryptedPrivateKeyPem(NewKey(), "right", kFast);
  auto k = ParseEncryptedPrivateKeyPem(*pem, "wrong", "cosign.key");
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error().kind, ErrorKind::kDenied);
  EXPECT_EQ(k.error().message, "cosign.key: wrong password (or the key file was altered)");
}

TEST(Keys, EnvelopeFieldsAsCosign) {
  auto sealed = SealWithPassword("secret", "pw", kFast);
  auto j = oci::ParseJson(*sealed, "k");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["kdf"]["name"], "scrypt");
  EXPECT_EQ((*j)["kdf"]["params"]["N"], 1024);
  EXPECT_EQ(oci::Base64Decode((*j)["kdf"]["salt"].get<std::string>(), "s")->size(), 32u);
  EXPECT_EQ((*j)["cipher"]["name"], "nacl/secretbox");
  EXPECT_EQ(oci::Base64Decode((*j)["cipher"]["nonce"].get<std::string>(), "n")->size(), 24u);
  EXPECT_EQ(*OpenWithPassword(*sealed, "pw", "k"), "secret");
}

// `sealed` with one field replaced, as a hostile key file would have it.
std::string Altered(const std::string& sealed, const std::function<void(oci::Json&)>& change) {
  auto j = oci::ParseJson(sealed, "k");
  EXPECT_TRUE(j.ok());
  change(*j);
  return j->dump();
}

TEST(Keys, ScryptBombIsRefusedBeforeAnyWork) {
  auto sealed = SealWithPassword("secret", "pw", kFast);
  ASSERT_TRUE(sealed.ok());
  // N=2^20 r=32 p=16: 4 GiB of memory and over a minute before the password is checked.
  std::string bomb = Altered(*sealed, [](oci::Json& j) {
    j["kdf"]["params"] = {{"N", 1u << 20}, {"r", 32}, {"p", 16}};
  });
  auto start = std::chrono::steady_clock::now();
  auto got = OpenWithPassword(bomb, "pw", "cosign.key");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(got.error().message,
            "cosign.key: $.kdf.params: scrypt N=1048576 r=32 p=16 asks for more work than cosign's keys "
            "(at most N=65536 r=8 p=1)");
  EXPECT_LT(seconds, 2.0);
  // Each factor alone is capped.
  for (auto [n, r, p] : {std::tuple{131072, 8, 1}, std::tuple{65536, 9, 1}, std::tuple{65536, 8, 2}}) {
    // Captured by name: clang 14 cannot capture structured bindings.
    std::string one = Altered(*sealed, [&, n = n, r = r, p = p](oci::Json& j) {
      j["kdf"]["params"] = {{"N", n}, {"r", r}, {"p", p}};
    });
    EXPECT_NE(OpenWithPassword(one, "pw", "k").error().message.find("asks for more work"), std::string::npos);
  }
  std::string odd = Altered(*sealed, [](oci::Json& j) { j["kdf"]["params"]["N"] = 1000; });
  EXPECT_EQ(OpenWithPassword(odd, "pw", "k").error().message,
            "k: $.kdf.params: scrypt N=1000 r=8 p=1 is not valid (N a power of two, r and p at least 1)");
  // We never write a key we would refuse to read.
  EXPECT_EQ(SealWithPassword("secret", "pw", ScryptParams{1u << 20, 8, 1}).error().message,
            "sealing a key: $.kdf.params: scrypt N=1048576 r=8 p=1 asks for more work than cosign's keys "
            "(at most N=65536 r=8 p=1)");
}

TEST(Keys, CosignsOwnParametersStillLoad) {
  // N=2^16 is what cosign writes now, N=2^15 what it wrote before (and tests/fixtures'
  // cosign_fixture.py writes); both load.
  for (ScryptParams params : {ScryptParams{}, ScryptParams{32768, 8, 1}}) {
    Pkey key = NewKey();
    auto pem = EncryptedPrivateKeyPem(key, "pw", params);
    ASSERT_TRUE(pem.ok()) << pem.error().message;
    auto back = ParseEncryptedPrivateKeyPem(*pem, "pw", "cosign.key");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(*PublicKeyPem(*back), *PublicKeyPem(key));
  }
}

TEST(Keys, EnvelopeSizesAreBounded) {
  auto sealed = SealWithPassword("secret", "pw", kFast);
  ASSERT_TRUE(sealed.ok());
  auto open = [&](const std::function<void(oci::Json&)>& change) {
    return OpenWithPassword(Altered(*sealed, change), "pw", "k").error().message;
  };
  EXPECT_EQ(open([](oci::Json& j) { j["kdf"]["salt"] = oci::Base64Encode(std::string(65, 's')); }),
            "k: $.kdf.salt: 65 bytes, want 1 to 64");
  EXPECT_EQ(open([](oci::Json& j) { j["cipher"]["nonce"] = oci::Base64Encode(std::string(23, 'n')); }),
            "k: $.cipher.nonce: 23 bytes, want 24");
  EXPECT_EQ(open([](oci::Json& j) { j["ciphertext"] = oci::Base64Encode(std::string((16 << 10) + 1, 'c')); }),
            "k: $.ciphertext: 16385 bytes, want 16 to 16384");
  std::string big_pem = "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n" + std::string(40 << 10, 'A') +
                        "\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n";
  EXPECT_EQ(ParseEncryptedPrivateKeyPem(big_pem, "pw", "cosign.key").error().message,
            "cosign.key: 41053 bytes, more than a cosign private key's 32768");
}

// Found by tests/fuzz (fuzz_cosign_key): the envelope's members were read with value(),
// which throws on a document that is not an object (the JSON string "{") or a member of
// another type, and the exception ended the process.
TEST(Keys, EnvelopeOfAnotherShapeIsInvalidInput) {
  for (const char* doc : {R"("{")", "[1]", "null", R"({"kdf":"scrypt"})", R"({"kdf":{"name":1}})",
                          R"({"kdf":{"name":"scrypt","params":[1]},"cipher":{"name":"nacl/secretbox"}})"}) {
    auto r = OpenWithPassword(doc, "pw", "k");
    ASSERT_FALSE(r.ok()) << doc;
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput) << doc;
  }
  EXPECT_EQ(OpenWithPassword(R"("{")", "pw", "k").error().message, "k: $: want a JSON object");
}

TEST(Keys, ScryptLimitsAreTheCallers) {
  auto sealed = SealWithPassword("secret", "pw", kFast);  // N=1024, r=8, p=1
  ScryptLimits low;
  low.max_n = 512;
  EXPECT_EQ(OpenWithPassword(*sealed, "pw", "k", low).error().message,
            "k: $.kdf.params: scrypt N=1024 r=8 p=1 asks for more work than cosign's keys (at most N=512 r=8 p=1)");
  EXPECT_EQ(*OpenWithPassword(*sealed, "pw", "k"), "secret");
  // r is checked before it is narrowed: 2^32 + 8 is not read as 8.
  std::string wide = *sealed;
  wide.replace(wide.find("\"r\":8"), 5, "\"r\":4294967304");
  EXPECT_EQ(OpenWithPassword(wide, "pw", "k").error().kind, ErrorKind::kInvalidInput);
}

TEST(Verify, AcceptsATrustedSignatureOverThisImage) {
  Pkey key = NewKey();
  Decision d = VerifySignatures({Signed(key, PayloadFor(kImage))}, kImage, {{"a.pub", key}});
  EXPECT_TRUE(d.ok) << d.reason;
  EXPECT_EQ(d.verified_keys, std::vector<std::string>{"a.pub"});
  EXPECT_EQ(d.signatures.at(0).docker_reference, "127.0.0.1:5000/team/img");
}

TEST(Verify, EachCauseHasItsOwnReason) {
  Pkey key = NewKey(), other = NewKey();
  std::vector<TrustedKey> trusted{{"a.pub", key}};
  SignatureLayer good = Signed(key, PayloadFor(kImage));

  SignatureLayer changed_payload = good;
  changed_payload.payload[10] = 'X';
  EXPECT_EQ(VerifySignatures({changed_payload}, kImage, trusted).reason.rfind("payload altered after signing", 0), 0u);

  SignatureLayer changed_sig = good;
  changed_sig.descriptor.annotations[std::string(kSignatureAnnotation)] = "MEUCIQ==";
  EXPECT_EQ(VerifySignatures({changed_sig}, kImage, trusted).reason,
            "signature malformed: the annotation is not a base64 DER ECDSA signature");

  EXPECT_EQ(VerifySignatures({Signed(other, PayloadFor(kImage))}, kImage, trusted).reason,
            "signature does not verify with any trusted key (tried: a.pub)");

  Decision moved = VerifySignatures({good}, kOther, trusted);
  EXPECT_FALSE(moved.ok);
  EXPECT_EQ(moved.reason.rfind("payload signs " + kImage.str() + ", not this image " + kOther.str(), 0), 0u);

  EXPECT_EQ(VerifySignatures({}, kImage, trusted).reason,
            "no signatures for " + kImage.str() + " (sha256-" + kImage.hex() + ".sig is missing or empty)");

  std::string wrong_type = PayloadFor(kImage);
  wrong_type.replace(wrong_type.find("cosign container image signature"), 6, "atomic");
  EXPECT_EQ(VerifySignatures({Signed(key, wrong_type)}, kImage, trusted).reason.rfind("payload type is", 0), 0u);
}

TEST(Verify, OneGoodSignatureAmongBadOnesIsEnough) {
  Pkey key = NewKey(), other = NewKey();
  Decision d =
      VerifySignatures({Signed(other, PayloadFor(kImage)), Signed(key, PayloadFor(kImage))}, kImage, {{"a.pub", key}});
  EXPECT_TRUE(d.ok);
  EXPECT_FALSE(d.signatures[0].ok);
  EXPECT_TRUE(d.signatures[1].ok);
}

SignatureLayer SignedStatement(const Pkey& key, const std::string& statement) {
  std::string envelope =
      DsseEnvelope(kInTotoPayloadType, statement, *SignSha256(key, Pae(kInTotoPayloadType, statement)));
  oci::Descriptor d{
      std::string(kDsseMediaType), oci::Digest::Of(envelope), static_cast<int64_t>(envelope.size()), {}, std::nullopt};
  return {d, envelope};
}

SignatureLayer Attestation(const Pkey& key, const oci::Digest& subject) {
  std::string statement =
      *InTotoStatement("h/r", subject, "https://spdx.dev/Document", R"({"spdxVersion":"SPDX-2.3"})");
  std::string envelope =
      DsseEnvelope(kInTotoPayloadType, statement, *SignSha256(key, Pae(kInTotoPayloadType, statement)));
  oci::Descriptor d{
      std::string(kDsseMediaType), oci::Digest::Of(envelope), static_cast<int64_t>(envelope.size()), {}, std::nullopt};
  return {d, envelope};
}

TEST(Attest, PaeAndStatement) {
  EXPECT_EQ(Pae("t", "body"), "DSSEv1 1 t 4 body");
  auto s = InTotoStatement("h/r", kImage, "https://spdx.dev/Document", "{\"a\": 1}\n");
  EXPECT_EQ(
      *s,
      R"({"_type":"https://in-toto.io/Statement/v0.1","predicateType":"https://spdx.dev/Document","subject":[{"name":"h/r","digest":{"sha256":")" +
          kImage.hex() + R"("}}],"predicate":{"a":1}})");
}

TEST(Attest, VerifiesKeySubjectAndType) {
  Pkey key = NewKey(), other = NewKey();
  std::vector<TrustedKey> trusted{{"a.pub", key}};
  EXPECT_TRUE(VerifyAttestations({Attestation(key, kImage)}, kImage, trusted, "https://spdx.dev/Document").ok);
  EXPECT_FALSE(VerifyAttestations({Attestation(other, kImage)}, kImage, trusted).ok);
  EXPECT_EQ(VerifyAttestations({Attestation(key, kOther)}, kImage, trusted).reason.rfind("no subject names", 0), 0u);
  EXPECT_EQ(
      VerifyAttestations({Attestation(key, kImage)}, kImage, trusted, "https://x").reason.rfind("predicateType", 0),
      0u);
}

// Found with tests/fuzz (fuzz_dsse): the statement's _type, predicateType and subject
// digest were read with value(), which throws when the signer wrote another type there,
// and the exception ended the process (the webhook's too) instead of denying.
TEST(Attest, StatementMembersOfAnotherTypeAreDenied) {
  Pkey key = NewKey();
  std::vector<TrustedKey> trusted{{"a.pub", key}};
  auto d = VerifyAttestations({SignedStatement(key, R"({"_type":1})")}, kImage, trusted);
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.reason, "statement _type is not https://in-toto.io/Statement/v0.1 or https://in-toto.io/Statement/v1");
  std::string typed = R"({"_type":"https://in-toto.io/Statement/v0.1","predicateType":[],"subject":[]})";
  EXPECT_EQ(VerifyAttestations({SignedStatement(key, typed)}, kImage, trusted, "https://spdx.dev/Document").reason,
            "predicateType is '', want 'https://spdx.dev/Document'");
  std::string digest = R"({"_type":"https://in-toto.io/Statement/v0.1","subject":[{"digest":{"sha256":7}}]})";
  EXPECT_EQ(VerifyAttestations({SignedStatement(key, digest)}, kImage, trusted).reason.rfind("no subject names", 0),
            0u);
}

// SLSA Provenance v1 comes as an in-toto Statement v1: the same members, another _type.
TEST(Attest, StatementV1IsVerifiedAsV0_1) {
  Pkey key = NewKey();
  std::vector<TrustedKey> trusted{{"a.pub", key}};
  auto statement = [](const std::string& type, const oci::Digest& subject) {
    return R"({"_type":")" + type + R"(","predicateType":"https://slsa.dev/provenance/v1","subject":[{"name":"i",)" +
           R"("digest":{"sha256":")" + subject.hex() + R"("}}],"predicate":{}})";
  };
  const std::string v1 = "https://in-toto.io/Statement/v1";
  EXPECT_TRUE(VerifyAttestations({SignedStatement(key, statement(v1, kImage))}, kImage, trusted,
                                 "https://slsa.dev/provenance/v1")
                  .ok);
  EXPECT_EQ(VerifyAttestations({SignedStatement(key, statement(v1, kOther))}, kImage, trusted)
                .reason.rfind("no subject names", 0),
            0u);
  EXPECT_FALSE(
      VerifyAttestations({SignedStatement(key, statement("https://in-toto.io/Statement/v2", kImage))}, kImage, trusted)
          .ok);
  EXPECT_TRUE(CheckStatementClaims(statement(v1, kImage), kImage, "").ok());
  EXPECT_EQ(CheckStatementClaims(statement(v1, kImage), kImage, "https://x").error().kind, ErrorKind::kDenied);
}

}  // namespace
}  // namespace imgtool::sign
