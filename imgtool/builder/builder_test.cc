#include "builder/builder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "archive/layer.h"
#include "builder/lock.h"
#include "builder/metadata_layer.h"
#include "fs/atomic_file.h"
#include "layout/layout_repository.h"
#include "oci/canonical_json.h"

namespace imgtool::build {

namespace {

struct Workspace {
  fs::TempDir dir = std::move(*fs::TempDir::Create("builder-test-"));
  std::string Spec(const std::string& name, const std::string& json) {
    EXPECT_TRUE(fs::MakeDirs(dir.path() + "/" + name).ok());
    EXPECT_TRUE(fs::WriteFileAtomic(dir.path() + "/" + name + "/data.txt", "payload\n").ok());
    std::string path = dir.path() + "/" + name + "/spec.json";
    EXPECT_TRUE(fs::WriteFileAtomic(path, json).ok());
    return path;
  }
  // Two platforms; arm.txt goes into the arm64 image only.
  std::string MultiSpec(const std::string& name) {
    std::string path = Spec(name, R"({"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},
      "platforms":["linux/amd64","linux/arm64"],
      "layers":[{"name":"data","files":[{"src":"data.txt","dest":"/opt/"},
        {"src":"arm.txt","dest":"/opt/","platforms":["linux/arm64"]}]}]})");
    EXPECT_TRUE(fs::WriteFileAtomic(dir.path() + "/" + name + "/arm.txt", "arm\n").ok());
    return path;
  }
  BuildOptions Options(const std::string& spec, const std::string& out) {
    BuildOptions o;
    o.spec_path = spec;
    o.output = *ref::ParseReference("oci:" + dir.path() + "/" + out + ":v1");
    return o;
  }
};

const char* kSpec = R"({"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},
  "layers":[{"name":"data","files":[{"src":"data.txt","dest":"/opt/"}]}],"stack":{"nccl":"2.28.9"}})";

}  // namespace

Result<std::shared_ptr<const oci::Image>> OpenImage(const std::string& dir, const std::string& tag) {
  auto node = layout::LayoutRepository(dir, "oci:" + dir, "").Open(tag);
  if (!node.ok()) return node.error();
  return node->image;
}

TEST(Builder, SameInputsInTwoFoldersGiveOneDigest) {
  Workspace w;
  auto a = Build(w.Options(w.Spec("a", kSpec), "out-a"));
  auto b = Build(w.Options(w.Spec("b", kSpec), "out-b"));
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(a->manifest.digest, b->manifest.digest);
  ASSERT_EQ(a->images[0].layers.size(), 2u);  // data + imgtool-metadata
  EXPECT_EQ(a->images[0].layers[1].name, "imgtool-metadata");
  EXPECT_EQ(*fs::ReadSmallFile(a->record_path), *fs::ReadSmallFile(b->record_path));
  auto img = OpenImage(w.dir.path() + "/out-a", "v1");
  ASSERT_TRUE(img.ok());
  ASSERT_TRUE((*img)->config().ok()) << (*img)->config().error().message;
  EXPECT_EQ((*(*img)->config())["config"]["User"], "10001:10001");
  EXPECT_EQ((*(*img)->config())["config"]["Labels"]["org.imgtool.stack.nccl"], "2.28.9");
  auto stack = archive::ReadFileFromLayer(*(*img)->layers()[1], "etc/imgtool/stack.json");
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(*stack, "{\"components\":{\"nccl\":{\"version\":\"2.28.9\"}},\"schemaVersion\":1}\n");
}

TEST(Builder, EpochChangesTheDigest) {
  Workspace w;
  std::string spec = w.Spec("a", kSpec);
  auto zero = Build(w.Options(spec, "e0"));
  auto opts = w.Options(spec, "e1");
  opts.epoch = 86400;
  auto day = Build(opts);
  ASSERT_TRUE(zero.ok() && day.ok());
  EXPECT_NE(zero->manifest.digest, day->manifest.digest);
}

TEST(Builder, FailedBuildLeavesNoOutput) {
  Workspace w;
  std::string spec = w.Spec("a", R"({"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},
    "layers":[{"files":[{"src":"missing.txt","dest":"/x"}]}]})");
  auto r = Build(w.Options(spec, "out"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);
  EXPECT_FALSE(fs::Exists(w.dir.path() + "/out"));
}

