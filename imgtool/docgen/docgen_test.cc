#include <gtest/gtest.h>

#include "docgen/completion.h"
#include "docgen/man.h"
#include "docgen/roff.h"
#include "docgen/tree.h"

namespace imgtool::docgen {
namespace {

// A tiny CLI: tool {greet NAME [--loud] [-t,--times N], admin {purge, hidden}}.
struct Tiny {
  CLI::App app{"tool 1.0: does small things.\n\nExit codes: 0 ok.", "tool"};
  std::string name;
  int times = 1;
  bool loud = false;
  Tiny() {
    app.set_version_flag("--version", "tool 1.0");
    auto* greet =
        app.add_subcommand("greet", "Greet someone.\n\nSays hello, once or more.\n\nExamples:\n  tool greet Ann");
    greet->add_option("name", name, "Who to greet")->required();
    greet->add_flag("--loud", loud, "Shout; a - and a \\ survive");
    greet->add_option("-t,--times", times, "How often");
    auto* admin = app.add_subcommand("admin", "Administration.");
    admin->add_subcommand("purge", "Remove everything.");
    admin->add_subcommand("hidden", "Not shown.")->group("");
  }
};

TEST(DocgenTree, VerbsAreTheLeavesInOrder) {
  Tiny t;
  auto verbs = Verbs(t.app);
  ASSERT_EQ(verbs.size(), 2u);
  EXPECT_EQ(verbs[0].words, (std::vector<std::string>{"greet"}));
  EXPECT_EQ(verbs[1].words, (std::vector<std::string>{"admin", "purge"}));  // "hidden" is hidden
}

TEST(DocgenTree, SummaryIsTheFirstSentence) {
  EXPECT_EQ(Summary("One.\nTwo.\n\nThree."), "One.");
  EXPECT_EQ(Summary("A wrapped\nline: -> x. More"), "A wrapped line: -> x.");
  EXPECT_EQ(Summary("No stop\n\nThree."), "No stop");
}

TEST(DocgenRoff, EscapesWhatRoffWouldRead) {
  EXPECT_EQ(RoffEscape("--a\\b"), "\\-\\-a\\eb");
  EXPECT_EQ(RoffEscape(".start"), "\\&.start");
  EXPECT_EQ(RoffEscape("'quote"), "\\&'quote");
  EXPECT_EQ(RoffEscape("caf\xc3\xa9 \xe2\x86\x92"), "caf\\[u00E9] \\[u2192]");
}

TEST(DocgenRoff, IndentedLinesAreVerbatim) {
  EXPECT_EQ(RoffParagraphs("Text\nmore\n\nExamples:\n  a b\n  c"),
            ".PP\nText\nmore\n.PP\nExamples:\n.nf\n  a b\n  c\n.fi\n");
}

TEST(DocgenMan, VerbPageHasItsOptionsAndExamples) {
  Tiny t;
  auto pages = VerbPages(t.app, {"tool", "", "tool 1.0"});
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_EQ(pages[0].name, "tool-greet");
  EXPECT_EQ(pages[1].name, "tool-admin-purge");
  const std::string& m = pages[0].text;
  EXPECT_NE(m.find(".TH \"TOOL\\-GREET\" \"1\" \"\" \"tool 1.0\""), std::string::npos) << m;
  EXPECT_NE(m.find(".SH NAME\ntool\\-greet \\- Greet someone.\n"), std::string::npos) << m;
  EXPECT_NE(m.find(".B tool greet\n[\\fIOPTIONS\\fR] \\fIname\\fR\n"), std::string::npos) << m;
  EXPECT_NE(m.find("\\fB\\-t\\fR, \\fB\\-\\-times\\fR \\fIINT\\fR\nHow often\n"), std::string::npos) << m;
  EXPECT_NE(m.find("\\fB\\-\\-loud\\fR\nShout; a \\- and a \\e survive\n"), std::string::npos) << m;
  EXPECT_NE(m.find(".SH ARGUMENTS\n.TP\n\\fIname\\fR\nWho to greet\n"), std::string::npos) << m;
  EXPECT_NE(m.find(".SH EXAMPLES\n.PP\n.nf\n  tool greet Ann\n.fi\n"), std::string::npos) << m;
  EXPECT_EQ(m.find("Examples:"), std::string::npos) << "the examples paragraph moved to EXAMPLES";
}

TEST(DocgenMan, ProgramPageListsEveryVerb) {
  Tiny t;
  auto page = ProgramPage(t.app, {"tool", "does small things", "tool 1.0"});
  EXPECT_EQ(page.name, "tool");
  EXPECT_NE(page.text.find("\\fBtool greet\\fR\nGreet someone.\nSee \\fBtool\\-greet\\fR(1).\n"), std::string::npos)
      << page.text;
  EXPECT_NE(page.text.find("\\fBtool admin purge\\fR"), std::string::npos);
  EXPECT_NE(page.text.find("\\fB\\-\\-version\\fR"), std::string::npos);
  EXPECT_EQ(page.text.find("hidden"), std::string::npos);
}

TEST(DocgenCompletion, BashOffersSubcommandsAndOptionsPerCommand) {
  Tiny t;
  std::string b = BashCompletion(t.app, "tool");
  EXPECT_NE(b.find("('') subs='greet admin' opts='-h --help --version' ;;"), std::string::npos) << b;
  EXPECT_NE(b.find("('greet') subs='' opts='-h --help --loud -t --times' ;;"), std::string::npos) << b;
  EXPECT_NE(b.find("('admin') subs='purge' opts='-h --help' ;;"), std::string::npos) << b;
  EXPECT_NE(b.find("('greet'|'admin'|'admin purge') cmd="), std::string::npos) << b;
  EXPECT_NE(b.find("complete -o default -F _tool tool\n"), std::string::npos) << b;
}

TEST(DocgenCompletion, ZshDescribesWithSummaries) {
  Tiny t;
  std::string z = ZshCompletion(t.app, "tool-x");
  EXPECT_EQ(z.rfind("#compdef tool-x\n", 0), 0u) << z;
  EXPECT_NE(z.find("'greet:Greet someone.'"), std::string::npos) << z;
  EXPECT_NE(z.find("'--times:How often'"), std::string::npos) << z;
  EXPECT_NE(z.find("_tool_x \"$@\"\n"), std::string::npos) << z;
}

TEST(DocgenCompletion, QuotesSingleQuotes) {
  CLI::App app{"x", "x"};
  app.add_subcommand("go", "It's fine.");
  EXPECT_NE(ZshCompletion(app, "x").find("'go:It'\\''s fine.'"), std::string::npos);
}

TEST(Docgen, Deterministic) {
  Tiny a, b;
  EXPECT_EQ(BashCompletion(a.app, "tool"), BashCompletion(b.app, "tool"));
  EXPECT_EQ(ZshCompletion(a.app, "tool"), ZshCompletion(b.app, "tool"));
  EXPECT_EQ(VerbPages(a.app, {"tool", "", "1"})[0].text, VerbPages(b.app, {"tool", "", "1"})[0].text);
  EXPECT_EQ(ProgramPage(a.app, {"tool", "s", "1"}).text, ProgramPage(b.app, {"tool", "s", "1"}).text);
}

}  // namespace
}  // namespace imgtool::docgen
