#include "policy/policy.h"

#include <gtest/gtest.h>

#include "policy/pinned.h"

namespace imgtool::policy {
namespace {

std::string ErrorOf(const std::string& text) {
  auto p = ParsePolicy(text, "/etc/pol", "p.json");
  EXPECT_FALSE(p.ok());
  if (p.ok()) return "";
  EXPECT_EQ(p.error().kind, ErrorKind::kInvalidInput);
  return p.error().message;
}

TEST(Policy, ParsesEveryRule) {
  auto p = ParsePolicy(R"({"policyVersion":1,"rules":{
    "nonRoot":{},"digestPinned":{},"signedBy":{"keys":["keys/a.pub","/abs/b.pub"]},
    "allowedStacks":{"stacks":[{"cuda":"13.0.96","cudnn":"9.19.0","nccl":"2.28.9"}]},
    "requiredLabels":{"labels":["org.opencontainers.image.source"]},
    "baseImages":{"allow":["sha256:)" +
                           std::string(64, 'a') + R"("],"allowScratch":true},
    "noSetuid":{},"maxSize":{"bytes":100,"uncompressedBytes":200}},
    "dockerfile":{"noLatest":false}})",
                       "/etc/pol", "p.json");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->RuleNames(), (std::vector<std::string>{"nonRoot", "digestPinned", "signedBy", "allowedStacks",
                                                      "requiredLabels", "baseImages", "noSetuid", "maxSize"}));
  EXPECT_EQ(p->signed_by->keys, (std::vector<std::string>{"/etc/pol/keys/a.pub", "/abs/b.pub"}));
  EXPECT_EQ(p->allowed_stacks->stacks[0].at("nccl"), "2.28.9");
  EXPECT_EQ(*p->max_size->uncompressed_bytes, 200u);
  EXPECT_FALSE(p->dockerfile.no_latest);
  EXPECT_TRUE(p->dockerfile.from_digest);
}

TEST(Policy, SignedByKeylessIdentities) {
  auto p = ParsePolicy(R"({"policyVersion":1,"rules":{"signedBy":{"identities":[
    {"issuer":"https://token.actions.githubusercontent.com","subjectRegExp":"^https://github.com/org/.*$"},
    {"issuerRegExp":"https://accounts\\.example\\.com","subject":"ci@example.com"}],
    "trustedRoot":"sigstore/trusted_root.json"}}})",
                       "/etc/pol", "p.json");
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_EQ(p->signed_by->identities.size(), 2u);
  EXPECT_TRUE(p->signed_by->keys.empty());
  EXPECT_EQ(p->signed_by->identities[0].issuer, "https://token.actions.githubusercontent.com");
  ASSERT_TRUE(p->signed_by->identities[0].subject_regexp.has_value());
  EXPECT_EQ(p->signed_by->identities[0].subject_regexp->pattern(), "^https://github.com/org/.*$");
  EXPECT_TRUE(p->signed_by->identities[0].subject_regexp->Search("https://github.com/org/app"));
  EXPECT_FALSE(p->signed_by->identities[0].subject_regexp->Search("https://evil.example/https://github.com/org/"));
  ASSERT_TRUE(p->signed_by->identities[1].issuer_regexp.has_value());
  EXPECT_EQ(p->signed_by->identities[1].issuer_regexp->pattern(), "https://accounts\\.example\\.com");
  EXPECT_FALSE(p->signed_by->identities[0].issuer_regexp.has_value());
  EXPECT_FALSE(p->signed_by->identities[1].subject_regexp.has_value());
  EXPECT_EQ(p->signed_by->identities[1].subject, "ci@example.com");
  EXPECT_EQ(p->signed_by->trusted_root, "/etc/pol/sigstore/trusted_root.json");
}

TEST(Policy, SignedByIdentityMistakesFailClosed) {
  EXPECT_EQ(
      ErrorOf(R"({"policyVersion":1,"rules":{"signedBy":{}}})"),
      "p.json: $.rules.signedBy: want keys (trusted public keys, PEM files) or identities (keyless signers), or both");
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1,"rules":{"signedBy":{"identities":[{"subject":"a"}]}}})"),
            "p.json: $.rules.signedBy.identities[0]: want exactly one of issuer and issuerRegExp");
  EXPECT_EQ(
      ErrorOf(
          R"({"policyVersion":1,"rules":{"signedBy":{"identities":[{"issuer":"i","subject":"a","subjectRegExp":"b"}]}}})"),
      "p.json: $.rules.signedBy.identities[0]: want exactly one of subject and subjectRegExp");
  EXPECT_EQ(
      ErrorOf(R"({"policyVersion":1,"rules":{"signedBy":{"identities":[{"issuer":"i","subject":"a","email":"x"}]}}})"),
      "p.json: $.rules.signedBy.identities[0].email: unknown field (known: issuer, issuerRegExp, subject, "
      "subjectRegExp)");
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1,"rules":{"signedBy":{"keys":["a.pub"],"trustedRoot":"r.json"}}})"),
            "p.json: $.rules.signedBy.trustedRoot: only with identities");
  EXPECT_EQ(
      ErrorOf(R"({"policyVersion":1,"rules":{"signedBy":{"identities":[]}}})"),
      "p.json: $.rules.signedBy.identities: want a non-empty array of {issuer|issuerRegExp, subject|subjectRegExp}");
}

