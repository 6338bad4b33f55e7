// The Fulcio certificate checks (certificate.h, sct.h) on the public conformance vectors
// (tests/fixtures/sigstore) and on certificates made here with one thing wrong.
#include <gtest/gtest.h>
#include <openssl/ct.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sigstore/bundle.h"
#include "sigstore/certificate.h"
#include "sigstore/sct.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {
namespace {

namespace fs = std::filesystem;
const fs::path kFixtures = IMGTOOL_SIGSTORE_FIXTURES;
const fs::path kCases = kFixtures / "conformance";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Bundle LoadBundle(const std::string& name) {
  auto b = ParseBundle(Slurp(kCases / name / "bundle.sigstore.json"), name);
  EXPECT_TRUE(b.ok()) << name << ": " << b.error().message;
  return b.ok() ? *b : Bundle{};
}

TrustedRoot LoadRootFile(const fs::path& p) {
  auto r = ParseTrustedRoot(Slurp(p), p.string());
  EXPECT_TRUE(r.ok()) << p << ": " << r.error().message;
  return r.ok() ? *r : TrustedRoot{};
}
TrustedRoot PublicGood() { return LoadRootFile(kFixtures / "trusted-roots/public-good/trusted_root.json"); }
TrustedRoot Staging() { return LoadRootFile(kFixtures / "trusted-roots/staging/trusted_root.json"); }
// The case's own trusted root, else public good (conformance/README.md).
TrustedRoot RootOf(const std::string& name) {
  fs::path own = kCases / name / "trusted_root.json";
  return fs::exists(own) ? LoadRootFile(own) : PublicGood();
}

// The identity the case expects (conformance/README.md: a file, else the default).
std::string Expected(const std::string& name, const char* file, const char* fallback) {
  fs::path p = kCases / name / file;
  if (!fs::exists(p)) return fallback;
  std::string s = Slurp(p);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}
const char* kDefaultIdentity =
    "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/"
    "extremely-dangerous-oidc-beacon.yml@refs/heads/main";
const char* kDefaultIssuer = "https://token.actions.githubusercontent.com";

Time AsnTime(const ASN1_TIME* t) {
  std::tm tm{};
  EXPECT_EQ(ASN1_TIME_to_tm(t, &tm), 1);
  return static_cast<Time>(timegm(&tm));
}
Time NotBefore(const Cert& c) { return AsnTime(X509_get0_notBefore(c.get())); }
Time NotAfter(const Cert& c) { return AsnTime(X509_get0_notAfter(c.get())); }
Time IntegratedTime(const Bundle& b) {
  EXPECT_FALSE(b.tlog_entries.empty());
  return b.tlog_entries.empty() ? 0 : b.tlog_entries[0].integrated_time.value_or(0);
}

bool IsFail(const std::string& name) { return name.size() > 5 && name.ends_with("_fail"); }

// A certificate with the given extensions (OpenSSL config syntax), signed by a fresh key.
Cert MakeCert(const std::vector<std::pair<std::string, std::string>>& extensions, const char* cn = nullptr) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
  X509_gmtime_adj(X509_getm_notBefore(x), 0);
  X509_gmtime_adj(X509_getm_notAfter(x), 600);
  X509_set_pubkey(x, key);
  X509_NAME_add_entry_by_txt(X509_get_issuer_name(x), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("test-ca"), -1, -1, 0);
  if (cn != nullptr) {
    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                               -1, -1, 0);
  }
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  for (const auto& [name, value] : extensions) {
    X509_EXTENSION* ext = X509V3_EXT_nconf(nullptr, &ctx, name.c_str(), value.c_str());
    EXPECT_NE(ext, nullptr) << name << "=" << value;
    if (ext != nullptr) X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  EXPECT_GT(X509_sign(x, key, EVP_sha256()), 0);
  EVP_PKEY_free(key);
  return Cert(x, X509Free());
}