TEST(Builder, BaseImageKeepsItsLayersAndUsers) {
  Workspace w;
  auto base = Build(w.Options(w.Spec("base", kSpec), "base-img"));
  ASSERT_TRUE(base.ok()) << base.error().message;
  std::string child = std::string(R"({"base":{"layout":"../base-img","digest":")") + base->manifest.digest.str() +
                      R"("},"user":{"name":"u2","uid":10002,"gid":10002},
      "layers":[{"name":"more","files":[{"src":"data.txt","dest":"/srv/"}]}]})";
  auto r = Build(w.Options(w.Spec("child", child), "child-img"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto img = OpenImage(w.dir.path() + "/child-img", "v1");
  ASSERT_TRUE(img.ok());
  ASSERT_EQ((*img)->layers().size(), 4u);
  auto passwd = archive::ReadFileFromLayer(*(*img)->layers()[3], "etc/passwd");
  EXPECT_EQ(*passwd,
            "root:x:0:0:root:/root:/sbin/nologin\nt:x:10001:10001::/home/t:/sbin/nologin\n"
            "u2:x:10002:10002::/home/u2:/sbin/nologin\n");
  // A base pinned to another digest is refused.
  std::string wrong = child;
  wrong.replace(wrong.find("sha256:") + 7, 4, "0000");
  auto bad = Build(w.Options(w.Spec("wrong", wrong), "wrong-img"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kNotFound);
}

// A registry base whose image the download cache holds whole is opened from the cache:
// registry.invalid is never asked (it could not answer).
TEST(Builder, RegistryBaseComesFromTheDownloadCache) {
  Workspace w;
  const std::string downloads = w.dir.path() + "/downloads";
  auto base = Build(w.Options(w.Spec("base", kSpec), "downloads/bases"));
  ASSERT_TRUE(base.ok()) << base.error().message;
  const std::string pin = base->manifest.digest.str();
  std::string child = R"({"base":"docker://registry.invalid/team/base:1@)" + pin +
                      R"(","user":{"name":"u2","uid":10002,"gid":10002},
      "layers":[{"name":"more","files":[{"src":"data.txt","dest":"/srv/"}]}]})";
  BuildOptions o = w.Options(w.Spec("child", child), "child-img");
  o.download_dir = downloads;
  auto r = Build(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->images[0].base_manifest.str(), pin);
  auto img = OpenImage(w.dir.path() + "/child-img", "v1");
  ASSERT_TRUE(img.ok());
  ASSERT_EQ((*img)->layers().size(), 4u);
  EXPECT_EQ((*img)->layers()[0]->digest(), base->images[0].layers[0].descriptor.digest);
  const auto& ann = (*img)->manifest().annotations;
  EXPECT_EQ(ann.at("org.opencontainers.image.base.digest"), pin);
  EXPECT_EQ(ann.at("org.opencontainers.image.base.name"), "registry.invalid/team/base:1");
  auto record = oci::ParseJson(*fs::ReadSmallFile(r->record_path), "record");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ((*record)["base"].dump(), R"({"digest":")" + pin + R"(","manifest":")" + pin +
                                          R"(","source":"docker://registry.invalid/team/base:1"})");
  FetchOptions fetch;
  fetch.cache_dir = downloads;
  auto lock = LockSpec(w.dir.path() + "/child/spec.json", fetch);
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  const LockInput& in = lock->inputs.at(0);
  EXPECT_EQ(in.kind, "base");
  EXPECT_EQ(in.sha256.str(), pin);
  EXPECT_EQ(in.manifest.str(), pin);
  EXPECT_EQ(in.source, "docker://registry.invalid/team/base:1");
}

