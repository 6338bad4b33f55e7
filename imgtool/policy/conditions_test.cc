// The attestations rule's conditions (conditions.h) and Debian version order
// (debian_version.h) on hand-written predicates: each operator holding, failing and
// unevaluable, every/any/none on empty and non-arrays, '*', the caps, and the parser's
// errors naming the JSON path.
#include "policy/conditions.h"

#include <gtest/gtest.h>

#include "policy/debian_version.h"

namespace imgtool::policy {
namespace {

using oci::Json;
using State = ConditionOutcome::State;

std::vector<Condition> Parse(const std::string& text) {
  auto c = ParseConditions(Json::parse(text), "$.c");
  EXPECT_TRUE(c.ok()) << c.error().message;
  return c.ok() ? *c : std::vector<Condition>{};
}

std::string ParseError(const std::string& text) {
  auto c = ParseConditions(Json::parse(text), "$.c");
  EXPECT_FALSE(c.ok());
  return c.ok() ? "" : c.error().message;
}

ConditionOutcome Eval(const std::string& conditions, const std::string& predicate) {
  size_t steps = 0;
  return EvaluateConditions(Parse(conditions), Json::parse(predicate), steps);
}

const char* kProvenance = R"({"runDetails":{"builder":{"id":"https://ci.example/b"}},
  "buildDefinition":{"resolvedDependencies":[{"digest":{"sha256":"aa"}},{"digest":{"sha1":"bb"}}]},
  "a/b":{"m~n":7},"list":[1,2,3],"empty":[],"n":null})";