const std::pair<std::string, std::string> kKu{"keyUsage", "critical,digitalSignature"};
const std::pair<std::string, std::string> kEku{"extendedKeyUsage", "codeSigning"};
const std::pair<std::string, std::string> kIssuerV2{"1.3.6.1.4.1.57264.1.8", "ASN1:UTF8String:https://issuer.example"};

bool Mentions(const Error& e, const std::string& part) { return e.message.find(part) != std::string::npos; }

// ---- identity ----

TEST(Identity, EveryPassingCaseCarriesTheIdentityItExpects) {
  int checked = 0;
  for (const auto& dir : fs::directory_iterator(kCases)) {
    std::string name = dir.path().filename();
    if (!dir.is_directory() || IsFail(name) || !fs::exists(dir.path() / "bundle.sigstore.json")) continue;
    Bundle b = LoadBundle(name);
    if (b.certificates.empty()) continue;  // managed-key cases
    auto id = ReadIdentity(b.certificates[0]);
    ASSERT_TRUE(id.ok()) << name << ": " << id.error().message;
    EXPECT_EQ(id->subject, Expected(name, "identity", kDefaultIdentity)) << name;
    EXPECT_EQ(id->issuer, Expected(name, "issuer", kDefaultIssuer)) << name;
    ++checked;
  }
  EXPECT_GE(checked, 15);
}

TEST(Identity, EmailAndLegacyIssuer) {
  auto id = ReadIdentity(LoadBundle("bundle-with-root-cert_fail").certificates[0]);
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(id->subject, "a@tny.town");
  auto legacy = ReadIdentity(
      MakeCert({{"subjectAltName", "email:me@example.com"}, {"1.3.6.1.4.1.57264.1.1", "DER:68747470733a2f2f6f6c64"}}));
  ASSERT_TRUE(legacy.ok()) << legacy.error().message;
  EXPECT_EQ(legacy->subject, "me@example.com");
  EXPECT_EQ(legacy->issuer, "https://old");
  // Both written and equal: the V2 one is read (and it is the same).
  auto both = ReadIdentity(MakeCert({{"subjectAltName", "URI:https://x.example/w"},
                                     {"1.3.6.1.4.1.57264.1.1", "DER:68747470733a2f2f6973737565722e6578616d706c65"},
                                     kIssuerV2}));
  ASSERT_TRUE(both.ok()) << both.error().message;
  EXPECT_EQ(both->issuer, "https://issuer.example");
}

TEST(Identity, UsernameOtherName) {
  auto id = ReadIdentity(MakeCert({{"subjectAltName", "otherName:1.3.6.1.4.1.57264.1.7;UTF8:alice"}, kIssuerV2}));
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(id->subject, "alice");
  // Another otherName type is no identity.
  EXPECT_FALSE(ReadIdentity(MakeCert({{"subjectAltName", "otherName:1.2.3.4;UTF8:alice"}, kIssuerV2})).ok());
}

TEST(Identity, RefusesAmbiguousMissingAndHostileIdentities) {
  struct Case {
    std::vector<std::pair<std::string, std::string>> ext;
    const char* why;
  };
  std::string many = "email:a@x";
  for (int i = 0; i < 20; ++i) many += ",DNS:h" + std::to_string(i) + ".example";
  const Case cases[] = {
      {{kIssuerV2}, "no subjectAltName"},
      {{{"subjectAltName", "DNS:example.com"}, kIssuerV2}, "no email, URI or username"},
      {{{"subjectAltName", "email:a@x,URI:https://b"}, kIssuerV2}, "more than one identity"},
      {{{"subjectAltName", many}, kIssuerV2}, "more than 16"},
      {{{"subjectAltName", "email:a@x"}}, "no OIDC issuer"},
      {{{"subjectAltName", "email:a@x"}, {"1.3.6.1.4.1.57264.1.8", "DER:0c00"}}, "OIDC issuer is empty"},
      {{{"subjectAltName", "email:a@x"}, {"1.3.6.1.4.1.57264.1.8", "ASN1:IA5STRING:https://i"}},
       "not one DER UTF8String"},
      {{{"subjectAltName", "email:a@x"}, {"1.3.6.1.4.1.57264.1.8", "DER:0c0161ff"}}, "not one DER UTF8String"},
      {{{"subjectAltName", "email:a@x"}, {"1.3.6.1.4.1.57264.1.8", "DER:0c03610a62"}}, "control characters"},
      {{{"subjectAltName", "email:a@x"}, {"1.3.6.1.4.1.57264.1.1", "DER:6f6e65"}, kIssuerV2}, "disagree"},
      {{{"subjectAltName", "email:a@x"}, kIssuerV2, kIssuerV2}, "appears twice"},
      {{{"subjectAltName", "email:" + std::string(5000, 'a')}, kIssuerV2}, "over 4 KiB"},
  };
  for (const Case& c : cases) {
    auto id = ReadIdentity(MakeCert(c.ext));
    ASSERT_FALSE(id.ok()) << c.why;
    EXPECT_EQ(id.error().kind, ErrorKind::kDenied) << c.why;
    EXPECT_TRUE(Mentions(id.error(), c.why)) << c.why << " vs " << id.error().message;
  }
}