// Two platforms: one index, one image each with its own files, the same digest from two
// folders; --platform builds the index's arm64 image alone, to the same manifest digest.
TEST(Builder, MultiPlatformSpecWritesOneIndex) {
  Workspace w;
  auto a = Build(w.Options(w.MultiSpec("a"), "out-a"));
  auto b = Build(w.Options(w.MultiSpec("b"), "out-b"));
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_TRUE(a->is_index);
  EXPECT_EQ(a->manifest.media_type, "application/vnd.oci.image.index.v1+json");
  EXPECT_EQ(a->manifest.digest, b->manifest.digest);
  EXPECT_EQ(*fs::ReadSmallFile(a->record_path), *fs::ReadSmallFile(b->record_path));
  EXPECT_EQ(*fs::ReadSmallFile(a->sbom_path), *fs::ReadSmallFile(b->sbom_path));
  ASSERT_EQ(a->images.size(), 2u);
  EXPECT_NE(a->images[0].manifest.digest, a->images[1].manifest.digest);
  EXPECT_NE(a->images[0].layers[0].descriptor.digest, a->images[1].layers[0].descriptor.digest);
  auto node = layout::LayoutRepository(w.dir.path() + "/out-a", "oci:out-a", "").Open("v1");
  ASSERT_TRUE(node.ok()) << node.error().message;
  ASSERT_TRUE(node->index != nullptr);
  auto arm_entry = node->index->ChildFor(*oci::ParsePlatform("linux/arm64"));
  ASSERT_TRUE(arm_entry.ok());
  EXPECT_EQ(arm_entry->digest, a->images[1].manifest.digest);
  auto record = oci::ParseJson(*fs::ReadSmallFile(a->record_path), "record");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ((*record)["outputs"]["index"]["digest"], a->manifest.digest.str());
  EXPECT_EQ((*record)["images"][1]["platform"], "linux/arm64");
  EXPECT_EQ((*record)["images"][1]["outputs"]["manifest"]["digest"], a->images[1].manifest.digest.str());

  BuildOptions one = w.Options(w.dir.path() + "/a/spec.json", "arm-only");
  one.platform = *oci::ParsePlatform("linux/arm64");
  auto arm = Build(one);
  ASSERT_TRUE(arm.ok()) << arm.error().message;
  EXPECT_FALSE(arm->is_index);
  EXPECT_EQ(arm->manifest.digest, a->images[1].manifest.digest);
  auto img = OpenImage(w.dir.path() + "/arm-only", "v1");
  ASSERT_TRUE(img.ok());
  ASSERT_TRUE((*img)->config().ok()) << (*img)->config().error().message;
  EXPECT_EQ((*(*img)->config())["architecture"], "arm64");
  one.platform = *oci::ParsePlatform("linux/s390x");
  auto bad = Build(one);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "--platform: platform linux/s390x: the spec builds linux/amd64, linux/arm64");
}

// A multi-platform lock names each input's platform; --locked compares all of them, and
// --platform only its own.
TEST(Builder, MultiPlatformLockCoversEveryPlatform) {
  Workspace w;
  std::string spec = w.MultiSpec("a");
  auto lock = LockSpec(spec, FetchOptions{});
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  ASSERT_EQ(lock->inputs.size(), 3u);
  EXPECT_EQ(lock->inputs[0].platform, "linux/amd64");
  EXPECT_EQ(lock->inputs[1].platform, "linux/arm64");
  EXPECT_EQ(lock->inputs[1].name, "/opt/arm.txt");  // files in path order
  EXPECT_EQ(lock->inputs[2].platform, "linux/arm64");
  auto reread = ParseLock(LockJson(*lock), "lock");
  ASSERT_TRUE(reread.ok());
  EXPECT_TRUE(CompareLock(*lock, *reread, "lock").ok());
  std::string lock_path = w.dir.path() + "/a/imgtool.lock.json";
  ASSERT_TRUE(fs::WriteFileAtomic(lock_path, LockJson(*lock)).ok());
  BuildOptions o = w.Options(spec, "out");
  o.lock_path = lock_path;
  ASSERT_TRUE(Build(o).ok());
  ASSERT_TRUE(fs::WriteFileAtomic(w.dir.path() + "/a/arm.txt", "arm, changed\n").ok());
  auto moved = Build(o);
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.error().message.find("linux/arm64: layer data: file /opt/arm.txt: sha256 locked"), std::string::npos)
      << moved.error().message;
  o.platform = *oci::ParsePlatform("linux/amd64");  // the amd64 image does not take arm.txt
  auto amd = Build(o);
  EXPECT_TRUE(amd.ok()) << amd.error().message;
  // Only that platform's part of a multi-platform lock; a single-platform lock as it is.
  EXPECT_EQ(OnlyPlatform(*lock, *o.platform).inputs.size(), 1u);
  Lock single = OnlyPlatform(*lock, *o.platform);
  single.inputs[0].platform.clear();
  EXPECT_EQ(OnlyPlatform(single, *oci::ParsePlatform("linux/arm64")).inputs.size(), 1u);
}

