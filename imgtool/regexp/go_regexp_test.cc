#include "regexp/go_regexp.h"

#include <gtest/gtest.h>

#include <string>

#include "regexp/go_syntax.h"

namespace imgtool::regexp {
namespace {

GoRegexp Re(const std::string& pattern) {
  auto re = GoRegexp::Compile(pattern);
  if (!re.ok()) ADD_FAILURE() << pattern << ": " << re.error().message;
  return *re;
}

bool Searches(const std::string& pattern, const std::string& text) { return Re(pattern).Search(text); }

const std::string kMain = "https://github.com/org/repo/.github/workflows/release.yml@refs/heads/main";

TEST(GoRegexp, PatternsCosignUsersWriteMatchAsBefore) {
  const std::string workflow = "^https://github.com/org/repo/.github/workflows/.*@refs/heads/main$";
  EXPECT_TRUE(Searches(workflow, kMain));
  EXPECT_FALSE(Searches(workflow, "https://github.com/org/repo/.github/workflows/release.yml@refs/heads/feature"));
  EXPECT_FALSE(Searches(workflow, "https://github.com/org/other/.github/workflows/release.yml@refs/heads/main"));
  EXPECT_TRUE(Searches(R"(^https://github\.com/org/[^/]+/\.github/workflows/release\.yml@refs/tags/v.*$)",
                       "https://github.com/org/x/.github/workflows/release.yml@refs/tags/v1.2"));
  EXPECT_TRUE(Searches(R"(^ci@example\.com$)", "ci@example.com"));
  EXPECT_TRUE(
      Searches(R"(^https://token\.actions\.githubusercontent\.com$)", "https://token.actions.githubusercontent.com"));
  EXPECT_EQ(Re(workflow).pattern(), workflow);
}

TEST(GoRegexp, SearchesAsMatchStringDoes) {
  // Unanchored, as Go's MatchString: a pattern that must cover the value says so.
  EXPECT_TRUE(Searches("github", kMain));
  EXPECT_TRUE(Searches("github.com/org", "https://evil.example/github.com/org"));
  EXPECT_FALSE(Searches("^github.com/org", "https://evil.example/github.com/org"));
  EXPECT_FALSE(Searches("main$", kMain + "-x"));
  EXPECT_TRUE(Searches(R"(\Amain\z)", "main"));
  EXPECT_FALSE(Searches("^main$", "main\n"));  // $ is the end of the text, not before a newline
  EXPECT_TRUE(Searches("", "anything"));
}

// std::regex backtracks on these for minutes (or overflows its stack); RE2 reads the text
// once. The test is that each call returns, with the right answer.
TEST(GoRegexp, CatastrophicPatternsAgainstLongSubjectsFinish) {
  const std::string as(3000, 'a');
  EXPECT_FALSE(Searches("^(a+)+$", as + "!"));
  EXPECT_TRUE(Searches("^(a+)+$", as));
  EXPECT_FALSE(Searches("^(a|aa)+$", as + "b"));
  EXPECT_FALSE(Searches("(a*)*b", as));
  EXPECT_TRUE(Searches("(a*)*b", as + "b"));
  EXPECT_FALSE(Searches("^https://github.com/(a+)+x$", "https://github.com/" + as + "!"));
  EXPECT_TRUE(Searches("^https://github.com/(a+)+x$", "https://github.com/" + as + "x"));
  EXPECT_FALSE(Searches("(.*a){12}$", as.substr(0, 11) + std::string(3000, 'b')));
  const std::string mb(1 << 20, 'a');  // a megabyte: still one pass
  EXPECT_FALSE(Searches("^(a+)+$", mb + "!"));
}

void ExpectRefused(const std::string& pattern, const std::string& why) {
  auto re = GoRegexp::Compile(pattern);
  ASSERT_FALSE(re.ok()) << pattern;
  EXPECT_EQ(re.error().kind, ErrorKind::kInvalidInput) << pattern;
  EXPECT_EQ(re.error().message.rfind("not a valid Go regexp (RE2 syntax): ", 0), 0u) << re.error().message;
  EXPECT_NE(re.error().message.find(why), std::string::npos) << pattern << ": " << re.error().message;
}

TEST(GoRegexp, RefusesWhatGoRefuses) {
  ExpectRefused("(a", "missing )");
  ExpectRefused("a)", "unexpected )");
  ExpectRefused("[a", "missing ]");
  ExpectRefused("(?=a)", "invalid perl operator");          // lookahead
  ExpectRefused("(?<=a)b", "invalid named capture group");  // lookbehind
  ExpectRefused(R"((a)\1)", "invalid escape sequence");     // backreference
  ExpectRefused("a**", "bad repetition operator");
  ExpectRefused("a{1001}", "invalid repetition size");
  ExpectRefused("(a{100}){100}", "invalid repetition size");  // nested repeats multiply
  ExpectRefused(R"(\Z)", "invalid escape sequence");
  ExpectRefused("x{2,1}", "invalid repetition size");
  ExpectRefused(R"(\)", "trailing \\");
  ExpectRefused("*a", "no argument for repetition operator");
  ExpectRefused("\xff", "invalid UTF-8");
  // RE2 alone would accept these; Go does not.
  ExpectRefused(R"(a\Cb)", "invalid escape sequence: \\C");
  ExpectRefused("(?P<>a)", "invalid named capture group");
  ExpectRefused("(?P<a-b>a)", "invalid named capture group: (?P<a-b>");
  ExpectRefused("(?P<n>?)", "missing argument to repetition operator: ?");
  ExpectRefused("(?P<n", "invalid named capture group");
}

TEST(GoRegexp, AcceptsWhatGoAccepts) {
  EXPECT_TRUE(Searches("(?i)^HTTPS://GITHUB", kMain));
  EXPECT_TRUE(Searches(R"(^\pL+$)", "Grüße"));
  EXPECT_TRUE(Searches("^[[:alpha:]]+$", "abc"));
  EXPECT_TRUE(Searches(R"(^\d{1,3}$)", "42"));
  EXPECT_TRUE(Searches(R"(\bmain$)", kMain));
  // Named groups: both spellings (Go 1.22), and a name used twice (RE2 2022 refuses both).
  EXPECT_TRUE(Searches("^https://github.com/(?P<org>[^/]+)/(?<repo>[^/]+)/", kMain));
  EXPECT_TRUE(Searches("(?P<ref>heads/main)$|(?P<ref>tags/v1)$", kMain));
  // \Q...\E: literal, up to the first \E or the end.
  EXPECT_TRUE(Searches(R"(^\Qa.b*\E$)", "a.b*"));
  EXPECT_FALSE(Searches(R"(^\Qa.b*\E$)", "axb"));
  EXPECT_TRUE(Searches(R"(^x\Q(.*)$)", "x(.*)$"));
}

TEST(GoRegexp, SyntaxInsideClassesAndQuotesIsLiteral) {
  // What Re2FromGo acts on, it acts on only where Go reads it as syntax.
  EXPECT_TRUE(Searches("^[(?<a>)]+$", "(?<>)"));
  EXPECT_TRUE(Searches(R"(^\Q(?<a>)\C\E$)", R"((?<a>)\C)"));
  EXPECT_FALSE(GoRegexp::Compile(R"([\C])").ok());  // \C in a class: refused by RE2 and Go alike
  EXPECT_TRUE(Searches(R"(^[[:alpha:](?P<x>]+$)", "a(?P<x>"));
}

TEST(GoRegexp, TextThatIsNotUtf8ReadsAsGoReadsIt) {
  // Each byte that starts no UTF-8 sequence is one U+FFFD.
  EXPECT_TRUE(Searches("^.$", "\xff"));
  EXPECT_TRUE(Searches("^\\x{FFFD}$", "\xff"));
  EXPECT_TRUE(Searches("^..$", "\xed\xa0"));  // a surrogate's bytes: two characters
  EXPECT_TRUE(Searches("^...$",
                       "\xc0\xaf"
                       "a"));  // an overlong '/': not '/'
  EXPECT_FALSE(Searches("/", "\xc0\xaf"));
  EXPECT_EQ(internal::AsGoReadsIt("a\xff"
                                  "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_TRUE(internal::IsUtf8("Grüße ☺"));
  EXPECT_FALSE(internal::IsUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
}

TEST(GoRegexp, MatchesStartOnlyBetweenCharacters) {
  // Go searches from each character, RE2 from each byte: inside a multi-byte character both
  // neighbours are non-word, so \B would hold there for RE2 alone.
  EXPECT_FALSE(Searches(R"(\B)",
                        "_\xe2\x98\xba"
                        "A-x"));
  EXPECT_TRUE(Searches(R"(\B)", "a-_-"));
}

TEST(GoRegexp, Re2FromGoRewritesOnlyWhereNeeded) {
  EXPECT_EQ(*internal::Re2FromGo(R"(^https://github\.com/.*$)"), R"(^https://github\.com/.*$)");
  EXPECT_EQ(*internal::Re2FromGo("(?P<a>x)(?<b>y)"), "(x)(y)");
  EXPECT_EQ(*internal::Re2FromGo(R"(\Qab)"), R"(\Qab\E)");
  EXPECT_EQ(*internal::Re2FromGo("[(?<a>)]"), "[(?<a>)]");
}

TEST(GoRegexp, CopiesShareTheCompiledPattern) {
  GoRegexp a = Re("^a+$");
  const GoRegexp b = a;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the test
  EXPECT_TRUE(b.Search("aaa"));
  EXPECT_FALSE(b.Search("aab"));
  EXPECT_EQ(b.pattern(), "^a+$");
}

}  // namespace
}  // namespace imgtool::regexp
