#include "policy/evaluate.h"

#include <gtest/gtest.h>

namespace imgtool::policy {
namespace {

const std::string kDigest = "sha256:" + std::string(64, 'c');

ImageFacts Good() {
  ImageFacts f;
  f.reference = "oci:/l@" + kDigest;
  f.digest = kDigest;
  f.user = "10001:10001";
  f.labels = {{"org.imgtool.stack.cuda", "13.0.96"}, {"org.imgtool.stack.nccl", "2.28.9"}, {"src", "x"}};
  f.stack_json =
      std::string(R"({"components":{"cuda":{"version":"13.0.96"},"nccl":{"version":"2.28.9"}},"schemaVersion":1})");
  f.setuid_files = std::vector<SetuidFile>{};
  f.uncompressed_size = uint64_t{5000};
  f.compressed_size = 1000;
  f.signature = SignatureFacts{true, {"signed by k.pub"}};
  return f;
}

TEST(Evaluate, NonRoot) {
  ImageFacts f = Good();
  EXPECT_TRUE(EvaluateNonRoot(f).pass);
  f.user = "0:0";
  EXPECT_EQ(EvaluateNonRoot(f).reason, "config User '0:0' is uid 0 (root)");
  f.user = "";
  EXPECT_FALSE(EvaluateNonRoot(f).pass);
  f.user = "root";
  EXPECT_FALSE(EvaluateNonRoot(f).pass);
  f.user = "app";
  f.passwd = std::string("root:x:0:0::/root:/bin/sh\napp:x:10001:10001::/home/app:/sbin/nologin\n");
  EXPECT_EQ(EvaluateNonRoot(f).reason,
            "user 'app' is uid 10001 in /etc/passwd (line 2 \"app:x:10001:10001::/home/app:/sbin/nologin\")");
  f.user = "toor";
  f.passwd = std::string("toor:x:0:0::/root:/bin/sh\n");
  EXPECT_EQ(EvaluateNonRoot(f).reason,
            "config User 'toor' is uid 0 in /etc/passwd (line 1 \"toor:x:0:0::/root:/bin/sh\")");
  f.user = "ghost";
  EXPECT_EQ(EvaluateNonRoot(f).reason, "config User 'ghost' is not in the image's /etc/passwd");
  f.passwd = MakeError(ErrorKind::kNotFound, "none");
  EXPECT_EQ(EvaluateNonRoot(f).reason, "config User 'ghost' is a name but the image has no /etc/passwd");
}

// Issue 24: the uid a runtime would run, by every reader of /etc/passwd and of the number.
TEST(Evaluate, NonRootJudgesWhatRuntimesResolve) {
  ImageFacts f = Good();
  f.user = "t";
  f.passwd = std::string(" t:x:0:0:root:/root:/bin/sh\nt:x:10001:10001::/home/t:/bin/sh\n");
  RuleResult r = EvaluateNonRoot(f);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.reason,
            "config User 't': /etc/passwd: runtimes resolve user 't' differently: glibc and Go: line 1 \" "
            "t:x:0:0:root:/root:/bin/sh\" (user 't', uid 0, gid 0); musl: line 2 \"t:x:10001:10001::/home/t:/bin/sh\" "
            "(user 't', uid 10001, gid 10001)");
  f.passwd = std::string("root:x:0:0:::\nt\nt:x:10001:10001:::\n");  // Go: "t" alone is uid 0
  EXPECT_NE(EvaluateNonRoot(f).reason.find("Go: line 2 \"t\" (user 't', uid 0, gid 0)"), std::string::npos);
  f.passwd = std::string("t:x:10001:10001:::\n+::::::\n");
  EXPECT_EQ(EvaluateNonRoot(f).reason,
            "config User 't' is a name; /etc/passwd: line 2: \"+\" is a NIS compat entry: glibc's compat service "
            "looks it up in NIS, Go and musl read an account named \"+\"");
  f.passwd = std::string("t:x:10001:10001:::\nt:x:0:0:::\n");  // first match wins everywhere
  EXPECT_TRUE(EvaluateNonRoot(f).pass);
  for (const char* root : {"0", "0000", "+0", "-0", "0:10001"}) {
    f.user = root;
    EXPECT_EQ(EvaluateNonRoot(f).reason, "config User '" + std::string(root) + "' is uid 0 (root)");
  }
  f.user = "4294967296:10001";
  EXPECT_EQ(EvaluateNonRoot(f).reason,
            "config User '4294967296:10001': 4294967296 is outside 0..2147483647: runc and Docker refuse it, "
            "containerd keeps its low 32 bits and runs it as 0 (root)");
  f.user = "-1";
  EXPECT_FALSE(EvaluateNonRoot(f).pass);
  f.user = ":10001";
  EXPECT_EQ(EvaluateNonRoot(f).reason, "config User ':10001' names no user: the container runs as root");
  f.user = "+10001";
  EXPECT_EQ(EvaluateNonRoot(f).reason, "uid 10001");
}

TEST(Evaluate, DigestPinned) {
  ImageFacts f = Good();
  EXPECT_TRUE(EvaluateDigestPinned(f).pass);
  f.reference = "oci:/l:v1";
  EXPECT_EQ(EvaluateDigestPinned(f).reason, "not pinned: the reference has tag 'v1' and no @sha256:...");
  f.reference = "docker://r.example/a:latest@" + kDigest;
  EXPECT_EQ(EvaluateDigestPinned(f).reason, "the reference names the tag 'latest'");
  f.reference = "oci:/l@sha256:" + std::string(64, 'd');
  EXPECT_FALSE(EvaluateDigestPinned(f).pass);
}

TEST(Evaluate, SignedByFailsClosed) {
  ImageFacts f = Good();
  EXPECT_TRUE(EvaluateSignedBy(f).pass);
  f.signature = SignatureFacts{false, {"no signature"}};
  EXPECT_EQ(EvaluateSignedBy(f).reason, "no signature");
  f.signature = NotGathered("the signature check");
  EXPECT_FALSE(EvaluateSignedBy(f).pass);
}

TEST(Evaluate, AllowedStacks) {
  AllowedStacksRule r{{{{"cuda", "12.4"}}, {{"cuda", "13.0.96"}, {"nccl", "2.28.9"}}}, false};
  ImageFacts f = Good();
  EXPECT_EQ(EvaluateAllowedStacks(r, f).reason, "cuda 13.0.96, nccl 2.28.9 (allowed stack 1)");
  f.labels["org.imgtool.stack.nccl"] = "2.27.0";
  EXPECT_EQ(EvaluateAllowedStacks(r, f).reason, "label org.imgtool.stack.nccl=2.27.0 but stack.json says 2.28.9");
  f = Good();
  f.labels.erase("org.imgtool.stack.nccl");
  EXPECT_EQ(EvaluateAllowedStacks(r, f).reason, "stack.json pins nccl 2.28.9 but no label org.imgtool.stack.nccl");
  f = Good();
  f.stack_json = MakeError(ErrorKind::kNotFound, "none");
  EXPECT_FALSE(EvaluateAllowedStacks(r, f).pass);
  f.labels.clear();
  EXPECT_FALSE(EvaluateAllowedStacks(r, f).pass);
  r.allow_none = true;
  EXPECT_TRUE(EvaluateAllowedStacks(r, f).pass);
  f = Good();
  r.stacks = {{{"cuda", "13.0.96"}, {"nccl", "2.20.0"}}};
  EXPECT_EQ(EvaluateAllowedStacks(r, f).reason, "cuda 13.0.96, nccl 2.28.9 matches no allowed stack");
  f.stack_json = std::string("{");
  EXPECT_FALSE(EvaluateAllowedStacks(r, f).pass);
}

TEST(Evaluate, RequiredLabelsBaseImagesSetuidSize) {
  ImageFacts f = Good();
  EXPECT_TRUE(EvaluateRequiredLabels({"src"}, f).pass);
  EXPECT_EQ(EvaluateRequiredLabels({"src", "a", "b"}, f).reason, "missing or empty: a, b");

  BaseImagesRule b{{kDigest}, {}, false};
  EXPECT_FALSE(EvaluateBaseImages(b, f).pass);
  b.allow_scratch = true;
  EXPECT_TRUE(EvaluateBaseImages(b, f).pass);
  f.annotations["org.opencontainers.image.base.digest"] = kDigest;
  EXPECT_TRUE(EvaluateBaseImages(b, f).pass);
  b.names = {"debian:12"};
  EXPECT_FALSE(EvaluateBaseImages(b, f).pass);
  f.annotations["org.opencontainers.image.base.digest"] = "sha256:" + std::string(64, 'e');
  EXPECT_EQ(EvaluateBaseImages(b, f).reason, "base sha256:" + std::string(64, 'e') + " is not in the allowlist");

  EXPECT_TRUE(EvaluateNoSetuid(f).pass);
  f.setuid_files = std::vector<SetuidFile>{{"sha256:0123456789abcdef0123", "usr/bin/su", 04755}};
  EXPECT_EQ(EvaluateNoSetuid(f).reason, "1 setuid/setgid files: /usr/bin/su (4755, layer sha256:0123456789ab)");
  f.setuid_files = MakeError(ErrorKind::kIntegrity, "listing layer x: truncated");
  EXPECT_EQ(EvaluateNoSetuid(f).reason, "listing layer x: truncated");

  EXPECT_TRUE(EvaluateMaxSize({1000, 5000}, f).pass);
  EXPECT_EQ(EvaluateMaxSize({999, std::nullopt}, f).reason, "1000 bytes compressed (limit 999)");
  EXPECT_FALSE(EvaluateMaxSize({std::nullopt, 4999}, f).pass);
  f.uncompressed_size = NotGathered("the uncompressed size");
  EXPECT_FALSE(EvaluateMaxSize({std::nullopt, 4999}, f).pass);
}

TEST(Evaluate, UnopenedImageFailsEveryRule) {
  Policy p;
  p.non_root = true;
  p.max_size = MaxSizeRule{1, std::nullopt};
  ImageFacts f;
  f.reference = "oci:/nope";
  f.opened = MakeError(ErrorKind::kNotFound, "no index.json");
  auto d = Evaluate(p, f);
  ASSERT_EQ(d.rules.size(), 2u);
  EXPECT_FALSE(d.pass);
  EXPECT_EQ(d.rules[1].reason, "cannot open the image: no index.json");
  EXPECT_FALSE(Evaluate(Policy{}, Good()).pass);  // no rules: no evidence
  p.max_size = MaxSizeRule{1000, std::nullopt};
  EXPECT_TRUE(Evaluate(p, Good()).pass);
}

}  // namespace
}  // namespace imgtool::policy