// Identity regexps are Go's (RE2), compiled with the policy: a pattern Go refuses fails the
// policy at parse time, naming its path, not the first image it is matched against.
TEST(Policy, SignedByRegexpsAreCompiledWhenParsed) {
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1,"rules":{"signedBy":{"identities":[{"issuer":"i","subjectRegExp":"(a"}]}}})"),
            "p.json: $.rules.signedBy.identities[0].subjectRegExp: not a valid Go regexp (RE2 syntax): missing ): (a");
  EXPECT_EQ(ErrorOf(R"json({"policyVersion":1,"rules":{"signedBy":{"identities":[
               {"issuer":"i","subject":"s"},{"issuerRegExp":"^https://(?=x)","subject":"s"}]}}})json"),
            "p.json: $.rules.signedBy.identities[1].issuerRegExp: not a valid Go regexp (RE2 syntax): "
            "invalid perl operator: (?=");
  EXPECT_EQ(
      ErrorOf(R"({"policyVersion":1,"rules":{"signedBy":{"identities":[{"issuer":"i","subjectRegExp":"a\\Cb"}]}}})"),
      "p.json: $.rules.signedBy.identities[0].subjectRegExp: not a valid Go regexp (RE2 syntax): "
      "invalid escape sequence: \\C");
  // What backtracked for minutes under std::regex is answered at once.
  auto p = ParsePolicy(R"({"policyVersion":1,"rules":{"signedBy":{"identities":[
    {"issuer":"i","subjectRegExp":"^https://github.com/(a+)+$"}]}}})",
                       "", "p.json");
  ASSERT_TRUE(p.ok()) << p.error().message;
  const std::string subject = "https://github.com/" + std::string(3000, 'a');
  EXPECT_FALSE(p->signed_by->identities[0].subject_regexp->Search(subject + "!"));
  EXPECT_TRUE(p->signed_by->identities[0].subject_regexp->Search(subject));
}

TEST(Policy, UnknownRuleOrFieldNamesThePath) {
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1,"rules":{"nonRot":{}}})"),
            "p.json: $.rules.nonRot: unknown rule (known: nonRoot, digestPinned, signedBy, allowedStacks, "
            "requiredLabels, baseImages, noSetuid, maxSize, attestations)");
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1,"rules":{"nonRoot":{"strict":true}}})"),
            "p.json: $.rules.nonRoot.strict: unknown field (known: )");
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1,"rules":{"maxSize":{"byte":1}}})"),
            "p.json: $.rules.maxSize.byte: unknown field (known: bytes, uncompressedBytes)");
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1,"rules":{"allowedStacks":{"stacks":[{"cuda":"1","cudaa":"2"}]}}})"),
            "p.json: $.rules.allowedStacks.stacks[0].cudaa: unknown field (known: cuda, cublas, cudnn, nccl, driver)");
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1,"rule":{}})"),
            "p.json: $.rule: unknown field (known: policyVersion, description, rules, dockerfile)");
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1,"dockerfile":{"fromDigest":"yes"}})"),
            "p.json: $.dockerfile.fromDigest: want true or false");
}

TEST(Policy, MalformedOrEmptyIsAnError) {
  EXPECT_EQ(ErrorOf("{").rfind("p.json: malformed JSON at byte ", 0), 0u);
  EXPECT_EQ(ErrorOf(R"({"rules":{}})"), "p.json: $.policyVersion: required (1)");
  EXPECT_EQ(ErrorOf(R"({"policyVersion":2,"rules":{}})"), "p.json: $.policyVersion: unsupported version 2 (want 1)");
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1,"rules":{"signedBy":{"keys":[]}}})"),
            "p.json: $.rules.signedBy.keys: must not be empty");
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1,"rules":{"baseImages":{"allow":["sha256:12"]}}})")
                .rfind("p.json: $.rules.baseImages.allow[0]: ", 0),
            0u);
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1,"rules":{"maxSize":{"bytes":-1}}})"),
            "p.json: $.rules.maxSize.bytes: want a non-negative integer (bytes)");
  EXPECT_EQ(ErrorOf(R"({"policyVersion":1})"), "p.json: $: has neither \"rules\" nor \"dockerfile\"");
}

TEST(Pinned, LocalDigestFormIsSplitOff) {
  const std::string d = "sha256:" + std::string(64, 'b');
  auto p = ParsePinnedReference("oci:/x/lay@" + d);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->ref.path, "/x/lay");
  EXPECT_EQ(p->ref.tag, d);
  EXPECT_EQ(p->digest, d);
  auto t = ParsePinnedReference("oci:/x/lay:v1");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->digest, "");
  auto r = ParsePinnedReference("docker://reg.example/app@" + d);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->digest, d);
  EXPECT_FALSE(ParsePinnedReference("oci:/x/lay:v1@" + d).ok());
}

}  // namespace
}  // namespace imgtool::policy
