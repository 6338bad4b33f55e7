#include "builder/lock.h"

#include <gtest/gtest.h>

#include "fs/atomic_file.h"

namespace imgtool::build {

namespace {

Lock Sample() {
  Lock l;
  l.inputs.push_back({"", "base", "base", "", oci::Digest::Of("index"), 0, "docker://r.invalid/base:1",
                      oci::Digest::Of("arm64 manifest")});
  l.inputs.push_back(
      {"cuda", "wheel", "nvidia-nccl-cu13", "2.28.9", oci::Digest::Of("whl"), 3, "https://x.invalid/n.whl", {}});
  l.inputs.push_back({"app", "file", "/usr/bin/trainer", "", oci::Digest::Of("bin"), 3, "trainer", {}});
  return l;
}

}  // namespace

TEST(Lock, JsonRoundTripsAndIsStable) {
  std::string text = LockJson(Sample());
  auto back = ParseLock(text, "imgtool.lock.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->inputs, Sample().inputs);
  EXPECT_EQ(LockJson(*back), text);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_NE(text.find("\"lockVersion\": 1"), std::string::npos) << text;
}

TEST(Lock, CompareNamesEveryDifference) {
  Lock now = Sample();
  EXPECT_TRUE(CompareLock(Sample(), now, "L").ok());
  now.inputs[1].sha256 = oci::Digest::Of("other");
  now.inputs[1].version = "2.29.0";
  now.inputs.pop_back();
  now.inputs.push_back({"app", "file", "/usr/bin/new", "", oci::Digest::Of("n"), 1, "new", {}});
  Status s = CompareLock(Sample(), now, "L");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::kIntegrity);
  const std::string& m = s.error().message;
  EXPECT_NE(m.find("4 inputs differ from L"), std::string::npos) << m;
  EXPECT_NE(m.find("layer cuda: wheel nvidia-nccl-cu13: sha256 locked '" + oci::Digest::Of("whl").str()),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("version locked '2.28.9', now '2.29.0'"), std::string::npos) << m;
  EXPECT_NE(m.find("layer app: file /usr/bin/trainer: locked but no longer an input"), std::string::npos) << m;
  EXPECT_NE(m.find("layer app: file /usr/bin/new: not in the lock"), std::string::npos) << m;
}

TEST(Lock, MalformedFilesAreRefused) {
  for (const char* bad :
       {"[]", "{\"lockVersion\": 2, \"inputs\": []}", "{\"lockVersion\": 1}",
        "{\"lockVersion\": 1, \"inputs\": [{\"kind\": \"file\", \"name\": \"a\", \"sha256\": \"x\", \"size\": 1}]}",
        "{\"lockVersion\": 1, \"inputs\": [{\"kind\": \"file\", \"name\": \"a\", \"size\": 1}]}",
        "{\"lockVersion\": 1, \"lockVersion\": 1, \"inputs\": []}", "{"}) {
    auto r = ParseLock(bad, "imgtool.lock.json");
    EXPECT_FALSE(r.ok()) << bad;
  }
}

TEST(Lock, HashesTheFilesOfAPlannedLayer) {
  auto dir = fs::TempDir::Create("lock-test-");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(fs::WriteFileAtomic(dir->path() + "/a.txt", "alpha\n").ok());
  std::string spec_path = dir->path() + "/spec.json";
  ASSERT_TRUE(fs::WriteFileAtomic(spec_path, R"({"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},
    "layers":[{"name":"data","files":[{"src":"a.txt","dest":"/opt/"}]}]})")
                  .ok());
  auto lock = LockSpec(spec_path, {});
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  ASSERT_EQ(lock->inputs.size(), 1u);
  EXPECT_EQ(lock->inputs[0].name, "/opt/a.txt");
  EXPECT_EQ(lock->inputs[0].source, "a.txt");
  EXPECT_EQ(lock->inputs[0].sha256, oci::Digest::Of("alpha\n"));
  EXPECT_EQ(lock->inputs[0].size, 6u);
  EXPECT_EQ(LockJson(*lock).find(dir->path()), std::string::npos) << "no host paths in the lock";
}

TEST(Lock, TheBaseRecordsItsPinAndItsPlatformManifest) {
  std::string text = LockJson(Sample());
  EXPECT_NE(text.find("\"manifest\": \"" + oci::Digest::Of("arm64 manifest").str() + "\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"source\": \"docker://r.invalid/base:1\""), std::string::npos) << text;
  EXPECT_EQ(text.find("\"manifest\"", text.find("nvidia-nccl-cu13")), std::string::npos) << "only the base has one";
  Lock moved = Sample();
  moved.inputs[0].manifest = oci::Digest::Of("new arm64 manifest");
  Status s = CompareLock(Sample(), moved, "L");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "1 input differ from L (run `imgtool lock SPEC` to accept them):\n  base base: manifest locked '" +
                oci::Digest::Of("arm64 manifest").str() + "', now '" + oci::Digest::Of("new arm64 manifest").str() +
                "'");
}

TEST(Lock, AnOlderBaseEntryReadsItsPinAsTheManifest) {
  const std::string pin = oci::Digest::Of("image").str();
  auto lock = ParseLock(
      R"({"lockVersion": 1, "inputs": [{"kind": "base", "name": "base", "sha256": ")" + pin + R"(", "size": 0}]})",
      "L");
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  EXPECT_EQ(lock->inputs[0].manifest.str(), pin);
  auto bad = ParseLock(R"({"lockVersion": 1, "inputs": [{"kind": "base", "name": "base", "sha256": ")" + pin +
                           R"(", "manifest": "x", "size": 0}]})",
                       "L");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "L: $.inputs[0].manifest: 'x' is not a sha256 digest (rewrite it with `imgtool lock SPEC`)");
}

}  // namespace imgtool::build
