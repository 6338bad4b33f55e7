#include "oci/canonical_json.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <functional>

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

TEST(CanonicalJson, RefusesInvalidUtf8) { EXPECT_FALSE(CanonicalJson(Json{{"x", std::string("\xff\xfe")}}).ok()); }

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

namespace {

// `levels` arrays (or objects {"k": ...}) inside each other around `leaf`.
std::string Nested(int levels, bool objects, const std::string& leaf = "1") {
  std::string out;
  for (int i = 0; i < levels; ++i) out += objects ? "{\"k\":" : "[";
  out += leaf;
  for (int i = 0; i < levels; ++i) out += objects ? "}" : "]";
  return out;
}

// Runs `f` on a thread whose stack is `bytes`: a deeper recursion than the stack holds
// ends the test binary (a crash is a failure too).
void OnStackOf(size_t bytes, const std::function<void()>& f) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, bytes), 0);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, run, const_cast<std::function<void()>*>(&f)), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

}  // namespace

TEST(ParseJson, NestingUpToTheCapIsRead) {
  for (bool objects : {false, true}) {
    std::string doc = Nested(kMaxJsonDepth, objects);
    auto strict = ParseJson(doc, "doc");
    ASSERT_TRUE(strict.ok()) << strict.error().message;
    EXPECT_EQ(*CanonicalJson(*strict), doc);
    auto lenient = ParseJsonLenient(doc, "doc");
    ASSERT_TRUE(lenient.ok());
    EXPECT_EQ(*lenient, *strict);
    EXPECT_EQ(ParseJsonOrDiscarded(doc), *strict);
  }
  // Only arrays and objects are levels: brackets inside strings and scalars are not.
  EXPECT_TRUE(ParseJson(Nested(kMaxJsonDepth - 1, false, R"([1, "[[{{", null])"), "doc").ok());
}

TEST(ParseJson, OneLevelPastTheCapIsRefused) {
  const std::string why = "doc: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
  for (bool objects : {false, true}) {
    std::string doc = Nested(kMaxJsonDepth + 1, objects);
    auto strict = ParseJson(doc, "doc");
    ASSERT_FALSE(strict.ok());
    EXPECT_EQ(strict.error().kind, ErrorKind::kInvalidInput);
    EXPECT_EQ(strict.error().message, why);
    auto lenient = ParseJsonLenient(doc, "doc");
    ASSERT_FALSE(lenient.ok());  // too deep is an error, not "not JSON"
    EXPECT_EQ(lenient.error().message, why);
    EXPECT_TRUE(ParseJsonOrDiscarded(doc).is_discarded());
  }
  // Arrays and objects count alike, wherever the deep part sits.
  std::string mixed =
      "{\"a\": [1, 2], \"b\": " + Nested(kMaxJsonDepth / 2, true, Nested(kMaxJsonDepth / 2, false)) + "}";
  EXPECT_EQ(ParseJson(mixed, "doc").error().message, why);
}

// The reports of issue 24: an index nested 12,000 deep, a config 200,000 deep. Refused
// as the 129th level opens, before the rest is read: also when it never closes.
TEST(ParseJson, DeepDocumentsAreRefusedAsTheyOpen) {
  const std::string why = "doc: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
  for (int levels : {12'000, 200'000}) {
    for (bool objects : {false, true}) {
      EXPECT_EQ(ParseJson(Nested(levels, objects), "doc").error().message, why) << levels;
      EXPECT_EQ(ParseJsonLenient(Nested(levels, objects), "doc").error().message, why) << levels;
    }
  }
  EXPECT_EQ(ParseJson(std::string(200'000, '['), "doc").error().message, why);
  // Malformed before the cap is reached: a syntax error, as before.
  EXPECT_NE(ParseJson(std::string(kMaxJsonDepth, '['), "doc").error().message, why);
}

TEST(ParseJson, LenientReadsTheLastDuplicateAndDiscardsMalformedText) {
  auto dup = ParseJsonLenient(R"({"a":1,"a":2})", "doc");
  ASSERT_TRUE(dup.ok());
  EXPECT_EQ((*dup)["a"], 2);
  auto bad = ParseJsonLenient("{\"secret\": \"hunter2\"", "doc");
  ASSERT_TRUE(bad.ok());  // not an error that would quote the text
  EXPECT_TRUE(bad->is_discarded());
  EXPECT_TRUE(ParseJsonOrDiscarded("{").is_discarded());
  EXPECT_EQ(ParseJsonOrDiscarded(R"({"a":[1]})")["a"][0], 1);
}

// The general property behind the cap: whatever the parser accepts, every operation that
// recurses over it (nlohmann's dump, copy, ==, <, diff, patch, flatten; CanonicalJson's
// float check) fits in a quarter of a thread's default 8 MiB stack, under ASan too
// (Json::diff, the hungriest, needs ~80 KiB plain and ~1 MiB under ASan at the cap).
TEST(ParseJson, EveryRecursiveOperationFitsOnTheStackAtTheCap) {
  for (bool objects : {false, true}) {
    Json a = *ParseJson(Nested(kMaxJsonDepth, objects, "1"), "a");
    Json b = *ParseJson(Nested(kMaxJsonDepth, objects, "2"), "b");
    bool done = false;
    OnStackOf(2 << 20, [&] {
      EXPECT_EQ(a.dump(), Nested(kMaxJsonDepth, objects, "1"));
      EXPECT_TRUE(CanonicalJson(a).ok());
      const Json copy = a;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the test
      EXPECT_TRUE(copy == a);
      EXPECT_FALSE(a == b);
      EXPECT_TRUE(a < b);
      Json patch = Json::diff(a, b);
      EXPECT_EQ(patch.size(), 1u);
      EXPECT_EQ(a.patch(patch), b);
      EXPECT_EQ(a.flatten().unflatten(), a);
      done = true;
    });
    EXPECT_TRUE(done);
  }
}

}  // namespace imgtool::oci
