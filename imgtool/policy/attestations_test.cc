// The attestations rule: parsing its requirements, judging hand-written verified
// statements, failing closed when nothing was gathered, and on an index judging the
// index's own digest.
#include <gtest/gtest.h>

#include "policy/evaluate.h"
#include "policy/policy.h"

namespace imgtool::policy {
namespace {

const std::string kSlsa = "https://slsa.dev/provenance/v1";

Result<Policy> ParseRule(const std::string& requirements) {
  return ParsePolicy(R"({"policyVersion":1,"rules":{"attestations":)" + requirements + "}}", "/etc/pol", "p.json");
}

std::string ErrorOf(const std::string& requirements) {
  auto p = ParseRule(requirements);
  EXPECT_FALSE(p.ok());
  return p.ok() ? "" : p.error().message;
}

std::vector<AttestationRequirement> Requirements() {
  auto p = ParseRule(R"([
    {"name":"built-by-ci","predicateType":"https://slsa.dev/provenance/v1","signedBy":{"keys":["ci.pub"]},
     "conditions":[{"pointer":"/runDetails/builder/id","equals":"https://ci.example/builder"}]},
    {"predicateType":"spdxjson","signedBy":{"keys":["ci.pub"]}}])");
  EXPECT_TRUE(p.ok()) << p.error().message;
  return p.ok() ? *p->attestations : std::vector<AttestationRequirement>{};
}

std::string Statement(const std::string& type, const std::string& predicate) {
  return R"({"_type":"https://in-toto.io/Statement/v1","predicateType":")" + type +
         R"(","subject":[{"name":"x","digest":{"sha256":"aa"}}],"predicate":)" + predicate + "}";
}

std::string Provenance(const std::string& builder) {
  return Statement(kSlsa, R"({"runDetails":{"builder":{"id":")" + builder + R"("}}})");
}

TEST(Attestations, ParsesRequirements) {
  auto r = Requirements();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].name, "built-by-ci");
  EXPECT_EQ(r[0].signed_by.keys, (std::vector<std::string>{"/etc/pol/ci.pub"}));
  EXPECT_EQ(r[0].conditions.size(), 1u);
  EXPECT_EQ(r[1].name, "https://spdx.dev/Document #1");  // spdxjson resolved; no name: type and index
  EXPECT_EQ(r[1].predicate_type, "https://spdx.dev/Document");
  auto p = ParseRule(R"([{"predicateType":"custom","signedBy":{"keys":["k"]}}])");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->RuleNames(), (std::vector<std::string>{"attestations"}));
}

TEST(Attestations, ParserErrorsNameThePath) {
  EXPECT_EQ(ErrorOf("[]"),
            "p.json: $.rules.attestations: want a non-empty array of {name, predicateType, signedBy, conditions}");
  EXPECT_EQ(ErrorOf(R"([{"predicateType":"custom","signedBy":{"keys":["k"]},"when":1}])"),
            "p.json: $.rules.attestations[0].when: unknown field (known: name, predicateType, signedBy, conditions)");
  EXPECT_EQ(ErrorOf(R"([{"predicateType":"custom"}])"),
            "p.json: $.rules.attestations[0].signedBy: required: who must have signed the attestation");
  EXPECT_EQ(ErrorOf(R"([{"signedBy":{"keys":["k"]}}])"), "p.json: $.rules.attestations[0].predicateType: required");
  EXPECT_NE(ErrorOf(R"([{"predicateType":"slsa","signedBy":{"keys":["k"]}}])").find("not a predicate type URI"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(R"([{"predicateType":"custom","signedBy":{}}])"),
            "p.json: $.rules.attestations[0].signedBy: want keys (trusted public keys, PEM files) or identities "
            "(keyless signers), or both");
  EXPECT_EQ(ErrorOf(R"([{"name":"a","predicateType":"custom","signedBy":{"keys":["k"]}},
                        {"name":"a","predicateType":"custom","signedBy":{"keys":["k"]}}])"),
            "p.json: $.rules.attestations[1].name: 'a' names an earlier requirement too");
  EXPECT_EQ(ErrorOf(R"([{"predicateType":"custom","signedBy":{"keys":["k"]},"conditions":[{"pointer":"/a","gt":1}]}])")
                .substr(0, 56),
            "p.json: $.rules.attestations[0].conditions[0].gt: unknow");
}