regexp::GoRegexp Re(const std::string& pattern) {
  auto re = regexp::GoRegexp::Compile(pattern);
  if (!re.ok()) ADD_FAILURE() << pattern << ": " << re.error().message;
  return *re;
}

TEST(Identity, MatchExactAndRegexp) {
  CertIdentity id{"https://github.com/o/r/.github/workflows/w.yml@refs/heads/main",
                  "https://token.actions.githubusercontent.com"};
  EXPECT_TRUE(MatchIdentity(id, {id.subject, {}, id.issuer, {}}).ok());
  EXPECT_TRUE(MatchIdentity(id, {"", Re(R"(https://github\.com/o/.*)"), "", Re(R"(https://token\.actions\..*)")}).ok());
  EXPECT_TRUE(
      MatchIdentity(id, {"", Re("^https://github.com/o/r/.github/workflows/.*@refs/heads/main$"), id.issuer, {}}).ok());
  // As cosign (Go's MatchString): a regexp is searched for; anchors make it whole.
  EXPECT_TRUE(MatchIdentity(id, {"", Re("github"), id.issuer, {}}).ok());
  auto anchored = MatchIdentity(id, {"", Re("^github"), id.issuer, {}});
  ASSERT_FALSE(anchored.ok());
  EXPECT_EQ(anchored.error().kind, ErrorKind::kDenied);
  EXPECT_TRUE(Mentions(anchored.error(), "want a match of regexp '^github'")) << anchored.error().message;
  EXPECT_FALSE(MatchIdentity(id, {"", Re("^https://github\\.com/o/r/$"), id.issuer, {}}).ok());
  auto other = MatchIdentity(id, {"https://github.com/o/other", {}, id.issuer, {}});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().kind, ErrorKind::kDenied);
  EXPECT_TRUE(Mentions(other.error(), id.subject) && Mentions(other.error(), "https://github.com/o/other"))
      << other.error().message;
  auto issuer = MatchIdentity(id, {id.subject, {}, "", Re("https://accounts\\.google\\.com")});
  ASSERT_FALSE(issuer.ok());
  EXPECT_TRUE(Mentions(issuer.error(), id.issuer) && Mentions(issuer.error(), "accounts")) << issuer.error().message;
  // A prefix of the wanted issuer is not the issuer.
  EXPECT_FALSE(MatchIdentity(id, {id.subject, {}, "https://token.actions.githubusercontent.co", {}}).ok());
}

