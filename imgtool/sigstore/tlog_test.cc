// Transparency log checks: Merkle inclusion against a reference tree, checkpoints (signed
// notes), signed entry timestamps, inclusion proofs and entry bodies on the public
// conformance vectors (tests/fixtures/sigstore/conformance), and hand-made damage.
#include <gtest/gtest.h>

#include <openssl/x509.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "oci/base64.h"
#include "oci/canonical_json.h"
#include "oci/hex.h"
#include "sigstore/bundle.h"
#include "sigstore/checkpoint.h"
#include "sigstore/entry_body.h"
#include "sigstore/merkle.h"
#include "sigstore/tlog.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {
namespace {

const std::filesystem::path kFixtures = IMGTOOL_SIGSTORE_FIXTURES;
const std::filesystem::path kCases = kFixtures / "conformance";

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---- Merkle trees: RFC 6962's own recursive definitions, as the reference ----

size_t SplitPoint(size_t n) {  // the largest power of two below n
  size_t k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

std::string ReferenceRoot(const std::vector<std::string>& leaves, size_t lo, size_t n) {
  if (n == 1) return MerkleLeafHash(leaves[lo]);
  size_t k = SplitPoint(n);
  return MerkleNodeHash(ReferenceRoot(leaves, lo, k), ReferenceRoot(leaves, lo + k, n - k));
}

// PATH(m, D[lo:lo+n]) of RFC 6962 2.1.1, leaf to root.
std::vector<std::string> ReferencePath(const std::vector<std::string>& leaves, size_t m, size_t lo, size_t n) {
  if (n == 1) return {};
  size_t k = SplitPoint(n);
  std::vector<std::string> path;
  if (m < k) {
    path = ReferencePath(leaves, m, lo, k);
    path.push_back(ReferenceRoot(leaves, lo + k, n - k));
  } else {
    path = ReferencePath(leaves, m - k, lo + k, n - k);
    path.push_back(ReferenceRoot(leaves, lo, k));
  }
  return path;
}

TEST(Merkle, EveryLeafOfTreesOfOneToEightLeaves) {
  std::vector<std::string> leaves9;
  for (size_t i = 0; i < 9; ++i) leaves9.push_back("leaf " + std::to_string(i));
  for (size_t n = 1; n <= 8; ++n) {
    std::vector<std::string> leaves;
    for (size_t i = 0; i < n; ++i) leaves.push_back("leaf " + std::to_string(i));
    const std::string root = ReferenceRoot(leaves, 0, n);
    const auto size = static_cast<int64_t>(n);
    for (size_t m = 0; m < n; ++m) {
      const auto index = static_cast<int64_t>(m);
      const std::string leaf = MerkleLeafHash(leaves[m]);
      std::vector<std::string> path = ReferencePath(leaves, m, 0, n);
      EXPECT_TRUE(VerifyMerkleInclusion(index, size, leaf, path, root).ok()) << n << " " << m;
      EXPECT_FALSE(VerifyMerkleInclusion(index, size, MerkleLeafHash("other"), path, root).ok());
      EXPECT_FALSE(VerifyMerkleInclusion(index, size, leaf, path, MerkleLeafHash("other")).ok());
      for (int64_t other = 0; other < size + 2; ++other) {
        if (other == index) continue;
        EXPECT_FALSE(VerifyMerkleInclusion(other, size, leaf, path, root).ok()) << n << " " << m << " index " << other;
      }
      // A size whose path to this leaf is longer or shorter cannot take this path. (One
      // with the same shape can: the checkpoint's signature is what binds the size.)
      for (size_t other = m + 1; other <= 9; ++other) {
        if (ReferencePath(leaves9, m, 0, other).size() == path.size()) continue;
        EXPECT_FALSE(VerifyMerkleInclusion(index, static_cast<int64_t>(other), leaf, path, root).ok()) << n << " " << m;
      }
      for (size_t h = 0; h < path.size(); ++h) {
        std::vector<std::string> bad = path;
        bad[h][h % 32] ^= 1;
        EXPECT_FALSE(VerifyMerkleInclusion(index, size, leaf, bad, root).ok());
        bad = path;
        bad.erase(bad.begin() + static_cast<long>(h));
        EXPECT_FALSE(VerifyMerkleInclusion(index, size, leaf, bad, root).ok());
      }
      std::vector<std::string> longer = path;
      longer.push_back(root);
      EXPECT_FALSE(VerifyMerkleInclusion(index, size, leaf, longer, root).ok());
    }
  }
}

TEST(Merkle, HostileShapesAreRefused) {
  std::string h = MerkleLeafHash("x");
  EXPECT_TRUE(VerifyMerkleInclusion(0, 1, h, {}, h).ok());
  EXPECT_FALSE(VerifyMerkleInclusion(0, 0, h, {}, h).ok());
  EXPECT_FALSE(VerifyMerkleInclusion(-1, 1, h, {}, h).ok());
  EXPECT_FALSE(VerifyMerkleInclusion(1, 1, h, {}, h).ok());
  EXPECT_FALSE(VerifyMerkleInclusion(0, 2, h, {"short"}, h).ok());
  EXPECT_FALSE(VerifyMerkleInclusion(0, 1, "short", {}, "short").ok());
  std::vector<std::string> many(65, h);
  EXPECT_FALSE(VerifyMerkleInclusion(0, INT64_MAX, h, many, h).ok());
  std::vector<std::string> deep(63, h);  // a tree of 2^63-1 leaves is 63 high: shape accepted, root not
  EXPECT_FALSE(VerifyMerkleInclusion(INT64_MAX - 1, INT64_MAX, h, deep, h).ok());
}

// ---- Conformance cases ----

struct Case {
  Bundle bundle;
  TrustedRoot root;
  ArtifactDigest artifact_digest;  // sha256 of the case's artifact (or a.txt)
  std::string verifier_der;        // the leaf certificate, or key.pub as DER SPKI
};

Case Load(const std::string& name) {
  const std::filesystem::path dir = kCases / name;
  Case c;
  auto bundle = ParseBundle(Slurp(dir / "bundle.sigstore.json"), name);
  EXPECT_TRUE(bundle.ok()) << name << ": " << (bundle.ok() ? "" : bundle.error().message);
  if (bundle.ok()) c.bundle = std::move(*bundle);
  auto root_path = dir / "trusted_root.json";
  if (!std::filesystem::exists(root_path)) root_path = kFixtures / "trusted-roots/public-good/trusted_root.json";
  auto root = ParseTrustedRoot(Slurp(root_path), root_path.string());
  EXPECT_TRUE(root.ok()) << name;
  if (root.ok()) c.root = std::move(*root);
  auto artifact = dir / "artifact";
  c.artifact_digest.digest = Sha256(Slurp(std::filesystem::exists(artifact) ? artifact : kCases / "a.txt"));
  if (!c.bundle.certificates.empty()) {
    c.verifier_der = CertificateDer(c.bundle.certificates[0]);
  } else if (std::filesystem::exists(dir / "key.pub")) {
    auto key = ParsePublicKeyPemAny(Slurp(dir / "key.pub"), "key.pub");
    EXPECT_TRUE(key.ok()) << name;
    if (key.ok()) c.verifier_der = PublicKeyDer(*key);
  }
  return c;
}

// The trusted log that wrote the case's (only) entry.
const LogKey& LogOf(const Case& c, const std::string& name) {
  static const LogKey kNone;
  if (c.bundle.tlog_entries.size() != 1) {
    ADD_FAILURE() << name << ": " << c.bundle.tlog_entries.size() << " tlog entries";
    return kNone;
  }
  auto logs = FindLogs(c.root.tlogs, c.bundle.tlog_entries[0].log_id);
  if (logs.empty()) {
    ADD_FAILURE() << name << ": no trusted log for the entry";
    return kNone;
  }
  return *logs[0];
}

std::string Message(const Status& s) { return s.ok() ? "ok" : s.error().message; }

Status Set(const std::string& name) {
  Case c = Load(name);
  return VerifySignedEntryTimestamp(c.bundle.tlog_entries.at(0), LogOf(c, name));
}
Status Inclusion(const std::string& name) {
  Case c = Load(name);
  return VerifyInclusionProof(c.bundle.tlog_entries.at(0), LogOf(c, name));
}
Status Body(const std::string& name) {
  Case c = Load(name);
  return VerifyEntryBody(c.bundle.tlog_entries.at(0), c.bundle, c.verifier_der, c.artifact_digest);
}

bool Refused(const Status& s, ErrorKind kind, std::string_view words) {
  return !s.ok() && s.error().kind == kind && s.error().message.find(words) != std::string::npos;
}

TEST(SignedEntryTimestamp, HappyPathsVerifyWithThePublicGoodKey) {
  for (const char* name : {"happy-path-v0.1", "happy-path-v0.2", "happy-path-v0.3", "happy-path-intoto-in-dsse-v3",
                           "managed-key-happy-path", "intoto-with-custom-trust-root"}) {
    Status s = Set(name);
    EXPECT_TRUE(s.ok()) << name << ": " << Message(s);
  }
}

TEST(SignedEntryTimestamp, ABadSignatureIsRefused) {
  Status s = Set("set-invalid-signature_fail");
  EXPECT_TRUE(Refused(s, ErrorKind::kDenied, "signature does not verify")) << Message(s);
  // ...and its inclusion proof is fine: the SET is what is wrong.
  EXPECT_TRUE(Inclusion("set-invalid-signature_fail").ok());
}

TEST(SignedEntryTimestamp, EveryFieldItCoversCounts) {
  Case c = Load("happy-path-v0.3");
  const LogKey& log = LogOf(c, "happy-path-v0.3");
  const TlogEntry good = c.bundle.tlog_entries.at(0);
  ASSERT_TRUE(VerifySignedEntryTimestamp(good, log).ok());
  TlogEntry e = good;
  e.integrated_time = *e.integrated_time + 1;
  EXPECT_FALSE(VerifySignedEntryTimestamp(e, log).ok());
  e = good;
  e.log_index += 1;
  EXPECT_FALSE(VerifySignedEntryTimestamp(e, log).ok());
  e = good;
  e.canonicalized_body += " ";
  EXPECT_FALSE(VerifySignedEntryTimestamp(e, log).ok());
  e = good;
  e.integrated_time.reset();
  EXPECT_FALSE(VerifySignedEntryTimestamp(e, log).ok());
  e = good;
  e.log_id[0] ^= 1;
  EXPECT_TRUE(Refused(VerifySignedEntryTimestamp(e, log), ErrorKind::kDenied, "not from this log"));
  LogKey expired = log;
  expired.valid_for.end = *good.integrated_time - 1;
  EXPECT_TRUE(Refused(VerifySignedEntryTimestamp(good, expired), ErrorKind::kDenied, "validity"));
  expired.valid_for.end = *good.integrated_time;  // the end is inclusive
  EXPECT_TRUE(VerifySignedEntryTimestamp(good, expired).ok());
}

TEST(InclusionProof, HappyPathsVerify) {
  for (const char* name :
       {"happy-path-v0.1", "happy-path-v0.2", "happy-path-v0.3", "happy-path-intoto-in-dsse-v3",
        "managed-key-happy-path", "intoto-with-custom-trust-root", "rekor2-happy-path", "rekor2-dsse-happy-path"}) {
    Status s = Inclusion(name);
    EXPECT_TRUE(s.ok()) << name << ": " << Message(s);
  }
}

TEST(InclusionProof, BrokenProofsAndCheckpointsAreRefused) {
  const std::pair<const char*, const char*> cases[] = {
      {"inclusion-proof-corrupted-hash_fail", "does not lead to the root hash"},
      {"invalid-inclusion-proof_fail", "does not lead to the root hash"},
      {"checkpoint-wrong-roothash_fail", "another tree size"},
      {"checkpoint-bad-keyhint_fail", "no signature from the log"},
      {"invalid-checkpoint-signature_fail", "does not verify"},
  };
  for (const auto& [name, why] : cases) {
    Status s = Inclusion(name);
    EXPECT_TRUE(!s.ok() && s.error().message.find(why) != std::string::npos) << name << ": " << Message(s);
    // Their SETs are sound: the refusal comes from the proof or the checkpoint.
    EXPECT_TRUE(Set(name).ok()) << name;
  }
}

// Every Rekor v2 checkpoint case verifies or is refused as its folder name says.
TEST(InclusionProof, Rekor2CheckpointCases) {
  int seen = 0;
  for (const auto& dir : std::filesystem::directory_iterator(kCases)) {
    const std::string name = dir.path().filename();
    if (name.rfind("rekor2-checkpoint-", 0) != 0 && name != "rekor2-happy-path") continue;
    ++seen;
    Status s = Inclusion(name);
    const bool fail = name.size() > 5 && name.substr(name.size() - 5) == "_fail";
    EXPECT_EQ(s.ok(), !fail) << name << ": " << Message(s);
  }
  EXPECT_EQ(seen, 11);
}

TEST(InclusionProof, MissingPiecesAndOtherTreesAreRefused) {
  Case c = Load("rekor2-happy-path");
  const LogKey& log = LogOf(c, "rekor2-happy-path");
  const TlogEntry good = c.bundle.tlog_entries.at(0);
  ASSERT_TRUE(VerifyInclusionProof(good, log).ok());
  TlogEntry e = good;
  e.inclusion_proof.reset();
  EXPECT_TRUE(Refused(VerifyInclusionProof(e, log), ErrorKind::kDenied, "missing"));
  e = good;
  e.inclusion_proof->checkpoint.clear();
  EXPECT_TRUE(Refused(VerifyInclusionProof(e, log), ErrorKind::kDenied, "no checkpoint"));
  e = good;
  e.log_index += 1;  // Rekor v2: one tree, so the entry's index is the proof's
  EXPECT_TRUE(Refused(VerifyInclusionProof(e, log), ErrorKind::kDenied, "log index"));
  e = good;
  e.canonicalized_body += " ";
  EXPECT_FALSE(VerifyInclusionProof(e, log).ok());
  LogKey moved = log;
  moved.base_url = "https://log2025-alpha2.rekor.sigstage.dev";  // same key, another origin
  EXPECT_TRUE(Refused(VerifyInclusionProof(good, moved), ErrorKind::kDenied, "origin"));
  Case v1 = Load("happy-path-v0.3");  // a v1 entry against the v2 log
  EXPECT_TRUE(
      Refused(VerifyInclusionProof(v1.bundle.tlog_entries.at(0), log), ErrorKind::kDenied, "not from this log"));
}

// ---- Checkpoints ----

TEST(Checkpoint, KeyHintsAreTheLogIdsPrefix) {
  Case c = Load("rekor2-happy-path");
  for (const LogKey& log : c.root.tlogs) {
    if (log.key_details == "PKIX_ED25519") {
      // Rekor v2's log ID is the whole C2SP key hash: the hint is its first 4 bytes.
      EXPECT_EQ(NoteKeyHint(UrlHost(log.base_url), log.key), log.log_id.substr(0, 4));
      EXPECT_NE(NoteKeyHint("other.example", log.key), log.log_id.substr(0, 4));
    } else {
      EXPECT_EQ(NoteKeyHint("any", log.key), log.log_id.substr(0, 4));
    }
  }
}

TEST(Checkpoint, UrlHost) {
  EXPECT_EQ(UrlHost("https://rekor.sigstore.dev"), "rekor.sigstore.dev");
  EXPECT_EQ(UrlHost("https://log2025-1.rekor.sigstore.dev/"), "log2025-1.rekor.sigstore.dev");
  EXPECT_EQ(UrlHost("http://localhost:3000/api"), "localhost");
  EXPECT_EQ(UrlHost("https://u@h.example:1/x?y#z"), "h.example");
  EXPECT_EQ(UrlHost(""), "");
}

const std::string kSig = "\xE2\x80\x94 log.example " + oci::Base64Encode("hint-and-signature") + "\n";
const std::string kRoot = oci::Base64Encode(std::string(32, 'r'));

TEST(Checkpoint, ParsesOriginSizeRootAndExtensions) {
  auto note = ParseSignedNote("log.example\n12\n" + kRoot + "\nTimestamp: 1\n\n" + kSig + kSig);
  ASSERT_TRUE(note.ok()) << note.error().message;
  ASSERT_EQ(note->signatures.size(), 2u);
  EXPECT_EQ(note->signatures[0].name, "log.example");
  EXPECT_EQ(note->signatures[0].key_hint, "hint");
  EXPECT_EQ(note->signatures[0].signature, "-and-signature");
  auto cp = ParseCheckpoint(note->text);
  ASSERT_TRUE(cp.ok()) << cp.error().message;
  EXPECT_EQ(cp->origin, "log.example");
  EXPECT_EQ(cp->size, 12);
  EXPECT_EQ(cp->root_hash, std::string(32, 'r'));
  EXPECT_EQ(cp->extensions, std::vector<std::string>{"Timestamp: 1"});
}

TEST(Checkpoint, MalformedNotesAreRefused) {
  const std::string body = "log.example\n12\n" + kRoot + "\n";
  for (const std::string& bad : {
           body,                                                                     // no blank line
           body + "\n",                                                              // no signature
           body + "\n" + kSig.substr(0, kSig.size() - 1),                            // no final newline
           body + "\n- log.example " + oci::Base64Encode("hint-sig") + "\n",         // not an em dash
           body + "\n\xE2\x80\x94 log.example\n",                                    // no signature on the line
           body + "\n\xE2\x80\x94 log.example " + oci::Base64Encode("four") + "\n",  // hint only
           body + "\n\xE2\x80\x94 log.example not*base64\n",
           body + "\n\xE2\x80\x94 a+b " + oci::Base64Encode("hint-sig") + "\n",  // '+' in a name
           "log\texample\n12\n" + kRoot + "\n\n" + kSig,                         // a control character
           std::string(kMaxCheckpointBytes + 1, 'x'),
       }) {
    EXPECT_FALSE(ParseSignedNote(bad).ok()) << bad;
  }
  std::string many = body + "\n";
  for (size_t i = 0; i <= kMaxNoteSignatures; ++i) many += kSig;
  EXPECT_FALSE(ParseSignedNote(many).ok());
}

TEST(Checkpoint, MalformedBodiesAreRefused) {
  for (const std::string& bad : {
           std::string("12\n") + kRoot + "\n",   // no origin
           "log.example\n" + kRoot + "\n",       // no size
           std::string("log.example\n12\n"),     // no root hash
           "\n12\n" + kRoot + "\n",              // empty origin
           "log.example\n012\n" + kRoot + "\n",  // leading zero
           "log.example\n-1\n" + kRoot + "\n", "log.example\n99999999999999999999\n" + kRoot + "\n",
           "log.example\n12\n" + oci::Base64Encode("short") + "\n",
           "log.example\n12\n" + kRoot + "\n\n",  // empty extension line
           "log.example\n12\n" + kRoot,           // no final newline
       }) {
    EXPECT_FALSE(ParseCheckpoint(bad).ok()) << bad;
  }
  std::string many = "log.example\n12\n" + kRoot + "\n";
  for (size_t i = 0; i <= kMaxCheckpointExtensions; ++i) many += "x\n";
  EXPECT_FALSE(ParseCheckpoint(many).ok());
}

// ---- Entry bodies ----

TEST(EntryBody, HappyCasesMatchTheirBundles) {
  for (const char* name : {"happy-path-v0.1", "happy-path-v0.2", "happy-path-v0.3", "happy-path-intoto-in-dsse-v3",
                           "rekor2-happy-path", "rekor2-dsse-happy-path", "intoto-with-custom-trust-root",
                           "managed-key-happy-path", "managed-key-and-trusted-root"}) {
    if (std::string(name) == "managed-key-and-trusted-root" && !std::filesystem::exists(kCases / name / "key.pub"))
      continue;
    Status s = Body(name);
    EXPECT_TRUE(s.ok()) << name << ": " << Message(s);
  }
}

TEST(EntryBody, MismatchesAreRefused) {
  for (const char* name :
       {"wrong-hashedrekord-entry_fail", "wrong-hashedrekord-cert-and-sig_fail", "wrong-hashedrekord-artifact_fail",
        "incorrect-public-key_fail", "dsse-mismatch-envelope_fail", "dsse-mismatch-sig_fail",
        "intoto-log-entry-mismatch_fail", "rekor2-dsse-mismatch-envelope_fail", "rekor2-dsse-mismatch-sig_fail"}) {
    Status s = Body(name);
    EXPECT_TRUE(Refused(s, ErrorKind::kDenied, "tlog entry body")) << name << ": " << Message(s);
  }
}

TEST(EntryBody, EachFieldCounts) {
  Case c = Load("rekor2-happy-path");
  const TlogEntry& entry = c.bundle.tlog_entries.at(0);
  ASSERT_TRUE(VerifyEntryBody(entry, c.bundle, c.verifier_der, c.artifact_digest).ok());
  EXPECT_FALSE(VerifyEntryBody(entry, c.bundle, c.verifier_der, {HashAlgorithm::kSha256, Sha256("other")}).ok());
  EXPECT_FALSE(VerifyEntryBody(entry, c.bundle, c.verifier_der + "x", c.artifact_digest).ok());
  Bundle other_sig = c.bundle;
  other_sig.message_signature->signature[8] ^= 1;
  EXPECT_FALSE(VerifyEntryBody(entry, other_sig, c.verifier_der, c.artifact_digest).ok());
  TlogEntry e = entry;
  size_t at = e.canonicalized_body.find("PKIX_ECDSA_P256_SHA_256");
  ASSERT_NE(at, std::string::npos);
  e.canonicalized_body.replace(at, 23, "PKIX_ECDSA_P384_SHA_384");
  EXPECT_TRUE(
      Refused(VerifyEntryBody(e, c.bundle, c.verifier_der, c.artifact_digest), ErrorKind::kDenied, "key details"));
  e = entry;
  e.kind_version = "0.0.1";  // the body says 0.0.2
  EXPECT_FALSE(VerifyEntryBody(e, c.bundle, c.verifier_der, c.artifact_digest).ok());
  e = entry;
  e.kind = e.canonicalized_body = "x";
  EXPECT_FALSE(VerifyEntryBody(e, c.bundle, c.verifier_der, c.artifact_digest).ok());
}

TEST(EntryBody, TheArtifactDigestCountsInRekorV1Too) {
  Case c = Load("happy-path-v0.3");
  const TlogEntry& entry = c.bundle.tlog_entries.at(0);
  ASSERT_TRUE(VerifyEntryBody(entry, c.bundle, c.verifier_der, c.artifact_digest).ok());
  EXPECT_TRUE(Refused(VerifyEntryBody(entry, c.bundle, c.verifier_der, {HashAlgorithm::kSha256, Sha256("other")}),
                      ErrorKind::kDenied, "spec.data.hash"));
  Case dsse = Load("intoto-with-custom-trust-root");  // intoto 0.0.2: payload and payloadType count
  Bundle other = dsse.bundle;
  other.dsse_envelope->payload_type = "text/plain";
  EXPECT_TRUE(Refused(VerifyEntryBody(other.tlog_entries.at(0), other, dsse.verifier_der, {}), ErrorKind::kDenied,
                      "payloadType"));
}

// Issue 25: the body names the hash the signature is over, and it must be the one the
// verifier used, with that digest of the artifact.
TEST(EntryBody, TheLoggedHashAlgorithmCounts) {
  Case c = Load("happy-path-v0.3");
  const TlogEntry& entry = c.bundle.tlog_entries.at(0);
  auto logged = LoggedMessageHash(entry);
  ASSERT_TRUE(logged.ok() && logged->has_value());
  EXPECT_EQ(**logged, HashAlgorithm::kSha256);
  // The same digest bytes said to be another algorithm's: refused.
  ArtifactDigest as384{HashAlgorithm::kSha384, c.artifact_digest.digest};
  EXPECT_TRUE(Refused(VerifyEntryBody(entry, c.bundle, c.verifier_der, as384), ErrorKind::kDenied, "want sha384"));
  // A body that says sha384 with that digest holds for a sha384 claim, and only for it.
  TlogEntry e = entry;
  std::string sha384 = HashOf(HashAlgorithm::kSha384, "artifact");
  auto body = oci::ParseJson(e.canonicalized_body, "body");
  ASSERT_TRUE(body.ok());
  (*body)["spec"]["data"]["hash"] = {{"algorithm", "sha384"}, {"value", oci::HexEncode(sha384)}};
  e.canonicalized_body = body->dump();
  logged = LoggedMessageHash(e);
  ASSERT_TRUE(logged.ok() && logged->has_value());
  EXPECT_EQ(**logged, HashAlgorithm::kSha384);
  EXPECT_TRUE(VerifyEntryBody(e, c.bundle, c.verifier_der, {HashAlgorithm::kSha384, sha384}).ok());
  EXPECT_FALSE(VerifyEntryBody(e, c.bundle, c.verifier_der, c.artifact_digest).ok());
  // Only sha256, sha384 and sha512 are names at all.
  (*body)["spec"]["data"]["hash"]["algorithm"] = "md5";
  e.canonicalized_body = body->dump();
  EXPECT_TRUE(Refused(LoggedMessageHash(e).error(), ErrorKind::kDenied, "'md5' is not sha256, sha384 or sha512"));
  // Other kinds name no message hash.
  Case dsse = Load("happy-path-intoto-in-dsse-v3");
  logged = LoggedMessageHash(dsse.bundle.tlog_entries.at(0));
  ASSERT_TRUE(logged.ok());
  EXPECT_FALSE(logged->has_value());
}

TEST(EntryBody, ContentOfTheWrongKindIsRefused) {
  Case dsse = Load("happy-path-intoto-in-dsse-v3");
  Case msg = Load("happy-path-v0.3");
  // A DSSE bundle with a hashedrekord 0.0.1 entry, a message bundle with a dsse entry.
  EXPECT_FALSE(
      VerifyEntryBody(msg.bundle.tlog_entries.at(0), dsse.bundle, dsse.verifier_der, dsse.artifact_digest).ok());
  EXPECT_FALSE(VerifyEntryBody(dsse.bundle.tlog_entries.at(0), msg.bundle, msg.verifier_der, msg.artifact_digest).ok());
}

}  // namespace
}  // namespace imgtool::sigstore