ImageFacts WithAttestations(std::vector<AttestationFacts> a) {
  ImageFacts f;
  f.attestations = std::move(a);
  return f;
}

TEST(Attestations, OneVerifiedStatementSatisfyingEveryConditionPasses) {
  auto reqs = Requirements();
  auto f = WithAttestations(
      {{{{Provenance("https://other/b"), "ci.pub"}, {Provenance("https://ci.example/builder"), "ci.pub"}}, ""},
       {{{Statement("https://spdx.dev/Document", R"({"packages":[]})"), "ci.pub"}}, ""}});
  auto r = EvaluateAttestations(reqs, f);
  EXPECT_TRUE(r.pass) << r.reason;
  EXPECT_EQ(r.rule, "attestations");
  EXPECT_EQ(r.reason,
            "built-by-ci: attestation signed by ci.pub: /runDetails/builder/id is \"https://ci.example/builder\"; "
            "https://spdx.dev/Document #1: attestation signed by ci.pub: no conditions");
}

TEST(Attestations, FailuresNameTheRequirementAndWhy) {
  auto reqs = Requirements();
  auto f = WithAttestations({{{{Provenance("https://other/b"), "ci.pub"}}, ""},
                             {{}, "no attestations for sha256:aa (sha256-aa.att is missing or empty)"}});
  auto rows = EvaluateAttestationRequirements(reqs, f);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].pass);
  EXPECT_EQ(rows[0].rule, "built-by-ci");
  EXPECT_EQ(rows[0].reason,
            "/runDetails/builder/id is \"https://other/b\", wants \"https://ci.example/builder\" (attestation signed "
            "by ci.pub)");
  EXPECT_EQ(rows[1].reason,
            "no verified attestation of type https://spdx.dev/Document: no attestations for sha256:aa (sha256-aa.att "
            "is missing or empty)");
  auto r = EvaluateAttestations(reqs, f);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.reason.substr(0, 13), "built-by-ci: ");
  EXPECT_NE(r.reason.find("; https://spdx.dev/Document #1: no verified attestation"), std::string::npos);
}

TEST(Attestations, StatementsThatCannotBeJudgedFailClosed) {
  auto reqs = Requirements();
  reqs.resize(1);
  for (const std::string& s : {std::string("not json"), Statement("https://spdx.dev/Document", "{}"),
                               std::string(R"({"predicateType":"https://slsa.dev/provenance/v1"})"),
                               Statement(kSlsa, R"({"runDetails":[]})")}) {
    auto r = EvaluateAttestations(reqs, WithAttestations({{{{s, "ci.pub"}}, ""}}));
    EXPECT_FALSE(r.pass) << s;
  }
  // Never gathered, or not one per requirement: denied.
  EXPECT_EQ(EvaluateAttestations(reqs, ImageFacts{}).reason, "built-by-ci: the attestation check was not gathered");
  EXPECT_FALSE(EvaluateAttestations(reqs, WithAttestations({})).pass);
}

TEST(Attestations, AnIndexIsJudgedByItsOwnDigest) {
  Policy p;
  p.attestations = Requirements();
  p.attestations->resize(1);
  ImageFacts top;
  top.digest = "sha256:" + std::string(64, 'a');
  top.attestations = std::vector<AttestationFacts>{{{{Provenance("https://ci.example/builder"), "ci.pub"}}, ""}};
  IndexFacts index;
  ChildFacts child;
  child.platform = "linux/amd64";
  child.image.digest = "sha256:" + std::string(64, 'b');  // its attestations never gathered: never asked
  index.images.push_back(child);
  auto d = EvaluateIndex(p, top, index);
  ASSERT_EQ(d.rules.size(), 1u);
  EXPECT_TRUE(d.rules[0].pass) << d.rules[0].reason;
  top.attestations = std::vector<AttestationFacts>{{{}, "no attestations for the index"}};
  EXPECT_FALSE(EvaluateIndex(p, top, index).pass);
}

}  // namespace
}  // namespace imgtool::policy
