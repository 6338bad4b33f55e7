#include "oci/canonical_json.h"

#include <gtest/gtest.h>

namespace imgtool::oci {

TEST(CanonicalJson, SortsKeysAndDropsWhitespace) {
  Json j = Json::parse(R"({ "b": 1, "a": {"z": "x", "y": [3, 2]}, "A": true })");
  EXPECT_EQ(*CanonicalJson(j), R"({"A":true,"a":{"y":[3,2],"z":"x"},"b":1})");
}

TEST(CanonicalJson, EscapesOnlyWhatItMust) {
  Json j = {{"s", "é\"\\\n<&>"}};
  EXPECT_EQ(*CanonicalJson(j), "{\"s\":\"é\\\"\\\\\\n<&>\"}");
}

TEST(CanonicalJson, RefusesFloats) {
  auto r = CanonicalJson(Json{{"x", 1.5}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "canonical JSON: floating-point numbers are not allowed");
}

TEST(CanonicalJson, RefusesInvalidUtf8) {
  EXPECT_FALSE(CanonicalJson(Json{{"x", std::string("\xff\xfe")}}).ok());
}

TEST(ParseJson, NamesTheByteOfASyntaxError) {
  auto r = ParseJson("{\"a\": }", "spec.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.error().message.rfind("spec.json: malformed JSON at byte 7: ", 0), 0u) << r.error().message;
}

// Found by tests/fuzz (fuzz_json): nlohmann throws out_of_range, not parse_error, for a
// number no double holds, and that escaped ParseJson and ended the process.
TEST(ParseJson, NumberOverflowIsAnError) {
  auto r = ParseJson("[1, 1e400]", "doc");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.error().message, "doc: malformed JSON: number overflow parsing '1e400'");
  EXPECT_FALSE(ParseJson("{\"a\": -145e7777777777777777777777777}", "doc").ok());
}

TEST(StringMember, OnlyAStringMemberOfAnObject) {
  Json j = Json::parse(R"({"a": "x", "n": 1, "l": ["x"], "o": {"a": "y"}, "z": null})");
  EXPECT_EQ(StringMember(j, "a"), "x");
  for (const char* key : {"n", "l", "o", "z", "missing"}) EXPECT_EQ(StringMember(j, key), "") << key;
  EXPECT_EQ(StringMember(Json::parse(R"(["a"])"), "a"), "");
  EXPECT_EQ(StringMember(Json("a"), "a"), "");
}

TEST(ParseJson, RefusesDuplicateKeysAtAnyDepth) {
  EXPECT_EQ(ParseJson(R"({"a":{"b":1,"b":2}})", "doc").error().message, "doc: duplicate key \"b\"");
  EXPECT_TRUE(ParseJson(R"({"a":{"b":1},"c":{"b":2}})", "doc").ok());
}

}  // namespace imgtool::oci
