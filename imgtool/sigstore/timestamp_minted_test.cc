// RFC 3161 rules no public vector exercises, on timestamps minted here by a throwaway TSA
// (OpenSSL's TS_RESP_CTX): a weak imprint hash, an intermediate not restricted to
// timeStamping. The minted happy path verifies, so each refusal is the rule's alone.
#include <gtest/gtest.h>

#include "sigstore/minted_tsa.h"
#include "sigstore/timestamp.h"

namespace imgtool::sigstore {
namespace {

TEST(MintedTimestamp, SoundOnesVerifyWithEveryStrongHash) {
  Tsa tsa = MakeTsa("timeStamping");
  for (const EVP_MD* md : {EVP_sha256(), EVP_sha384(), EVP_sha512()}) {
    std::string der = Stamp(tsa, md, "signature");
    ASSERT_FALSE(der.empty());
    auto t = VerifyTimestamp(der, "signature", RootOf(tsa));
    ASSERT_TRUE(t.ok()) << EVP_MD_get0_name(md) << ": " << t.error().message;
    EXPECT_LE(std::abs(*t - static_cast<Time>(time(nullptr))), 60);
    EXPECT_FALSE(VerifyTimestamp(der, "signaturE", RootOf(tsa)).ok());
  }
}

TEST(MintedTimestamp, AWeakImprintHashIsRefused) {
  Tsa tsa = MakeTsa("timeStamping");
  std::string der = Stamp(tsa, EVP_sha1(), "signature");
  ASSERT_FALSE(der.empty());
  auto t = VerifyTimestamp(der, "signature", RootOf(tsa));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("sha256, sha384 or sha512"), std::string::npos) << t.error().message;
}

TEST(MintedTimestamp, AnIntermediateMustBeForTimestampingOnly) {
  for (const char* eku : {static_cast<const char*>(nullptr), "codeSigning", "timeStamping,codeSigning"}) {
    Tsa tsa = MakeTsa(eku);
    auto t = VerifyTimestamp(Stamp(tsa, EVP_sha256(), "signature"), "signature", RootOf(tsa));
    ASSERT_FALSE(t.ok()) << (eku ? eku : "no EKU");
    EXPECT_NE(t.error().message.find("intermediate"), std::string::npos) << t.error().message;
  }
}

TEST(MintedTimestamp, TheTsaChainMustLeadToTheListedAnchor) {
  Tsa tsa = MakeTsa("timeStamping");
  Tsa other = MakeTsa("timeStamping");
  std::string der = Stamp(tsa, EVP_sha256(), "signature");
  TrustedRoot root = RootOf(tsa);
  root.timestamp_authorities[0].chain.back() = other.root;  // same names, another key
  auto t = VerifyTimestamp(der, "signature", root);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("certificate verify error"), std::string::npos) << t.error().message;
}

}  // namespace
}  // namespace imgtool::sigstore
