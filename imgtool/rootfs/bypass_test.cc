// Issue 15, class 1: a top layer that hides the /etc/passwd a runtime reads from a
// lookup by exact entry name. Every variant and its cousins: the view must give the file
// a runtime opens (or fail closed when runtimes themselves disagree).
#include <gtest/gtest.h>

#include "rootfs/image_fs.h"
#include "rootfs/test_tar.h"

namespace imgtool::rootfs {
namespace {

using testing::Dir;
using testing::File;
using testing::Hardlink;
using testing::Layers;
using testing::ReadOrWhy;
using testing::Symlink;
using testing::TarEntry;
using testing::Whiteout;

const std::string kSafe = "app:x:1000:1000::/home/app:/bin/sh\n";
const std::string kRoot = "app:x:0:0::/root:/bin/sh\n";

// A base layer whose /etc/passwd gives app uid 1000, under `top`.
Layers OverBase(const std::vector<TarEntry>& top) {
  Layers l;
  l.Add({Dir("etc"), File("etc/passwd", kSafe), Dir("bin")});
  l.Add(top);
  return l;
}

TEST(Bypass, EtcSymlinkedToAnotherFolderRelative) {
  Layers l = OverBase({Dir("real"), File("real/passwd", kRoot), Symlink("etc", "real")});
  auto fs = l.Build();
  EXPECT_EQ(ReadOrWhy(fs, "/etc/passwd"), kRoot);
  auto info = fs->Resolve("/etc/passwd");
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->path, "real/passwd");
  EXPECT_EQ(info->layer, l.digest(1));
  EXPECT_EQ(info->entry, 1u);
}

TEST(Bypass, EtcSymlinkedToAnotherFolderAbsolute) {
  Layers l = OverBase({Symlink("etc", "/opt/e"), Dir("opt"), Dir("opt/e"), File("opt/e/passwd", kRoot)});
  EXPECT_EQ(ReadOrWhy(l.Build(), "/etc/passwd"), kRoot);
}

TEST(Bypass, EntryNamesSpelledOtherwise) {
  for (const char* name : {"etc//passwd", "etc/./passwd", "./etc/passwd", "/etc/passwd", ".//etc/.//passwd",
                           "../../etc/passwd", "x/../etc/passwd", "etc/../etc/passwd"}) {
    EXPECT_EQ(ReadOrWhy(OverBase({File(name, kRoot)}).Build(), "/etc/passwd"), kRoot) << name;
  }
}

TEST(Bypass, WhiteoutOfPasswdInALaterLayer) {
  EXPECT_EQ(ReadOrWhy(OverBase({Whiteout("etc/.wh.passwd")}).Build(), "/etc/passwd"),
            "error: /etc/passwd: \"etc/passwd\" does not exist");
  auto fs = OverBase({Whiteout("etc/.wh.passwd")}).Build();
  EXPECT_EQ(fs->ReadFile("/etc/passwd", 100).error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(ReadOrWhy(OverBase({Whiteout(".wh.etc")}).Build(), "/etc/passwd"),
            "error: /etc/passwd: \"etc\" does not exist");
  // Whiteout, then the file again in the same layer: the new one.
  EXPECT_EQ(ReadOrWhy(OverBase({Whiteout("etc/.wh.passwd"), File("etc/passwd", kRoot)}).Build(), "/etc/passwd"), kRoot);
}

TEST(Bypass, OpaqueEtc) {
  Layers l = OverBase({Dir("etc"), Whiteout("etc/.wh..wh..opq"), File("etc/group", "app:x:1000:\n")});
  auto fs = l.Build();
  EXPECT_EQ(ReadOrWhy(fs, "/etc/passwd"), "error: /etc/passwd: \"etc/passwd\" does not exist");
  EXPECT_EQ(ReadOrWhy(fs, "/etc/group"), "app:x:1000:\n");
  // An opaque folder, then a new passwd in it: the new one.
  EXPECT_EQ(ReadOrWhy(OverBase({Whiteout("etc/.wh..wh..opq"), File("etc/passwd", kRoot)}).Build(), "/etc/passwd"),
            kRoot);
}

TEST(Bypass, HardlinkNamedPasswd) {
  Layers l = OverBase({File("x/secret", kRoot), Hardlink("etc/passwd", "x/secret")});
  auto fs = l.Build();
  EXPECT_EQ(ReadOrWhy(fs, "/etc/passwd"), kRoot);
  EXPECT_EQ(fs->Resolve("etc/passwd")->entry, 0u);  // the content is the target's entry
  // Linked through a symlinked folder, and by a name spelled otherwise.
  EXPECT_EQ(
      ReadOrWhy(OverBase({File("x/secret", kRoot), Symlink("y", "x"), Hardlink("etc//passwd", "./y/secret")}).Build(),
                "/etc/passwd"),
      kRoot);
}

TEST(Bypass, SymlinkLoopIsAnErrorNotAHang) {
  auto fs = OverBase({Symlink("etc", "loop"), Symlink("loop", "etc")}).Build();
  EXPECT_EQ(ReadOrWhy(fs, "/etc/passwd"), "error: /etc/passwd: \"etc\": too many levels of symbolic links (40)");
  EXPECT_EQ(ReadOrWhy(OverBase({Symlink("etc/passwd", "passwd")}).Build(), "/etc/passwd"),
            "error: /etc/passwd: \"etc/passwd\": too many levels of symbolic links (40)");
  // A loop on the way to an entry's folder fails the build, naming the layer and the entry.
  Layers l = OverBase({Symlink("a", "a"), File("a/x", "")});
  EXPECT_EQ(ReadOrWhy(l.Build(), "/etc/passwd"),
            "build error: layer " + l.digest(1) +
                ": entry \"a/x\": unpacked onto the layers below: \"a\": too many levels of symbolic links (40)");
}

TEST(Bypass, SymlinkOutOfTheRootStaysInside) {
  for (const char* target : {"../../../../real", "/../../real", "../real/../../real"}) {
    auto fs = OverBase({Symlink("etc", target), File("real/passwd", kRoot)}).Build();
    if (std::string(target) == "../real/../../real") {
      EXPECT_EQ(ReadOrWhy(fs, "/etc/passwd"),
                "error: /etc/passwd: symlink \"etc\": \"../real/../../real\" has a \"..\" after a name, which "
                "unpackers and the kernel resolve differently");
      continue;
    }
    EXPECT_EQ(ReadOrWhy(fs, "/etc/passwd"), kRoot) << target;
    EXPECT_EQ(fs->Resolve("/etc/passwd")->path, "real/passwd");
  }
  // An entry written through such a link lands inside too.
  auto fs = OverBase({Symlink("up", "../../.."), File("up/etc/passwd", kRoot)}).Build();
  EXPECT_EQ(ReadOrWhy(fs, "/etc/passwd"), kRoot);
}

TEST(Bypass, SymlinkedParentChain) {
  auto fs = OverBase({Symlink("etc", "a/b/etc"), Symlink("a", "c"), Dir("c"), Symlink("c/b", "/d"), Dir("d"),
                      Dir("d/etc"), File("d/etc/passwd", kRoot)})
                .Build();
  EXPECT_EQ(ReadOrWhy(fs, "/etc/passwd"), kRoot);
  EXPECT_EQ(fs->Resolve("/etc/passwd")->path, "d/etc/passwd");
  // passwd itself a symlink, relative to its folder.
  EXPECT_EQ(ReadOrWhy(OverBase({File("etc/real", kRoot), Symlink("etc/passwd", "real")}).Build(), "/etc/passwd"),
            kRoot);
}

TEST(Bypass, FileReplacingAFolderRemovesItsChildren) {
  Layers l = OverBase({File("etc", "not a folder")});
  EXPECT_EQ(ReadOrWhy(l.Build(), "/etc/passwd"), "error: /etc/passwd: \"etc\" is not a folder");
  l.Add({Dir("etc")});
  EXPECT_EQ(ReadOrWhy(l.Build(), "/etc/passwd"), "error: /etc/passwd: \"etc/passwd\" does not exist");
  // A file replacing the folder, then a folder again with new content, in one layer.
  EXPECT_EQ(ReadOrWhy(OverBase({File("etc", ""), Dir("etc"), File("etc/passwd", kRoot)}).Build(), "/etc/passwd"),
            kRoot);
}

// Over a lower `etc -> x`, a layer's etc/passwd is written through the link when layers
// are unpacked onto each other, but makes a real etc folder hiding the link when each is
// unpacked on its own (overlayfs). A third layer then rewrites x/passwd: the runtimes see
// different files, so the read fails closed instead of picking one.
TEST(Bypass, UnpackersThatDisagreeFailClosed) {
  Layers l;
  l.Add({Symlink("etc", "x"), File("x/passwd", kSafe)});
  l.Add({File("etc/passwd", kRoot)});
  l.Add({File("x/passwd", kSafe)});
  auto fs = l.Build();
  ASSERT_TRUE(fs.ok()) << fs.error().message;
  auto overlay = fs->Stat(Unpacker::kOverlay, "/etc/passwd");
  auto merged = fs->Stat(Unpacker::kMerged, "/etc/passwd");
  ASSERT_TRUE(overlay.ok() && merged.ok());
  EXPECT_EQ(overlay->path + " " + overlay->layer, "etc/passwd " + l.digest(1));
  EXPECT_EQ(merged->path + " " + merged->layer, "x/passwd " + l.digest(2));
  auto read = fs->ReadFile("/etc/passwd", 100);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(read.error().message,
            "/etc/passwd: unpackers disagree on its content: overlayfs snapshotters (each layer on its own) see "
            "\"etc/passwd\", the file of layer " +
                l.digest(1) +
                " entry 0; umoci and native snapshotters (each layer onto those below) see \"x/passwd\", the file "
                "of layer " +
                l.digest(2) + " entry 0");
  // Without the third layer both read layer 1's entry, at different places.
  Layers two;
  two.Add({Symlink("etc", "x"), File("x/passwd", kSafe)});
  two.Add({File("etc/passwd", kRoot)});
  EXPECT_EQ(ReadOrWhy(two.Build(), "/etc/passwd"), kRoot);
}

TEST(Bypass, OnlyOneUnpackerSeesAFile) {
  // etc/group over `etc -> x`: overlayfs gets a real etc with only group in it.
  Layers l;
  l.Add({Symlink("etc", "x"), File("x/passwd", kRoot)});
  l.Add({File("etc/group", "")});
  auto read = l.Build()->ReadFile("/etc/passwd", 100);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(
      read.error().message,
      "/etc/passwd: unpackers disagree: overlayfs snapshotters (each layer on its own) see nothing (\"etc/passwd\" "
      "does not exist); umoci and native snapshotters (each layer onto those below) see \"x/passwd\", the file of "
      "layer " +
          l.digest(0) + " entry 1");
}

}  // namespace
}  // namespace imgtool::rootfs