// A certificate anyone can get names a subject of up to 4 KiB; the pattern is the
// verifier's. std::regex took minutes on this pair; the match reads the subject once.
TEST(Identity, CatastrophicRegexpAgainstALongSubjectIsAnswered) {
  const std::string as(3000, 'a');
  CertIdentity id{"https://github.com/" + as + "!", "https://token.actions.githubusercontent.com"};
  auto st = MatchIdentity(id, {"", Re("^https://github.com/(a+)+$"), id.issuer, {}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kDenied);
  id.subject.pop_back();
  EXPECT_TRUE(MatchIdentity(id, {"", Re("^https://github.com/(a+)+$"), id.issuer, {}}).ok());
}

TEST(Identity, MalformedPoliciesAreInvalidInput) {
  CertIdentity id{"a@x", "https://i"};
  for (const IdentityPolicy& p :
       {IdentityPolicy{"", {}, "https://i", {}}, IdentityPolicy{"a@x", Re("a@.*"), "https://i", {}},
        IdentityPolicy{"a@x", {}, "", {}}, IdentityPolicy{"nobody", {}, "https://i", Re("i")}}) {
    auto st = MatchIdentity(id, p);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().kind, ErrorKind::kInvalidInput) << st.error().message;
  }
}

// ---- leaf ----

TEST(Leaf, FulcioLeavesPassAndCasDoNot) {
  for (const char* name :
       {"happy-path-v0.1", "happy-path-v0.3", "happy-path-intoto-in-dsse-v3", "bundle-with-sct-with-extensions"}) {
    Status st = CheckLeaf(LoadBundle(name).certificates[0]);
    EXPECT_TRUE(st.ok()) << name << ": " << st.error().message;
  }
  TrustedRoot root = PublicGood();
  for (const CertAuthority& ca : root.certificate_authorities) {
    for (const Cert& c : ca.chain) {
      Status st = CheckLeaf(c);
      ASSERT_FALSE(st.ok());
      EXPECT_EQ(st.error().kind, ErrorKind::kDenied);
    }
  }
  // The staging intermediate a bundle carried has the codeSigning EKU too: still a CA.
  Bundle rooted = LoadBundle("bundle-with-root-cert_fail");
  EXPECT_TRUE(Mentions(CheckLeaf(rooted.certificates[2]).error(), "CA certificate"));
}

TEST(Leaf, RefusesWhatMayNotSignCode) {
  EXPECT_TRUE(CheckLeaf(MakeCert({kKu, kEku})).ok());
  EXPECT_TRUE(CheckLeaf(MakeCert({kKu, kEku, {"basicConstraints", "critical,CA:FALSE"}})).ok());
  struct Case {
    std::vector<std::pair<std::string, std::string>> ext;
    const char* why;
  };
  const Case cases[] = {
      {{kEku}, "digitalSignature"},
      {{{"keyUsage", "keyEncipherment"}, kEku}, "digitalSignature"},
      {{kKu}, "codeSigning"},
      {{kKu, {"extendedKeyUsage", "serverAuth"}}, "codeSigning"},
      {{kKu, {"extendedKeyUsage", "anyExtendedKeyUsage"}}, "codeSigning"},
      {{kKu, kEku, {"basicConstraints", "critical,CA:TRUE"}}, "CA certificate"},
      {{{"keyUsage", "digitalSignature,keyCertSign"}, kEku}, "CA certificate"},
      {{kKu, kEku, kEku}, "malformed or repeated"},
  };
  for (const Case& c : cases) {
    Status st = CheckLeaf(MakeCert(c.ext));
    ASSERT_FALSE(st.ok()) << c.why;
    EXPECT_TRUE(Mentions(st.error(), c.why)) << c.why << " vs " << st.error().message;
  }
}

// ---- chain ----

TEST(Chain, HappyPathsChainToPublicGoodAtTheirIntegratedTime) {
  TrustedRoot root = PublicGood();
  for (const char* name : {"happy-path-v0.1", "happy-path-v0.2", "happy-path-v0.3", "happy-path-intoto-in-dsse-v3"}) {
    Bundle b = LoadBundle(name);
    auto chain = VerifyChain(b.certificates, root, IntegratedTime(b));
    ASSERT_TRUE(chain.ok()) << name << ": " << chain.error().message;
    ASSERT_NE(chain->authority, nullptr);
    // The intermediate (2022-) authority, and the leaf's issuer is its first certificate.
    EXPECT_EQ(chain->authority, &root.certificate_authorities[1]) << name;
    EXPECT_EQ(CertificateDer(chain->issuer), CertificateDer(root.certificate_authorities[1].chain[0])) << name;
  }
}

