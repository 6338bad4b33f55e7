// Dockerfiles made to hurt the parser and lint (issue 24): directives, heredoc delimiters,
// continuation runs and exec-form arrays of 30,000 and 100,000 characters, which killed
// `imgtool lint` with SIGSEGV while std::regex recursed once per character. Each must be
// answered (parsed and linted, or refused with a short error), and the work must stay
// linear: the sizes are large enough that a quadratic pass would not finish in the test's
// timeout.
#include <gtest/gtest.h>

#include <string>

#include "policy/dockerfile.h"
#include "policy/lint.h"

namespace imgtool::policy {
namespace {

constexpr size_t kSizes[] = {30'000, 100'000};

std::vector<std::string> Rules(const Dockerfile& df) {
  std::vector<std::string> out;
  for (const auto& f : LintDockerfile(df, {})) out.push_back(std::to_string(f.line) + " " + f.rule);
  return out;
}

TEST(DockerfileHostile, LongSyntaxDirectiveIsKeptAndLinted) {
  for (size_t n : kSizes) {
    const std::string value = "docker/dockerfile:" + std::string(n, '1');
    auto df = ParseDockerfile("# syntax=" + value + "  \n#  check = skip=all\nFROM scratch\nUSER 1\n", "D");
    ASSERT_TRUE(df.ok()) << df.error().message.substr(0, 200);
    EXPECT_EQ(df->directives.at("syntax"), value);
    EXPECT_EQ(df->directives.at("check"), "skip=all");
    EXPECT_EQ(Rules(*df), std::vector<std::string>{});
  }
}

TEST(DockerfileHostile, LongEscapeDirectiveIsAShortError) {
  for (size_t n : kSizes) {
    auto df = ParseDockerfile("# escape=" + std::string(n, '`') + "\nFROM scratch\n", "D");
    ASSERT_FALSE(df.ok());
    EXPECT_EQ(df.error().kind, ErrorKind::kInvalidInput);
    EXPECT_EQ(df.error().message, "D:1: escape directive '" + std::string(64, '`') + "... (" + std::to_string(n) +
                                      " bytes)': want \\ or `");
  }
}

TEST(DockerfileHostile, LongHeredocDelimiters) {
  for (size_t n : kSizes) {
    const std::string name(n, 'E');
    for (const std::string& opener : {"<<" + name, "<<-" + name, "<<'" + name + "'", "<< \"" + name + "\""}) {
      // "<<-" strips leading tabs before comparing; the others end only at the name alone.
      const bool strip_tabs = opener[2] == '-';
      const std::string body = "FROM x\n\t" + name + "\n" + (strip_tabs ? "" : name + "\n");
      auto df = ParseDockerfile("FROM scratch\nRUN " + opener + " sh\n" + body + "USER 1\n", "D");
      ASSERT_TRUE(df.ok()) << df.error().message.substr(0, 200);
      ASSERT_EQ(df->instructions.size(), 3u) << opener.substr(0, 5);
      ASSERT_EQ(df->instructions[1].heredocs.size(), 1u);
      EXPECT_EQ(df->instructions[1].heredocs[0].delimiter, name);
      EXPECT_EQ(df->instructions[1].heredocs[0].body.size(), strip_tabs ? 1u : 2u);
      EXPECT_EQ(Rules(*df), std::vector<std::string>{});  // the FROM in the body is not read
    }
    auto open = ParseDockerfile("FROM scratch\nRUN <<" + name + "\nx\n", "D");
    ASSERT_FALSE(open.ok());
    EXPECT_EQ(open.error().message,
              "D:2: heredoc <<" + std::string(64, 'E') + "... (" + std::to_string(n) + " bytes) is not closed");
    // An opening quote without its close is no heredoc: the line is an ordinary RUN.
    auto unquoted = ParseDockerfile("FROM scratch\nRUN <<\"" + name + "\nUSER 1\n", "D");
    ASSERT_TRUE(unquoted.ok()) << unquoted.error().message.substr(0, 200);
    EXPECT_TRUE(unquoted->instructions[1].heredocs.empty());
  }
}

TEST(DockerfileHostile, LongLinesOfAlmostHeredocsAndUnknownWords) {
  for (size_t n : kSizes) {
    // Every position starts "<<" and none is a heredoc: one pass, not one per position.
    auto df = ParseDockerfile(
        "FROM scratch\nRUN " + std::string(n, '<') + "\nCOPY " + std::string(n, '<') + "-\nUSER 1\n", "D");
    ASSERT_TRUE(df.ok()) << df.error().message.substr(0, 200);
    EXPECT_TRUE(df->instructions[1].heredocs.empty());
    auto unknown = ParseDockerfile("FROM scratch\n" + std::string(n, 'X') + " y\n", "D");
    ASSERT_FALSE(unknown.ok());
    EXPECT_LT(unknown.error().message.size(), 160u) << unknown.error().message.substr(0, 200);
  }
}

TEST(DockerfileHostile, ContinuationRuns) {
  for (size_t n : kSizes) {
    std::string run = "FROM scratch\nRUN a \\\n";
    for (size_t i = 0; i < n; ++i) run += i % 2 ? "\\\n" : "# a comment inside\\\n";
    auto df = ParseDockerfile(run + "b\nUSER 1\n", "D");
    ASSERT_TRUE(df.ok()) << df.error().message.substr(0, 200);
    ASSERT_EQ(df->instructions.size(), 3u);
    EXPECT_EQ(df->instructions[1].args.substr(0, 2), "a ");
    EXPECT_EQ(df->instructions[2].line, static_cast<int>(n + 4));
    EXPECT_EQ(Rules(*df), std::vector<std::string>{});
    // A continuation that runs into the end of the file: an instruction, not a hang.
    auto tail = ParseDockerfile("FROM scratch\nUSER 1\nRUN a \\\n" + std::string(n, '\n'), "D");
    ASSERT_TRUE(tail.ok()) << tail.error().message.substr(0, 200);
    EXPECT_EQ(tail->instructions.size(), 3u);
    // One line of n escape characters, the last one continuing into the end of the file.
    auto one = ParseDockerfile("FROM scratch\nUSER 1\nRUN " + std::string(n, '\\') + "\n", "D");
    ASSERT_TRUE(one.ok()) << one.error().message.substr(0, 200);
  }
}

TEST(DockerfileHostile, ExecFormArraysNestedOrLong) {
  for (size_t n : kSizes) {
    // Nesting hides nothing: the URL beside the nest is still found.
    const std::string nest = std::string(n, '[') + std::string(n, ']');
    auto df = ParseDockerfile("FROM scratch\nADD [\"http://example.com/a\", " + nest + ", \"/d\"]\nUSER 1\n", "D");
    ASSERT_TRUE(df.ok());
    EXPECT_EQ(Rules(*df), std::vector<std::string>{"2 addChecksum"});
    // Unbalanced: not JSON, nothing to check, and no crash.
    df = ParseDockerfile("FROM scratch\nADD " + std::string(n, '[') + "\nUSER 1\n", "D");
    ASSERT_TRUE(df.ok());
    EXPECT_EQ(Rules(*df), std::vector<std::string>{});
    // Objects nested deep, then a long array of sources.
    std::string objects;
    for (size_t i = 0; i < n / 10; ++i) objects += "{\"a\":";
    objects += "1" + std::string(n / 10, '}');
    df = ParseDockerfile("FROM scratch\nADD [" + objects + ", \"/d\"]\nUSER 1\n", "D");
    ASSERT_TRUE(df.ok());
    EXPECT_EQ(Rules(*df), std::vector<std::string>{});
    std::string many = "[";
    for (size_t i = 0; i < n / 20; ++i) many += "\"s" + std::to_string(i) + "\", ";
    df = ParseDockerfile("FROM scratch\nADD " + many + "\"http://example.com/x\", \"/d\"]\nUSER 1\n", "D");
    ASSERT_TRUE(df.ok());
    EXPECT_EQ(Rules(*df), std::vector<std::string>{"2 addChecksum"});
  }
}

TEST(DockerfileHostile, LongChecksumsAndDigests) {
  const std::string hex(100'000, 'a');
  auto df =
      ParseDockerfile("FROM debian@sha256:" + hex + "\nADD --checksum=sha256:" + hex +
                          " https://example.com/a /a\nADD --checksum=" + hex + " git@example.com:a.git /b\nUSER 1\n",
                      "D");
  ASSERT_TRUE(df.ok());
  EXPECT_EQ(Rules(*df), (std::vector<std::string>{"1 fromDigest", "2 addChecksum", "3 addChecksum"}));
}

// A chain of stages, each built on the one before, the USER set only in the first: the
// walk from the final stage back is one step per stage (it was a search of every stage per
// step).
TEST(DockerfileHostile, LongStageChains) {
  constexpr int kStages = 20'000;
  std::string text = "FROM scratch AS s0\nUSER 10001\n";
  for (int i = 1; i < kStages; ++i) text += "FROM s" + std::to_string(i - 1) + " AS s" + std::to_string(i) + "\n";
  auto df = ParseDockerfile(text, "D");
  ASSERT_TRUE(df.ok());
  EXPECT_EQ(Rules(*df), std::vector<std::string>{});
  df = ParseDockerfile(text + "USER 0\n", "D");
  ASSERT_TRUE(df.ok());
  EXPECT_EQ(Rules(*df), std::vector<std::string>{std::to_string(kStages + 2) + " nonRootUser"});
}

}  // namespace
}  // namespace imgtool::policy
