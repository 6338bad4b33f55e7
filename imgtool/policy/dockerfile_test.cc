#include "policy/dockerfile.h"

#include <gtest/gtest.h>

namespace imgtool::policy {
namespace {

TEST(Dockerfile, ContinuationsCommentsDirectivesCase) {
  auto df = ParseDockerfile(
      "# syntax=docker/dockerfile:1.7\n"
      "# a comment ends the directives\n"
      "# escape=`\n"
      "\n"
      "from scratch AS base\n"
      "RUN a && \\\n"
      "# dropped inside a continuation\n"
      "    b\n"
      "user 10001\n",
      "Dockerfile");
  ASSERT_TRUE(df.ok()) << df.error().message;
  EXPECT_EQ(df->directives.size(), 1u);
  EXPECT_EQ(df->directives.at("syntax"), "docker/dockerfile:1.7");
  ASSERT_EQ(df->instructions.size(), 3u);
  EXPECT_EQ(df->instructions[0].keyword, "FROM");
  EXPECT_EQ(df->instructions[0].line, 5);
  EXPECT_EQ(df->instructions[1].args, "a &&  b");
  EXPECT_EQ(df->instructions[2].keyword, "USER");
  EXPECT_EQ(df->instructions[2].line, 9);
}

TEST(Dockerfile, EscapeDirectiveChangesTheContinuationCharacter) {
  auto df = ParseDockerfile("# escape=`\nFROM scratch\nRUN dir c:\\ `\n  /b\n", "D");
  ASSERT_TRUE(df.ok()) << df.error().message;
  ASSERT_EQ(df->instructions.size(), 2u);
  EXPECT_EQ(df->instructions[1].args, "dir c:\\  /b");
}

TEST(Dockerfile, HeredocBodiesAreNotInstructions) {
  auto df = ParseDockerfile(
      "FROM scratch\n"
      "RUN <<EOT bash\n"
      "FROM evil:latest\n"
      "USER root\n"
      "EOT\n"
      "COPY <<-'A' <<B /x/\n"
      "\tfirst\n"
      "\tA\n"
      "second\n"
      "B\n"
      "USER 1:1\n",
      "D");
  ASSERT_TRUE(df.ok()) << df.error().message;
  ASSERT_EQ(df->instructions.size(), 4u);
  EXPECT_EQ(df->instructions[1].heredocs[0].body, (std::vector<std::string>{"FROM evil:latest", "USER root"}));
  ASSERT_EQ(df->instructions[2].heredocs.size(), 2u);
  EXPECT_EQ(df->instructions[2].heredocs[1].body, (std::vector<std::string>{"second"}));
  EXPECT_EQ(df->instructions[3].line, 11);
}

TEST(Dockerfile, Errors) {
  auto unknown = ParseDockerfile("FROM scratch\nFORM x\n", "D");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "D:2: unknown instruction 'FORM'");
  auto open = ParseDockerfile("FROM scratch\nRUN <<EOT\nx\n", "D");
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.error().message, "D:2: heredoc <<EOT is not closed");
}

TEST(Dockerfile, WordsAndArgs) {
  EXPECT_EQ(SplitWords(R"(--chown=1:1 "a b" 'c d' e\ f)"),
            (std::vector<std::string>{"--chown=1:1", "a b", "c d", "e f"}));
  std::map<std::string, std::string> vars = {{"TAG", "12"}, {"EMPTY", ""}};
  EXPECT_EQ(ExpandArgs("debian:${TAG}", vars), "debian:12");
  EXPECT_EQ(ExpandArgs("debian:$TAG-slim", vars), "debian:12-slim");
  EXPECT_EQ(ExpandArgs("${NOPE:-x}${EMPTY:-y}${EMPTY-z}", vars), "xy");
  EXPECT_EQ(ExpandArgs("${TAG:+set}${NOPE+no}$NOPE", vars), "set");
}

}  // namespace
}  // namespace imgtool::policy