TEST(Chain, StagingAndPublicGoodDoNotVouchForEachOther) {
  Bundle wrong = LoadBundle("bundle-from-wrong-instance_fail");
  auto refused = VerifyChain(wrong.certificates, PublicGood(), IntegratedTime(wrong));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kDenied);
  // The same certificate is fine where it came from: the trusted root is what refused it.
  EXPECT_TRUE(VerifyChain(wrong.certificates, Staging(), IntegratedTime(wrong)).ok());
  Bundle good = LoadBundle("happy-path-v0.3");
  EXPECT_FALSE(VerifyChain(good.certificates, Staging(), IntegratedTime(good)).ok());
}

TEST(Chain, TheLeafMustBeValidAtTheTime) {
  TrustedRoot root = PublicGood();
  Bundle b = LoadBundle("happy-path-v0.3");
  const Cert& leaf = b.certificates[0];
  EXPECT_TRUE(VerifyChain(b.certificates, root, NotBefore(leaf)).ok());
  EXPECT_TRUE(VerifyChain(b.certificates, root, NotAfter(leaf) - 1).ok());
  for (Time t : {NotBefore(leaf) - 1, NotAfter(leaf) + 1, IntegratedTime(b) + 24 * 3600}) {
    auto chain = VerifyChain(b.certificates, root, t);
    ASSERT_FALSE(chain.ok()) << t;
    EXPECT_TRUE(Mentions(chain.error(), "certificate")) << chain.error().message;
  }
}

TEST(Chain, TheAuthorityMustBeTrustedAtTheTime) {
  Bundle b = LoadBundle("happy-path-v0.3");
  Time at = IntegratedTime(b);
  TrustedRoot root = PublicGood();
  root.certificate_authorities[1].valid_for.end = at - 1;  // retired just before the signing
  auto chain = VerifyChain(b.certificates, root, at);
  ASSERT_FALSE(chain.ok());
  EXPECT_TRUE(Mentions(chain.error(), "no certificate authority of the trusted root is valid at"))
      << chain.error().message;
  root.certificate_authorities[1].valid_for.end = at;  // validFor's end is inclusive
  EXPECT_TRUE(VerifyChain(b.certificates, root, at).ok());
}

TEST(Chain, ABundleWithARootCertificateIsRefused) {
  // A public-good leaf followed by staging's root and intermediate.
  Bundle b = LoadBundle("bundle-with-root-cert_fail");
  ASSERT_EQ(b.certificates.size(), 3u);
  Time at = IntegratedTime(b);
  auto chain = VerifyChain(b.certificates, PublicGood(), at);
  ASSERT_FALSE(chain.ok());
  EXPECT_EQ(chain.error().kind, ErrorKind::kDenied);
  EXPECT_TRUE(Mentions(chain.error(), "self-signed")) << chain.error().message;
  // Its leaf alone chains to public good: the root certificate is what was refused.
  auto alone = VerifyChain({b.certificates[0]}, PublicGood(), at);
  EXPECT_TRUE(alone.ok()) << alone.error().message;
  // The (staging) intermediate it carries is no more than a hint: not used, not harmful.
  EXPECT_TRUE(VerifyChain({b.certificates[0], b.certificates[2]}, PublicGood(), at).ok());
  EXPECT_FALSE(VerifyChain({b.certificates[0], b.certificates[2]}, Staging(), at).ok());
}

