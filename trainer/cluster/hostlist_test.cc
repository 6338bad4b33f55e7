#include "cluster/hostlist.h"

#include <gtest/gtest.h>

namespace trainer {
namespace {

using Names = std::vector<std::string>;

Names Expand(const std::string& s, const HostlistLimits& l = {}) {
  auto r = ExpandHostlist(s, l);
  EXPECT_TRUE(r.ok()) << s << ": " << r.error().message;
  return r.ok() ? *r : Names{};
}

std::string Refusal(const std::string& s, const HostlistLimits& l = {}) {
  auto r = ExpandHostlist(s, l);
  EXPECT_FALSE(r.ok()) << s;
  return r.ok() ? "" : r.error().message;
}

TEST(Hostlist, PlainNamesAndRanges) {
  EXPECT_EQ(Expand("login"), (Names{"login"}));
  EXPECT_EQ(Expand("n[1-3,7],gpu-a[01-02]"), (Names{"n1", "n2", "n3", "n7", "gpu-a01", "gpu-a02"}));
  EXPECT_EQ(Expand("a,b.example,c_d"), (Names{"a", "b.example", "c_d"}));
  EXPECT_EQ(Expand("n[5]"), (Names{"n5"}));
  EXPECT_EQ(Expand("n[3-3]x"), (Names{"n3x"}));
}

TEST(Hostlist, ZeroPaddingKeptFromTheLowerBound) {
  EXPECT_EQ(Expand("n[08-10]"), (Names{"n08", "n09", "n10"}));
  EXPECT_EQ(Expand("n[8-10]"), (Names{"n8", "n9", "n10"}));
  EXPECT_EQ(Expand("n[001-2,10]"), (Names{"n001", "n002", "n10"}));
  EXPECT_EQ(Expand("n[0-1]"), (Names{"n0", "n1"}));
  EXPECT_EQ(Expand("n[098-100]"), (Names{"n098", "n099", "n100"}));
}

TEST(Hostlist, SeveralGroupsInOneNameLastFastest) {
  EXPECT_EQ(Expand("r[1-2]n[1-2]"), (Names{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(Expand("r[1,3]-n[01-02]-g[7]"), (Names{"r1-n01-g7", "r1-n02-g7", "r3-n01-g7", "r3-n02-g7"}));
  EXPECT_EQ(Expand("x,r[1-2]n[5],y"), (Names{"x", "r1n5", "r2n5", "y"}));
}

TEST(Hostlist, MalformedListsAreRefusedNamingThePart) {
  EXPECT_EQ(Refusal(""), "an empty hostlist");
  EXPECT_EQ(Refusal("n[1-3"), "an unclosed '[' in \"n[1-3\"");
  EXPECT_EQ(Refusal("n1-3]"), "']' without '[' in \"n1-3]\"");
  EXPECT_EQ(Refusal("n[1[2]]"), "nested '[' in \"n[1[2]]\"");
  EXPECT_EQ(Refusal("a,,b"), "an empty name in the list \"a,,b\"");
  EXPECT_EQ(Refusal("a,"), "an empty name in the list \"a,\"");
  EXPECT_EQ(Refusal("n[3-1]"), "name \"n[3-1]\": range \"3-1\" runs backwards");
  EXPECT_EQ(Refusal("n[]"), "name \"n[]\": range \"\" is not N or N-M");
  EXPECT_EQ(Refusal("n[a-b]"), "name \"n[a-b]\": range \"a-b\" is not N or N-M");
  EXPECT_EQ(Refusal("n[1-2-3]"), "name \"n[1-2-3]\": range \"1-2-3\" is not N or N-M");
  EXPECT_EQ(Refusal("n[1,]"), "name \"n[1,]\": range \"\" is not N or N-M");
  EXPECT_EQ(Refusal("n 1"), "name \"n 1\" holds ' ' (a node name has letters, digits, '-', '_', '.')");
  EXPECT_EQ(Refusal("n;rm"), "name \"n;rm\" holds ';' (a node name has letters, digits, '-', '_', '.')");
}

TEST(Hostlist, TheNodeCapIsCheckedBeforeExpanding) {
  HostlistLimits l;
  l.max_nodes = 100;
  EXPECT_EQ(Expand("n[1-100]", l).size(), 100u);
  EXPECT_EQ(Refusal("n[1-101]", l), "name \"n[1-101]\": range \"1-101\" takes the list past 100 names");
  EXPECT_EQ(Expand("r[1-10]n[1-10]", l).size(), 100u);
  EXPECT_EQ(Refusal("r[1-10]n[1-10],x", l), "the hostlist expands past 100 names (at \"x\")");
  EXPECT_EQ(Refusal("r[1-11]n[1-10]", l), "name \"r[1-11]n[1-10]\" expands past 100 names");
  // The default: 65,536; one past it is refused, a billion is refused at once.
  EXPECT_EQ(Expand("n[1-65536]").size(), 65536u);
  EXPECT_EQ(Refusal("n[1-65537]"), "name \"n[1-65537]\": range \"1-65537\" takes the list past 65536 names");
  EXPECT_EQ(Refusal("a[0-999999999]b[0-999999999]"),
            "name \"a[0-999999999]b[0-999999999]\": range \"0-999999999\" takes the list past 65536 names");
  EXPECT_EQ(Refusal("a[1-256]b[1-256]c[1-2]"), "name \"a[1-256]b[1-256]c[1-2]\" expands past 65536 names");
}

TEST(Hostlist, RangeBoundDigitsAreCapped) {
  EXPECT_EQ(Expand("n[000000001-2]"), (Names{"n000000001", "n000000002"}));
  EXPECT_EQ(Refusal("n[0000000001-2]"), "name \"n[0000000001-2]\": range \"0000000001-2\" has a bound over 9 digits");
  EXPECT_EQ(Refusal("n[1-99999999999999999999999]"),
            "name \"n[1-99999999999999999999999]\": range \"1-99999999999999999999999\" has a bound over 9 digits");
}

TEST(Hostlist, NameLengthIsCapped) {
  const std::string n200(200, 'a'), n201(201, 'a');
  EXPECT_EQ(Expand(n200), (Names{n200}));
  EXPECT_NE(Refusal(n201).find("is longer than 200 characters"), std::string::npos);
  // Counted with the digits a group adds: 198 letters and a two-digit range make 200, three make 201.
  EXPECT_EQ(Expand(std::string(198, 'a') + "[10-11]").size(), 2u);
  EXPECT_NE(Refusal(std::string(198, 'a') + "[1-100]").find("is longer than 200 characters"), std::string::npos);
  EXPECT_NE(Refusal(std::string(198, 'a') + "[001-2]").find("is longer than 200 characters"), std::string::npos);
}

TEST(Hostlist, GroupsPerNameAndInputBytesAreCapped) {
  EXPECT_EQ(Expand("a[1]b[1]c[1]d[1]e[1]f[1]g[1]h[1]"), (Names{"a1b1c1d1e1f1g1h1"}));
  EXPECT_EQ(Refusal("a[1]b[1]c[1]d[1]e[1]f[1]g[1]h[1]i[1]"),
            "name \"a[1]b[1]c[1]d[1]e[1]f[1]g[1]h[1]i[1]\" has more than 8 bracket groups");
  HostlistLimits l;
  l.max_input = 16;
  EXPECT_EQ(Expand("n[1-3],m[1-3],o1", l).size(), 7u);  // 16 bytes
  EXPECT_EQ(Refusal("n[1-3],m[1-3],o12", l), "a hostlist of 17 bytes (the limit is 16)");
}

TEST(Hostlist, LongInputsAreQuotedShort) {
  std::string list = std::string(1000, 'a') + " ";
  std::string msg = Refusal(list);
  EXPECT_LT(msg.size(), 200u) << msg;
}

TEST(TaskCounts, Syntax) {
  auto c = ExpandTaskCounts("2(x3),1", 100);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(*c, (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(*ExpandTaskCounts("4", 4), (std::vector<int>{4}));
  EXPECT_EQ(*ExpandTaskCounts("1(x1)", 4), (std::vector<int>{1}));
  for (const char* bad : {"", "x", "2(x)", "(x3)", "2(3)", "2(x3", "1,,2", "-1", "2(x-1)", "0", "2(x0)"}) {
    EXPECT_FALSE(ExpandTaskCounts(bad, 100).ok()) << bad;
  }
  EXPECT_EQ(ExpandTaskCounts("5", 4).error().message, "task count \"5\" is outside 1..4");
}

TEST(TaskCounts, RepetitionIsCappedBeforeExpanding) {
  HostlistLimits l;
  l.max_nodes = 10;
  EXPECT_EQ(ExpandTaskCounts("1(x10)", 5, l)->size(), 10u);
  EXPECT_EQ(ExpandTaskCounts("1(x11)", 5, l).error().message,
            "task count \"1(x11)\" takes the list outside 1..10 nodes");
  EXPECT_EQ(ExpandTaskCounts("1(x9),2(x2)", 5, l).error().message,
            "task count \"2(x2)\" takes the list outside 1..10 nodes");
  EXPECT_FALSE(ExpandTaskCounts("1(x999999999)", 5).ok());
}

}  // namespace
}  // namespace trainer