// --locked hashes each file by one open and the layer reads it by another: a file rewritten
// in between (same size, other bytes) must not enter the layer under the lock's digest.
// The build fails (exit 4) naming the file, and leaves no output.
TEST(Builder, LockedFileRewrittenAfterTheCheckIsRefusedByTheLayer) {
  Workspace w;
  std::string spec = w.Spec("a", kSpec);
  auto lock = LockSpec(spec, FetchOptions{});
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  std::string lock_path = w.dir.path() + "/a/imgtool.lock.json";
  ASSERT_TRUE(fs::WriteFileAtomic(lock_path, LockJson(*lock)).ok());
  std::string data = w.dir.path() + "/a/data.txt";
  BuildOptions o = w.Options(spec, "out");
  o.lock_path = lock_path;
  o.progress = [&](const std::string& line) {
    if (line.rfind("every input matches", 0) == 0) {
      std::FILE* f = std::fopen(data.c_str(), "r+");  // in place: same inode, size and mtime tick
      ASSERT_NE(f, nullptr);
      std::fputs("PAYLOAD\n", f);
      std::fclose(f);
    }
  };
  auto built = Build(o);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.error().kind, ErrorKind::kIntegrity);
  EXPECT_NE(built.error().message.find(data + ": changed while building (its content was " +
                                       oci::Digest::Of("payload\n").str()),
            std::string::npos)
      << built.error().message;
  EXPECT_FALSE(fs::Exists(w.dir.path() + "/out"));
}

// Planning walks a copied folder without following symlinks; the layer reads its files
// later by name. A subfolder swapped for a symlink in between (to a folder holding a key
// of the same name and size) is refused, not followed: nothing below the layer root is.
TEST(Builder, AFolderSwappedForASymlinkAfterPlanningIsNotFollowed) {
  Workspace w;
  std::string spec = w.Spec("a", R"({"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},
    "layers":[{"name":"tree","files":[{"src":"tree","dest":"/opt/tree"}]}]})");
  std::string root = w.dir.path() + "/a";
  ASSERT_TRUE(fs::MakeDirs(root + "/tree/sub").ok());
  ASSERT_TRUE(fs::WriteFileAtomic(root + "/tree/sub/f", "plain file\n").ok());
  ASSERT_TRUE(fs::MakeDirs(w.dir.path() + "/keys").ok());
  ASSERT_TRUE(fs::WriteFileAtomic(w.dir.path() + "/keys/f", "SECRET KEY\n").ok());
  BuildOptions o = w.Options(spec, "out");
  o.progress = [&](const std::string& line) {
    if (line.rfind("layer 1/", 0) != 0 || fs::Exists(root + "/sub.old")) return;
    ASSERT_EQ(::rename((root + "/tree/sub").c_str(), (root + "/sub.old").c_str()), 0);
    ASSERT_EQ(::symlink((w.dir.path() + "/keys").c_str(), (root + "/tree/sub").c_str()), 0);
  };
  auto built = Build(o);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.error().kind, ErrorKind::kInvalidInput);
  EXPECT_NE(built.error().message.find(root + "/tree/sub/f: is a symlink; refused"), std::string::npos)
      << built.error().message;
  EXPECT_FALSE(fs::Exists(w.dir.path() + "/out"));
}

TEST(MetadataLayer, UserClashesAreErrors) {
  UserSpec u{"trainer", 10001, 10001, "trainer", "/home/trainer", "/sbin/nologin"};
  EXPECT_EQ(*PasswdWithUser("", u),
            "root:x:0:0:root:/root:/sbin/nologin\ntrainer:x:10001:10001::/home/trainer:/sbin/nologin\n");
  auto clash = PasswdWithUser("other:x:10001:10001::/:/bin/sh\n", u);
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.error().message,
            "adding the spec's user ($.user) to the base image: /etc/passwd: uid 10001 already belongs to user 'other' "
            "at line 1 \"other:x:10001:10001::/:/bin/sh\", so it cannot be user 'trainer' too");
  // Issue 24: glibc and Go read " trainer" as trainer, uid 0; musl reads a name of its own.
  auto blank = PasswdWithUser("root:x:0:0:::\n trainer:x:0:0:root:/root:/bin/sh\n", u);
  ASSERT_FALSE(blank.ok());
  EXPECT_EQ(blank.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(blank.error().message,
            "adding the spec's user ($.user) to the base image: /etc/passwd: runtimes resolve user 'trainer' "
            "differently: glibc and Go: line 2 \" trainer:x:0:0:root:/root:/bin/sh\" (user 'trainer', uid 0, gid 0); "
            "musl: none; user 'trainer' cannot be added as uid 10001 (gid 10001)");
  auto group = GroupWithUser("root:x:0:\ntrainer:x:0:\n", u);
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(group.error().message,
            "adding the spec's group ($.user.group) to the base image: /etc/group: group 'trainer' is already gid 0 at "
            "line 2 \"trainer:x:0:\", not gid 10001");
}

}  // namespace imgtool::build