TEST(Conditions, EqualsHoldsFailsAndFailsClosedOnAMissingPointer) {
  auto o = Eval(R"([{"pointer":"/runDetails/builder/id","equals":"https://ci.example/b"}])", kProvenance);
  EXPECT_EQ(o.state, State::kHolds) << o.why;
  o = Eval(R"([{"pointer":"/runDetails/builder/id","equals":"https://ci.example/X"}])", kProvenance);
  EXPECT_EQ(o.state, State::kFails);
  EXPECT_EQ(o.why, R"(/runDetails/builder/id is "https://ci.example/b", wants "https://ci.example/X")");
  o = Eval(R"([{"pointer":"/runDetails/nope","equals":"x"}])", kProvenance);
  EXPECT_EQ(o.state, State::kUnevaluable);
  EXPECT_EQ(o.why, R"(/runDetails/nope is missing (wants "x"))");
  // Any JSON value, compared exactly: 3 is not "3", an array is compared whole.
  EXPECT_EQ(Eval(R"([{"pointer":"/list","equals":[1,2,3]}])", kProvenance).state, State::kHolds);
  EXPECT_EQ(Eval(R"([{"pointer":"/list/2","equals":"3"}])", kProvenance).state, State::kFails);
  EXPECT_EQ(Eval(R"([{"pointer":"/n","equals":null}])", kProvenance).state, State::kHolds);
}

TEST(Conditions, PointerEscapesAndArrayIndexes) {
  EXPECT_EQ(Eval(R"([{"pointer":"/a~1b/m~0n","equals":7}])", kProvenance).state, State::kHolds);
  EXPECT_EQ(Eval(R"([{"pointer":"/list/0","equals":1}])", kProvenance).state, State::kHolds);
  // "01", "-" and an index past the end name nothing.
  for (const char* p : {"/list/01", "/list/-", "/list/3", "/list/x"}) {
    EXPECT_EQ(Eval(std::string(R"([{"pointer":")") + p + R"(","absent":true}])", kProvenance).state, State::kHolds)
        << p;
  }
  EXPECT_EQ(Eval(R"([{"pointer":"","present":true}])", kProvenance).state, State::kHolds);
}

TEST(Conditions, MatchesIsASearchOnStringsOnly) {
  EXPECT_EQ(Eval(R"([{"pointer":"/runDetails/builder/id","matches":"^https://ci\\.example/"}])", kProvenance).state,
            State::kHolds);
  auto o = Eval(R"([{"pointer":"/runDetails/builder/id","matches":"^x"}])", kProvenance);
  EXPECT_EQ(o.state, State::kFails);
  o = Eval(R"([{"pointer":"/list","matches":"1"}])", kProvenance);
  EXPECT_EQ(o.state, State::kUnevaluable);
  EXPECT_EQ(o.why, "/list is an array (3 elements), not a string (matches needs one)");
}

TEST(Conditions, OneOfPresentAbsent) {
  EXPECT_EQ(Eval(R"([{"pointer":"/list/1","oneOf":[5,2]}])", kProvenance).state, State::kHolds);
  EXPECT_EQ(Eval(R"([{"pointer":"/list/1","oneOf":[5,6]}])", kProvenance).state, State::kFails);
  EXPECT_EQ(Eval(R"([{"pointer":"/x","oneOf":[5,6]}])", kProvenance).state, State::kUnevaluable);
  EXPECT_EQ(Eval(R"([{"pointer":"/n","present":true}])", kProvenance).state, State::kHolds);  // null is present
  EXPECT_EQ(Eval(R"([{"pointer":"/x","present":true}])", kProvenance).state, State::kFails);
  auto o = Eval(R"([{"pointer":"/list","absent":true}])", kProvenance);
  EXPECT_EQ(o.state, State::kFails);
  EXPECT_EQ(o.why, "/list is an array (3 elements), wants it absent");
}

TEST(Conditions, EveryAnyNoneOnArraysEmptyArraysAndOthers) {
  const char* every =
      R"([{"pointer":"/buildDefinition/resolvedDependencies","every":[{"pointer":"/digest/sha256","present":true}]}])";
  auto o = Eval(every, kProvenance);
  EXPECT_EQ(o.state, State::kFails);
  EXPECT_EQ(o.why, "/buildDefinition/resolvedDependencies/1/digest/sha256 is absent, wants it present");
  // '*' is every over the array before it.
  o = Eval(R"([{"pointer":"/buildDefinition/resolvedDependencies/*/digest/sha256","present":true}])", kProvenance);
  EXPECT_EQ(o.why, "/buildDefinition/resolvedDependencies/1/digest/sha256 is absent, wants it present");
  EXPECT_EQ(Eval(R"([{"pointer":"/empty","every":[{"pointer":"","equals":1}]}])", kProvenance).state, State::kHolds);
  EXPECT_EQ(Eval(R"([{"pointer":"/empty","any":[{"pointer":"","equals":1}]}])", kProvenance).state, State::kFails);
  EXPECT_EQ(Eval(R"([{"pointer":"/empty","none":[{"pointer":"","equals":1}]}])", kProvenance).state, State::kHolds);
  EXPECT_EQ(Eval(R"([{"pointer":"/list","any":[{"pointer":"","equals":2}]}])", kProvenance).state, State::kHolds);
  o = Eval(R"([{"pointer":"/list","none":[{"pointer":"","equals":2}]}])", kProvenance);
  EXPECT_EQ(o.state, State::kFails);
  EXPECT_EQ(o.why, "/list/1 is 2 (no element of /list may match)");
  for (const char* q : {"every", "any", "none"}) {
    const std::string nested = std::string("\"") + q + R"(":[{"pointer":"","present":true}]}])";
    o = Eval(R"([{"pointer":"/runDetails",)" + nested, kProvenance);
    EXPECT_EQ(o.state, State::kUnevaluable) << q;
    EXPECT_EQ(o.why, "/runDetails is an object (1 members), not an array (" + std::string(q) + " needs one)");
    o = Eval(R"([{"pointer":"/missing",)" + nested, kProvenance);
    EXPECT_EQ(o.state, State::kUnevaluable) << q;
  }
}

TEST(Conditions, FailingDecidesAConjunctionUnevaluableElementsFailClosed) {
  // An element that cannot be judged: none cannot say it does not match.
  const char* sbom = R"({"packages":[{"name":"zlib","versionInfo":"1.3"},{"name":"openssl"}]})";
  const char* none = R"([{"pointer":"/packages","none":[{"pointer":"/name","equals":"openssl"},
                                                         {"pointer":"/versionInfo","versionBelow":"3.0.11-1"}]}])";
  auto o = Eval(none, sbom);
  EXPECT_EQ(o.state, State::kUnevaluable);
  EXPECT_EQ(o.why, "/packages/1/versionInfo is missing (versionBelow needs a version)");
  // zlib's name fails the conjunction, whatever its version: no error.
  o = Eval(none, R"({"packages":[{"name":"zlib"},{"name":"openssl","versionInfo":"3.0.2-0ubuntu1"}]})");
  EXPECT_EQ(o.state, State::kFails);
  EXPECT_EQ(
      o.why,
      R"(/packages/1/name is "openssl" and /packages/1/versionInfo "3.0.2-0ubuntu1" is below "3.0.11-1" (no element of /packages may match))");
  EXPECT_EQ(Eval(none, R"({"packages":[{"name":"openssl","versionInfo":"3.0.13-0ubuntu3"}]})").state, State::kHolds);
}

TEST(Conditions, Versions) {
  EXPECT_EQ(Eval(R"([{"pointer":"/v","versionAtLeast":"1:2.0"}])", R"({"v":"1:2.0~rc1"})").state, State::kFails);
  EXPECT_EQ(Eval(R"([{"pointer":"/v","versionAtLeast":"2.0"}])", R"({"v":"1:1.0"})").state, State::kHolds);
  auto o = Eval(R"([{"pointer":"/v","versionBelow":"2.0"}])", R"({"v":"sha256:ab"})");
  EXPECT_EQ(o.state, State::kUnevaluable);
  EXPECT_EQ(Eval(R"([{"pointer":"/v","versionBelow":"2.0"}])", R"({"v":2})").state, State::kUnevaluable);
}

TEST(DebianVersion, OrdersAsDpkg) {
  auto lt = [](const std::string& a, const std::string& b) {
    return CompareDebianVersions(a, b) < 0 && CompareDebianVersions(b, a) > 0;
  };
  EXPECT_TRUE(lt("1.0~rc1", "1.0"));
  EXPECT_TRUE(lt("1.0", "1.0+b1"));
  EXPECT_TRUE(lt("1.0", "1.0-1"));
  EXPECT_TRUE(lt("1.0-1", "1.0-1ubuntu1"));
  EXPECT_TRUE(lt("1.9", "1.10"));
  EXPECT_TRUE(lt("3.0.2-0ubuntu1", "3.0.11-1"));
  EXPECT_TRUE(lt("9:1.0", "10:0.1"));
  EXPECT_TRUE(lt("2.0", "1:0.1"));
  EXPECT_TRUE(lt("1.0a", "1.0+"));
  EXPECT_TRUE(lt("1.0~~", "1.0~"));
  EXPECT_TRUE(lt("1." + std::string(40, '9'), "1.1" + std::string(40, '0')));
  EXPECT_EQ(CompareDebianVersions("1.01", "1.1"), 0);
  EXPECT_EQ(CompareDebianVersions("0:1.0", "1.0"), 0);
  for (const char* bad : {"", "a1", "1:", "x:1.0", "1.0-", "1.0 1", "1.0-a_b"})
    EXPECT_FALSE(CheckDebianVersion(bad).ok()) << bad;
  for (const char* good : {"1.0", "1:2.3-4", "2.3.4-1ubuntu0.1~22.04", "1.0+dfsg-2"})
    EXPECT_TRUE(CheckDebianVersion(good).ok()) << good;
}

TEST(Conditions, StepAndArrayCapsFailClosed) {
  Json big = Json::array();
  for (size_t i = 0; i < 100000; ++i) big.push_back({{"a", 1}});
  Json doc = {{"big", big}};
  auto conditions = [](int n) {
    Json nested = Json::array();
    for (int i = 0; i < n; ++i) nested.push_back({{"pointer", "/a"}, {"present", true}});
    return Json::array({{{"pointer", "/big"}, {"every", nested}}}).dump();
  };
  size_t steps = 0;
  auto o = EvaluateConditions(Parse(conditions(9)), doc, steps);  // 900,001 steps
  EXPECT_EQ(o.state, State::kHolds) << o.why;
  steps = 0;
  o = EvaluateConditions(Parse(conditions(10)), doc, steps);  // 1,000,001 steps
  EXPECT_EQ(o.state, State::kUnevaluable);
  EXPECT_EQ(o.why, "more than 1000000 condition evaluations (the cap on one attestation)");
  doc["big"].push_back({{"a", 1}});
  steps = 0;
  o = EvaluateConditions(Parse(conditions(1)), doc, steps);
  EXPECT_EQ(o.state, State::kUnevaluable);
  EXPECT_EQ(o.why, "/big has 100001 elements; every walks at most 100000");
}

TEST(Conditions, ParserErrorsNameThePath) {
  EXPECT_EQ(
      ParseError(R"([{"pointer":"/a","gt":1}])"),
      "$.c[0].gt: unknown field or operator (known: pointer, equals, matches, oneOf, present, absent, every, any, "
      "none, versionBelow, versionAtLeast)");
  EXPECT_EQ(ParseError(R"([{"pointer":"/a","equals":1,"present":true}])"),
            "$.c[0]: two operators (equals, present): want exactly one");
  EXPECT_EQ(ParseError(R"([{"pointer":"/a"}])").substr(0, 22), "$.c[0]: no operator (w");
  EXPECT_EQ(ParseError(R"([{"equals":1}])"), "$.c[0].pointer: required: a JSON pointer string");
  EXPECT_EQ(ParseError(R"([{"pointer":"a","equals":1}])").substr(0, 17), "$.c[0].pointer: a");
  EXPECT_EQ(ParseError(R"([{"pointer":"/a~2","equals":1}])"), "$.c[0].pointer: '~' not followed by 0 or 1");
  EXPECT_EQ(ParseError(R"([{"pointer":"/a","matches":"(a"}])").substr(0, 17), "$.c[0].matches: n");
  EXPECT_EQ(ParseError(R"x([{"pointer":"/a","matches":"(?=a)"}])x").substr(0, 17), "$.c[0].matches: n");
  EXPECT_EQ(ParseError(R"([{"pointer":"/a","present":false}])"), "$.c[0].present: want true");
  EXPECT_EQ(ParseError(R"([{"pointer":"/a","oneOf":[]}])"), "$.c[0].oneOf: want a non-empty array of values");
  EXPECT_EQ(ParseError(R"([{"pointer":"/a","versionBelow":"x"}])").substr(0, 41),
            "$.c[0].versionBelow: not a Debian version");
  EXPECT_EQ(ParseError(R"([{"pointer":"/a","every":[]}])"), "$.c[0].every: want a non-empty array of conditions");
  EXPECT_EQ(ParseError(R"([])"), "$.c: want a non-empty array of conditions");
  EXPECT_EQ(ParseError(R"([{"pointer":"/a","every":[{"pointer":"/b","nope":1}]}])").substr(0, 24),
            "$.c[0].every[0].nope: un");
}

TEST(Conditions, NestingIsCappedBeforeRecursing) {
  auto nested = [](int levels) {
    std::string open, close;
    for (int i = 0; i < levels; ++i) {
      open += R"({"pointer":"","every":[)";
      close += "]}";
    }
    return "[" + open + R"({"pointer":"","present":true})" + close + "]";
  };
  EXPECT_EQ(Parse(nested(kMaxConditionDepth)).size(), 1u);
  EXPECT_NE(ParseError(nested(kMaxConditionDepth + 1)).find("nested deeper than 8 levels"), std::string::npos);
  // 100,000 levels: refused at level 9, never built.
  std::string deep = nested(100000);
  EXPECT_NE(ParseError(deep).find("nested deeper than 8 levels"), std::string::npos);
  // A '*' is a level.
  EXPECT_EQ(Parse(R"([{"pointer":"/*/*/*/*/*/*/*/*","present":true}])").size(), 1u);
  EXPECT_NE(ParseError(R"([{"pointer":"/*/*/*/*/*/*/*/*/*","present":true}])").find("nested deeper"),
            std::string::npos);
  EXPECT_NE(
      ParseError(R"([{"pointer":"/*/*/*/*/*/*/*/*","every":[{"pointer":"","present":true}]}])").find("nested deeper"),
      std::string::npos);
}

}  // namespace
}  // namespace imgtool::policy
