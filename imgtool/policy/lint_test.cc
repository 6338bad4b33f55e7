#include "policy/lint.h"

#include <gtest/gtest.h>

namespace imgtool::policy {
namespace {

const std::string kPin = "@sha256:" + std::string(64, 'a');

std::vector<std::string> Lint(const std::string& text, const LintOptions& o = {}) {
  auto df = ParseDockerfile(text, "D");
  EXPECT_TRUE(df.ok()) << df.error().message;
  std::vector<std::string> out;
  if (!df.ok()) return out;
  for (const auto& f : LintDockerfile(*df, o)) out.push_back(std::to_string(f.line) + " " + f.rule + ": " + f.message);
  return out;
}

TEST(Lint, CleanMultiStage) {
  EXPECT_EQ(Lint("ARG BASE=debian:12" + kPin +
                 "\nFROM ${BASE} AS build\nRUN make\n"
                 "FROM scratch\nCOPY --from=build /out /\nCOPY --from=golden x /x\nUSER 10001:10001\n"),
            std::vector<std::string>{});
}

TEST(Lint, FromMustBePinnedAndNotLatest) {
  EXPECT_EQ(Lint("FROM debian:12\nUSER 1\n"),
            (std::vector<std::string>{"1 fromDigest: FROM 'debian:12' is not pinned: want debian:12@sha256:<64 hex>"}));
  EXPECT_EQ(Lint("FROM debian:latest" + kPin + "\nUSER 1\n"),
            (std::vector<std::string>{"1 noLatest: FROM 'debian:latest" + kPin + "' uses the tag 'latest'"}));
  EXPECT_EQ(Lint("FROM reg:5000/debian\nUSER 1\n").size(), 2u);  // no tag means latest, and unpinned
  EXPECT_EQ(Lint("ARG T=12\nFROM debian:${T}\nUSER 1\n"),
            (std::vector<std::string>{
                "2 fromDigest: FROM 'debian:${T}' (= 'debian:12') is not pinned: want debian:12@sha256:<64 hex>"}));
  LintOptions o;
  o.build_args["T"] = "12" + kPin;
  EXPECT_EQ(Lint("ARG T=12\nFROM debian:${T}\nUSER 1\n", o), std::vector<std::string>{});
  EXPECT_EQ(Lint("FROM scratch\nCOPY --from=alpine:3.19 /x /x\nUSER 1\n").size(), 1u);
  o = {};
  o.rules.from_digest = false;
  EXPECT_EQ(Lint("FROM debian:12\nUSER 1\n", o), std::vector<std::string>{});
}

TEST(Lint, FinalUserNumericNonRoot) {
  EXPECT_EQ(Lint("FROM scratch\n"),
            (std::vector<std::string>{
                "1 nonRootUser: the final stage sets no USER, so it runs as root (or as its base image says)"}));
  EXPECT_EQ(Lint("FROM scratch\nUSER 0:0\n"), (std::vector<std::string>{"2 nonRootUser: USER 0:0 is root"}));
  EXPECT_EQ(Lint("FROM scratch\nUSER root\n").size(), 1u);
  EXPECT_EQ(Lint("FROM scratch\nUSER app\n")[0].rfind("2 nonRootUser: USER app is not a numeric uid", 0), 0u);
  EXPECT_EQ(Lint("FROM scratch\nUSER 1:app\n").size(), 1u);
  // A USER in an earlier stage does not count for the final one, unless built on it.
  EXPECT_EQ(Lint("FROM scratch AS a\nUSER 10001\nFROM scratch\n").size(), 1u);
  EXPECT_EQ(Lint("FROM scratch AS a\nUSER 10001\nFROM a\n"), std::vector<std::string>{});
  EXPECT_EQ(Lint("FROM scratch AS a\nUSER 10001\nFROM a\nUSER 0\n").size(), 1u);
  // Numbers as runtimes read them (rootfs/user_arg.h).
  EXPECT_EQ(Lint("FROM scratch\nUSER +0\n"), (std::vector<std::string>{"2 nonRootUser: USER +0 is root"}));
  EXPECT_EQ(Lint("FROM scratch\nUSER 0000:10001\n"),
            (std::vector<std::string>{"2 nonRootUser: USER 0000:10001 is root"}));
  EXPECT_EQ(Lint("FROM scratch\nUSER 4294967296\n"),
            (std::vector<std::string>{"2 nonRootUser: USER 4294967296: 4294967296 is outside 0..2147483647: runc and "
                                      "Docker refuse it, containerd keeps its low 32 bits and runs it as 0 (root)"}));
  EXPECT_EQ(Lint("FROM scratch\nUSER 10001:-1\n")[0].rfind(
                "2 nonRootUser: USER 10001:-1: group '-1' is not a numeric gid: -1 is outside", 0),
            0u);
  EXPECT_EQ(Lint("FROM scratch\nUSER +10001:10001\n"), std::vector<std::string>{});
}

TEST(Lint, AddOfUrlNeedsChecksum) {
  const std::string head = "FROM scratch\n";
  const std::string tail = "USER 1\n";
  EXPECT_EQ(
      Lint(head + "ADD https://example.com/x.tgz /x\n" + tail),
      (std::vector<std::string>{"2 addChecksum: ADD https://example.com/x.tgz has no --checksum=sha256:<64 hex>"}));
  EXPECT_EQ(Lint(head + "ADD --checksum=sha256:" + std::string(64, 'f') + " https://example.com/x.tgz /x\n" + tail),
            std::vector<std::string>{});
  EXPECT_EQ(Lint(head + "ADD --checksum=md5:12 https://example.com/x.tgz /x\n" + tail).size(), 1u);
  EXPECT_EQ(Lint(head + "ADD [\"http://example.com/a\", \"/a\"]\n" + tail).size(), 1u);
  EXPECT_EQ(Lint(head + "ADD git@github.com:a/b.git /src\n" + tail).size(), 1u);
  EXPECT_EQ(Lint(head + "ADD local.tgz /x\n" + tail), std::vector<std::string>{});
  EXPECT_EQ(Lint(head + "ADD <<EOT /x\nhttps://not.a.source\nEOT\n" + tail), std::vector<std::string>{});
}

}  // namespace
}  // namespace imgtool::policy
