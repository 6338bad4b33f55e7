#include "builder/plan.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/atomic_file.h"

namespace imgtool::build {

namespace {

using archive::Entry;
using archive::EntryType;

struct Context {
  fs::TempDir dir = std::move(*fs::TempDir::Create("plan-test-"));
  void File(const std::string& rel, const std::string& content, mode_t mode = 0644) {
    EXPECT_TRUE(fs::MakeDirs(fs::DirName(dir.path() + "/" + rel)).ok());
    EXPECT_TRUE(fs::WriteFileAtomic(dir.path() + "/" + rel, content).ok());
    chmod((dir.path() + "/" + rel).c_str(), mode);
  }
  LayerSpec Layer(std::vector<FileSpec> files) {
    LayerSpec l;
    l.name = "test";
    l.root = dir.path();
    l.where = "$.layers[0]";
    for (size_t i = 0; i < files.size(); ++i) files[i].where = "$.layers[0].files[" + std::to_string(i) + "]";
    l.files = files;
    return l;
  }
};

std::vector<std::string> Paths(const PlannedLayer& p) {
  std::vector<std::string> out;
  for (const auto& e : p.entries) out.push_back(e.path);
  return out;
}

FileSpec Copy(const std::string& src, const std::string& dest) {
  FileSpec f;
  f.src = src;
  f.dest = dest;
  return f;
}

}  // namespace

TEST(Plan, FolderCopyIsSortedWithParentsAndNormalizedModes) {
  Context c;
  c.File("app/z.txt", "z", 0600);
  c.File("app/bin/run", "r", 0700);
  ASSERT_EQ(symlink("z.txt", (c.dir.path() + "/app/link").c_str()), 0);
  auto p = PlanLayer(c.Layer({Copy("app", "/opt/app")}));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(Paths(*p), (std::vector<std::string>{"opt", "opt/app", "opt/app/bin", "opt/app/bin/run", "opt/app/link",
                                                 "opt/app/z.txt"}));
  EXPECT_EQ(p->entries[3].mode, 0755u);  // any x bit -> 0755, whatever the umask made it
  EXPECT_EQ(p->entries[5].mode, 0644u);
  EXPECT_EQ(p->entries[4].type, EntryType::kSymlink);
  EXPECT_EQ(p->entries[4].link_target, "z.txt");
  EXPECT_EQ(p->inputs[5], "app/z.txt");
  EXPECT_EQ(p->content_bytes, 2u);
}

TEST(Plan, HardlinksBecomeLinksToTheFirstPath) {
  Context c;
  c.File("d/a", "same");
  ASSERT_EQ(link((c.dir.path() + "/d/a").c_str(), (c.dir.path() + "/d/b").c_str()), 0);
  auto p = PlanLayer(c.Layer({Copy("d", "/d")}));
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->entries.size(), 3u);
  EXPECT_EQ(p->entries[1].type, EntryType::kFile);
  EXPECT_EQ(p->entries[2].type, EntryType::kHardlink);
  EXPECT_EQ(p->entries[2].link_target, "d/a");
  EXPECT_EQ(p->content_bytes, 4u);
}

TEST(Plan, GlobsCopyIntoAFolderAndSymlinksStaySymlinks) {
  Context c;
  c.File("lib/libx.so.1.2", "x");
  ASSERT_EQ(symlink("libx.so.1.2", (c.dir.path() + "/lib/libx.so.1").c_str()), 0);
  c.File("lib/other.so", "o");
  auto p = PlanLayer(c.Layer({Copy("lib/libx.so*", "/usr/lib/")}));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(Paths(*p), (std::vector<std::string>{"usr", "usr/lib", "usr/lib/libx.so.1", "usr/lib/libx.so.1.2"}));
  EXPECT_EQ(p->entries[2].type, EntryType::kSymlink);
  auto many = PlanLayer(c.Layer({Copy("lib/*", "/usr/lib/one")}));
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error().message,
            "$.layers[0].files[0].dest: 'lib/*' matches several files; end dest with '/' to copy them into a folder");
}

TEST(Plan, SymlinkedFolderInsideTheRootIsFollowedOutsideIsRefused) {
  Context c;
  c.File("real/f", "f");
  ASSERT_EQ(symlink("real", (c.dir.path() + "/alias").c_str()), 0);
  ASSERT_EQ(symlink("/etc", (c.dir.path() + "/out").c_str()), 0);
  EXPECT_TRUE(PlanLayer(c.Layer({Copy("alias/f", "/f")})).ok());
  auto bad = PlanLayer(c.Layer({Copy("out/hostname", "/f")}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "$.layers[0].files[0].src: 'out/hostname' resolves to /etc, outside the layer root " +
                                     c.dir.path() + " (through a symlink)");
}

TEST(Plan, ConflictsAndSetuidAreRefused) {
  Context c;
  c.File("a", "a");
  c.File("b", "b");
  c.File("s", "s", 04755);
  auto conflict = PlanLayer(c.Layer({Copy("a", "/x"), Copy("b", "/x")}));
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().message, "$.layers[0]: /x comes from two sources with different contents or metadata");
  auto file_as_folder = PlanLayer(c.Layer({Copy("a", "/x"), Copy("b", "/x/")}));
  ASSERT_FALSE(file_as_folder.ok());
  EXPECT_EQ(file_as_folder.error().message,
            "$.layers[0]: /x is a file in the layer but also the folder of other entries");
  auto suid = PlanLayer(c.Layer({Copy("s", "/s")}));
  ASSERT_FALSE(suid.ok());
  FileSpec allowed = Copy("s", "/s");
  allowed.allow_setuid = true;
  auto ok = PlanLayer(c.Layer({allowed}));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->entries[0].mode, 04755u);
}

TEST(Plan, FingerprintFollowsContentMetadata) {
  Context c;
  c.File("a", "a");
  auto one = PlanLayer(c.Layer({Copy("a", "/a")}));
  auto same = PlanLayer(c.Layer({Copy("a", "/a")}));
  EXPECT_EQ(one->fingerprint, same->fingerprint);
  c.File("a", "aa");  // rewritten: new inode and size
  auto changed = PlanLayer(c.Layer({Copy("a", "/a")}));
  EXPECT_NE(one->fingerprint, changed->fingerprint);
}

}  // namespace imgtool::build