TEST(Chain, CustomRootsAndExpiredAuthorities) {
  Bundle custom = LoadBundle("intoto-with-custom-trust-root");
  auto ok = VerifyChain(custom.certificates, RootOf("intoto-with-custom-trust-root"), IntegratedTime(custom));
  EXPECT_TRUE(ok.ok()) << ok.error().message;
  // Issued (2030) long after the mock CA certificate expired (2024): at the entry's time the
  // leaf is not yet valid, and while it is valid the CA is not.
  Bundle expired = LoadBundle("intoto-expired-certificate_fail");
  TrustedRoot root = RootOf("intoto-expired-certificate_fail");
  EXPECT_FALSE(VerifyChain(expired.certificates, root, IntegratedTime(expired)).ok());
  EXPECT_FALSE(VerifyChain(expired.certificates, root, NotBefore(expired.certificates[0]) + 1).ok());
  Bundle outside = LoadBundle("intoto-set-outside-signing-cert-validity_fail");
  TrustedRoot outside_root = RootOf("intoto-set-outside-signing-cert-validity_fail");
  EXPECT_FALSE(VerifyChain(outside.certificates, outside_root, IntegratedTime(outside)).ok());
  EXPECT_TRUE(VerifyChain(outside.certificates, outside_root, NotBefore(outside.certificates[0])).ok());
}

TEST(Chain, RefusesEmptyAndOverlongLists) {
  TrustedRoot root = PublicGood();
  EXPECT_EQ(VerifyChain({}, root, 1700000000).error().kind, ErrorKind::kInvalidInput);
  Bundle b = LoadBundle("happy-path-v0.3");
  std::vector<Cert> many(17, b.certificates[0]);
  EXPECT_FALSE(VerifyChain(many, root, IntegratedTime(b)).ok());
  EXPECT_FALSE(VerifyChain(b.certificates, TrustedRoot{}, IntegratedTime(b)).ok());
}

// ---- SCTs ----

Cert IssuerOf(const Bundle& b, const TrustedRoot& root, Time at) {
  auto chain = VerifyChain(b.certificates, root, at);
  EXPECT_TRUE(chain.ok()) << chain.error().message;
  return chain.ok() ? chain->issuer : Cert();
}

TEST(Sct, HappyPathsCarryAVerifiableSct) {
  TrustedRoot root = PublicGood();
  for (const char* name : {"happy-path-v0.1", "happy-path-v0.2", "happy-path-v0.3", "happy-path-intoto-in-dsse-v3"}) {
    Bundle b = LoadBundle(name);
    Status st = VerifyScts(b.certificates[0], IssuerOf(b, root, IntegratedTime(b)), root);
    EXPECT_TRUE(st.ok()) << name << ": " << st.error().message;
  }
}

TEST(Sct, AnSctWithExtensionsVerifies) {
  const char* name = "bundle-with-sct-with-extensions";
  Bundle b = LoadBundle(name);
  TrustedRoot root = RootOf(name);
  const Cert& leaf = b.certificates[0];
  // The case is what its name says: the (only) SCT has a non-empty extensions field.
  STACK_OF(SCT)* scts =
      static_cast<STACK_OF(SCT)*>(X509_get_ext_d2i(leaf.get(), NID_ct_precert_scts, nullptr, nullptr));
  ASSERT_NE(scts, nullptr);
  unsigned char* ext = nullptr;
  EXPECT_GT(SCT_get0_extensions(sk_SCT_value(scts, 0), &ext), 0u);
  SCT_LIST_free(scts);
  Status st = VerifyScts(leaf, IssuerOf(b, root, NotBefore(leaf)), root);
  EXPECT_TRUE(st.ok()) << st.error().message;
  // Not against public good, whose CT logs never saw it.
  EXPECT_FALSE(VerifyScts(leaf, IssuerOf(b, root, NotBefore(leaf)), PublicGood()).ok());
}

TEST(Sct, AnUnknownCtKeyIsRefused) {
  const char* name = "invalid-ct-key_fail";
  Bundle b = LoadBundle(name);
  TrustedRoot root = RootOf(name);
  // The chain itself is fine under this root; only the CT log is wrong.
  Cert issuer = IssuerOf(b, root, IntegratedTime(b));
  Status st = VerifyScts(b.certificates[0], issuer, root);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kDenied);
  EXPECT_TRUE(Mentions(st.error(), "not a CT log of the trusted root")) << st.error().message;
  EXPECT_TRUE(VerifyScts(b.certificates[0], issuer, PublicGood()).ok());
}

