// Quoted and Printable: what a hostile name can no longer do to a terminal or a log.
#include "oci/quote.h"

#include <gtest/gtest.h>

#include <string>

namespace imgtool::oci {
namespace {

using namespace std::string_literals;

TEST(Quoted, PlainNamesAreQuotedAsTheyAre) {
  EXPECT_EQ(Quoted("registry.example:5000/team/img"), "\"registry.example:5000/team/img\"");
  EXPECT_EQ(Quoted("v1.2", '\''), "'v1.2'");
  EXPECT_EQ(Quoted(""), "\"\"");
  EXPECT_EQ(Quoted("bücher/日本"), "\"bücher/日本\"");  // valid UTF-8 is kept
}

// The terminal-escape case: ESC (a colour, a cursor move, a title), CR (overwrite the
// line), newline (a forged second line), NUL (a cut), DEL.
TEST(Quoted, ControlCharactersAreEscaped) {
  EXPECT_EQ(Quoted("a\x1b[31mred\x1b[0m"), R"("a\x1b[31mred\x1b[0m")");
  EXPECT_EQ(Quoted("ok\rimgtool: error: forged"), R"("ok\rimgtool: error: forged")");
  EXPECT_EQ(Quoted("name\nimgtool: OK"), R"("name\nimgtool: OK")");
  EXPECT_EQ(Quoted("cut\0here"s), R"("cut\x00here")");
  EXPECT_EQ(Quoted("tab\there\x7f"), R"("tab\there\x7f")");
  for (int c = 0; c < 0x20; ++c) {
    std::string q = Quoted(std::string(1, static_cast<char>(c)));
    EXPECT_EQ(q.find(static_cast<char>(c)), std::string::npos) << c;
  }
}

// The quote and the backslash are escaped, so the quoted text reads back unambiguously.
TEST(Quoted, QuoteAndBackslashAreEscaped) {
  EXPECT_EQ(Quoted(R"(say "hi")"), R"("say \"hi\"")");
  EXPECT_EQ(Quoted(R"(it's)", '\''), R"('it\'s')");
  EXPECT_EQ(Quoted(R"(a\nb)"), R"("a\\nb")");  // a backslash and an n, not a line break
}

// CSI as a C1 control (U+009B), the bidi override of "Trojan source", and bytes that are
// not UTF-8 (a lone 0x9b is CSI to an 8-bit terminal; overlong and surrogate forms).
TEST(Quoted, HiddenCodePointsAndInvalidUtf8AreEscaped) {
  EXPECT_EQ(Quoted("a\xc2\x9b"
                   "31m"),
            R"("a\u009b31m")");
  EXPECT_EQ(Quoted("x\xe2\x80\xaey"), R"("x\u202ey")");
  EXPECT_EQ(Quoted("\x9b"
                   "2J"),
            R"("\x9b2J")");
  EXPECT_EQ(Quoted("\xc0\xaf"), R"("\xc0\xaf")");                  // overlong '/'
  EXPECT_EQ(Quoted("\xed\xa0\x80"), R"("\xed\xa0\x80")");          // a surrogate
  EXPECT_EQ(Quoted("\xe6\x97"), R"("\xe6\x97")");                  // cut short
  EXPECT_EQ(Quoted("\xf4\x90\x80\x80"), R"("\xf4\x90\x80\x80")");  // past U+10FFFF
}

TEST(Printable, KeepsLinesAndQuotesButNotEscapes) {
  EXPECT_EQ(Printable("lock is stale:\n  a \"b\"\tc\\d"), "lock is stale:\n  a \"b\"\tc\\d");
  EXPECT_EQ(Printable("x\x1b]0;title\x07y\rz\0w"s), R"(x\x1b]0;title\x07y\rz\x00w)");
  EXPECT_EQ(Printable("\xc2\x9b"), R"(\u009b)");
  EXPECT_EQ(Printable("blob unknown\nimgtool: OK\t\x1b[1m", false), R"(blob unknown\nimgtool: OK\t\x1b[1m)");
}

}  // namespace
}  // namespace imgtool::oci
