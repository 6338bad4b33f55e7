// The whole verification on the public conformance vectors: every case as its folder name
// says (verified, or refused with kDenied), and the policy's own rules. The CLI and the
// conformance entrypoint run the same cases end to end (tests/sigstore_conformance.sh).
#include "sigstore/verifier.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace imgtool::sigstore {
namespace {

const std::filesystem::path kCases = std::filesystem::path(IMGTOOL_SIGSTORE_FIXTURES) / "conformance";
const std::string kIdentity =
    "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/"
    "extremely-dangerous-oidc-beacon.yml@refs/heads/main";
const std::string kIssuer = "https://token.actions.githubusercontent.com";

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// Runs one case as the conformance suite would; an error is a refusal.
Result<Verified> RunCase(const std::filesystem::path& dir, const VerifyPolicy* override_policy = nullptr) {
  auto root_path = std::filesystem::exists(dir / "trusted_root.json")
                       ? dir / "trusted_root.json"
                       : kCases.parent_path() / "trusted-roots/public-good/trusted_root.json";
  auto root = ParseTrustedRoot(Slurp(root_path), root_path);
  if (!root.ok()) return root.error();
  auto bundle = ParseBundle(Slurp(dir / "bundle.sigstore.json"), "bundle");
  if (!bundle.ok()) return bundle.error();
  Artifact artifact =
      ArtifactOf(Slurp(std::filesystem::exists(dir / "artifact") ? dir / "artifact" : kCases / "a.txt"));
  VerifyPolicy policy;
  if (override_policy != nullptr) {
    policy = *override_policy;
  } else if (std::filesystem::exists(dir / "key.pub")) {
    auto key = ParsePublicKeyPemAny(Slurp(dir / "key.pub"), "key.pub");
    if (!key.ok()) return key.error();
    policy.key = *key;
  } else {
    std::string id = std::filesystem::exists(dir / "identity") ? Trimmed(Slurp(dir / "identity")) : kIdentity;
    std::string issuer = std::filesystem::exists(dir / "issuer") ? Trimmed(Slurp(dir / "issuer")) : kIssuer;
    policy.identity = IdentityPolicy{id, {}, issuer, {}};
  }
  return VerifyBundle(*bundle, *root, artifact, policy);
}

TEST(Conformance, EveryCaseAsItsNameSays) {
  int right = 0, total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCases)) {
    if (!entry.is_directory()) continue;
    std::string name = entry.path().filename();
    bool want_refused = name.size() > 5 && name.substr(name.size() - 5) == "_fail";
    auto v = RunCase(entry.path());
    ++total;
    if (v.ok() != want_refused) {
      ++right;
    } else {
      ADD_FAILURE() << name << ": want " << (want_refused ? "refused" : "verified") << ", got "
                    << (v.ok() ? "verified" : v.error().message);
    }
  }
  EXPECT_EQ(right, total);
  EXPECT_GE(total, 70);
}

TEST(Verifier, ReportsWhoAndWhen) {
  auto v = RunCase(kCases / "happy-path-v0.3");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->signer, kIdentity);
  EXPECT_EQ(v->issuer, kIssuer);
  EXPECT_EQ(v->content, "message signature");
  ASSERT_FALSE(v->times.empty());
  EXPECT_EQ(v->times[0].time, 1710869186);
  ASSERT_EQ(v->log_entries.size(), 1u);
  EXPECT_NE(v->log_entries[0].find("#79571823"), std::string::npos) << v->log_entries[0];
}

TEST(Verifier, AnotherIdentityOrIssuerIsDeniedByName) {
  VerifyPolicy other;
  other.identity =
      IdentityPolicy{"https://github.com/evil/repo/.github/workflows/x.yml@refs/heads/main", {}, kIssuer, {}};
  auto v = RunCase(kCases / "happy-path-v0.3", &other);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().kind, ErrorKind::kDenied);
  EXPECT_NE(v.error().message.find("evil"), std::string::npos) << v.error().message;
  other.identity = IdentityPolicy{kIdentity, {}, "https://accounts.google.com", {}};
  v = RunCase(kCases / "happy-path-v0.3", &other);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("accounts.google.com"), std::string::npos) << v.error().message;
  other.identity = IdentityPolicy{"", *regexp::GoRegexp::Compile("^https://github\\.com/sigstore-conformance/.*$"), "",
                                  *regexp::GoRegexp::Compile("https://token\\..*")};
  EXPECT_TRUE(RunCase(kCases / "happy-path-v0.3", &other).ok());
}

TEST(Verifier, KeyAndKeylessAreNotMixedUp) {
  VerifyPolicy keyless;
  keyless.identity = IdentityPolicy{kIdentity, {}, kIssuer, {}};
  auto v = RunCase(kCases / "managed-key-happy-path", &keyless);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("--key"), std::string::npos) << v.error().message;
  VerifyPolicy key;
  key.key = *ParsePublicKeyPemAny(Slurp(kCases / "managed-key-happy-path/key.pub"), "key.pub");
  v = RunCase(kCases / "happy-path-v0.3", &key);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().kind, ErrorKind::kDenied);
  VerifyPolicy neither;
  EXPECT_EQ(RunCase(kCases / "happy-path-v0.3", &neither).error().kind, ErrorKind::kInvalidInput);
}

TEST(Verifier, ADigestStandsForTheFile) {
  Artifact from_file = ArtifactOf(Slurp(kCases / "a.txt"));
  std::string hex;
  for (unsigned char c : from_file.sha256) {
    static const char kDigits[] = "0123456789abcdef";
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  auto from_digest = ArtifactFromDigest("sha256:" + hex);
  ASSERT_TRUE(from_digest.ok());
  EXPECT_EQ(from_digest->sha256, from_file.sha256);
  EXPECT_FALSE(from_digest->bytes.has_value());
  EXPECT_FALSE(ArtifactFromDigest("sha256:1234").ok());
  EXPECT_FALSE(ArtifactFromDigest("md5:" + hex.substr(0, 32)).ok());
}

}  // namespace
}  // namespace imgtool::sigstore