TEST(Sct, TheSignatureCoversTheIssuerAndTheLogMustBeValid) {
  TrustedRoot root = PublicGood();
  Bundle b = LoadBundle("happy-path-v0.3");
  const Cert& leaf = b.certificates[0];
  Cert issuer = IssuerOf(b, root, IntegratedTime(b));
  ASSERT_TRUE(VerifyScts(leaf, issuer, root).ok());
  // Another issuer key: the precert entry differs, the signature no longer verifies.
  Status wrong_issuer = VerifyScts(leaf, root.certificate_authorities[1].chain[1], root);
  ASSERT_FALSE(wrong_issuer.ok());
  EXPECT_TRUE(Mentions(wrong_issuer.error(), "does not verify")) << wrong_issuer.error().message;
  // The log retired before the SCT was made.
  TrustedRoot retired = root;
  for (LogKey& log : retired.ctlogs) log.valid_for.end = NotBefore(leaf) - 3600;
  Status st = VerifyScts(leaf, issuer, retired);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Mentions(st.error(), "outside the log's validFor")) << st.error().message;
  // Another log's key under the right log ID.
  TrustedRoot swapped = root;
  for (LogKey& log : swapped.ctlogs) log.key = root.tlogs[0].key;
  EXPECT_FALSE(VerifyScts(leaf, issuer, swapped).ok());
}

TEST(Sct, ACertificateWithoutSctsIsRefused) {
  Cert bare = MakeCert({kKu, kEku});
  Status st = VerifyScts(bare, bare, PublicGood());
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Mentions(st.error(), "no embedded SCT")) << st.error().message;
}

// ---- all together, on every conformance case ----

// The certificate half of a verification: what the orchestrating verifier will run.
// `at` is the entry's integratedTime, or (Rekor v2 entries have none: their time comes from
// an RFC 3161 timestamp, checked elsewhere) the leaf's notBefore.
Status CertificateChecks(const std::string& name) {
  Bundle b = LoadBundle(name);
  TrustedRoot root = RootOf(name);
  const Cert& leaf = b.certificates[0];
  Time at = b.tlog_entries.empty() ? 0 : b.tlog_entries[0].integrated_time.value_or(0);
  if (at == 0) at = NotBefore(leaf);
  auto id = ReadIdentity(leaf);
  if (!id.ok()) return id.error();
  IMGTOOL_TRY(MatchIdentity(
      *id, {Expected(name, "identity", kDefaultIdentity), {}, Expected(name, "issuer", kDefaultIssuer), {}}));
  IMGTOOL_TRY(CheckLeaf(leaf));
  auto chain = VerifyChain(b.certificates, root, at);
  if (!chain.ok()) return chain.error();
  return VerifyScts(leaf, chain->issuer, root);
}

TEST(Conformance, CertificatesOfPassingCasesPassAndCertificateFailuresFail) {
  int passed = 0;
  for (const auto& dir : fs::directory_iterator(kCases)) {
    std::string name = dir.path().filename();
    if (!dir.is_directory() || IsFail(name) || !fs::exists(dir.path() / "bundle.sigstore.json")) continue;
    if (LoadBundle(name).certificates.empty()) continue;
    Status st = CertificateChecks(name);
    EXPECT_TRUE(st.ok()) << name << ": " << st.error().message;
    ++passed;
  }
  EXPECT_GE(passed, 15);
  for (const char* name : {"bundle-with-root-cert_fail", "bundle-from-wrong-instance_fail", "invalid-ct-key_fail",
                           "intoto-expired-certificate_fail", "intoto-set-outside-signing-cert-validity_fail"}) {
    Status st = CertificateChecks(name);
    ASSERT_FALSE(st.ok()) << name;
    EXPECT_EQ(st.error().kind, ErrorKind::kDenied) << name << ": " << st.error().message;
  }
}

}  // namespace
}  // namespace imgtool::sigstore
