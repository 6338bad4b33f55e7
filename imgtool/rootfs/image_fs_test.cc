// The view's mechanics on layers held in memory: images and compressed layers, order
// and replacement, whiteouts and opaque folders in both unpackers, hardlinks, what each
// kind of unpacker refuses, the limits, Walk and the setuid list, and the exact errors.
#include <gtest/gtest.h>

#include "archive/layer.h"
#include "fs/atomic_file.h"
#include "oci/counting_store.h"
#include "oci/image_config.h"
#include "rootfs/image_fs.h"
#include "rootfs/test_tar.h"

namespace imgtool::rootfs {
namespace {

using testing::Device;
using testing::Dir;
using testing::File;
using testing::Hardlink;
using testing::Layers;
using testing::ReadOrWhy;
using testing::Symlink;
using testing::Whiteout;

std::string BuildError(const Layers& l, const Limits& limits = {}) {
  auto fs = l.Build(limits);
  return fs.ok() ? "built" : fs.error().message;
}

// Every node of one view as "path mode [-> link]" lines.
std::string Listing(const ImageFs& fs, Unpacker view) {
  std::string out;
  fs.Walk(view, [&](const FileInfo& f) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", f.mode);
    out += f.path + " " + mode + (f.type == FileType::kSymlink ? " -> " + f.link : "") + "\n";
  });
  return out;
}

TEST(ImageFs, BuildsFromAnImageOfCompressedLayers) {
  auto store = std::make_shared<oci::MemoryStore>();
  auto tmp = fs::TempDir::Create("rootfs-test-");
  ASSERT_TRUE(tmp.ok());
  fs::AtomicFile out;
  ASSERT_TRUE(out.Open(tmp->path() + "/layer").ok());
  archive::Entry e;
  e.path = "etc";
  e.type = archive::EntryType::kDir;
  archive::Entry f;
  f.path = "etc/passwd";
  f.content = "app:x:1000:1000::/:/bin/sh\n";
  f.size = f.content.size();
  auto written = archive::WriteLayer({e, f}, {}, out);
  ASSERT_TRUE(written.ok()) << written.error().message;
  ASSERT_TRUE(out.Commit().ok());
  oci::Json cfg = oci::NewImageConfig("linux", "amd64");
  oci::Manifest m;
  m.layers.push_back(store->Add(*fs::ReadSmallFile(tmp->path() + "/layer"), oci::kMediaTypeLayerGzip));
  oci::AppendLayerToConfig(cfg, written->diff_id, {"1970-01-01T00:00:00Z", "test", false});
  m.layers.push_back(store->Add(testing::Tar({File("etc/group", "app:x:1000:\n")}), oci::kMediaTypeLayerTar));
  oci::AppendLayerToConfig(cfg, oci::Digest::Of(testing::Tar({File("etc/group", "app:x:1000:\n")})),
                           {"1970-01-01T00:00:00Z", "test", false});
  m.config = store->Add(*oci::CanonicalJson(cfg), oci::kMediaTypeConfig);
  auto node = oci::AddManifest(store, m);
  ASSERT_TRUE(node.ok()) << node.error().message;
  auto view = ImageFs::Build(*node->image);
  ASSERT_TRUE(view.ok()) << view.error().message;
  EXPECT_EQ(ReadOrWhy(view, "etc/passwd"), "app:x:1000:1000::/:/bin/sh\n");
  EXPECT_EQ(ReadOrWhy(view, "/etc/group"), "app:x:1000:\n");
  EXPECT_EQ(view->Resolve("etc/passwd")->layer, m.layers[0].digest.str());
}

TEST(ImageFs, LaterEntriesReplaceEarlierOnes) {
  Layers l;
  l.Add({File("a", "1"), File("a", "2"), Dir("d"), File("d/x", "x")});
  l.Add({File("a", "3"), Dir("d", 0700)});  // a folder over a folder merges, with the new mode
  auto fs = l.Build();
  EXPECT_EQ(ReadOrWhy(fs, "a"), "3");
  EXPECT_EQ(ReadOrWhy(fs, "d/x"), "x");
  for (Unpacker view : {Unpacker::kOverlay, Unpacker::kMerged}) {
    EXPECT_EQ(Listing(*fs, view), "a 0644\nd 0700\nd/x 0644\n");
  }
  EXPECT_EQ(ReadOrWhy(fs, "d"), "error: /d: not a regular file (a folder at \"d\")");
  EXPECT_EQ(ReadOrWhy(fs, "a/b"), "error: /a/b: \"a\" is not a folder");
}

TEST(ImageFs, WhiteoutsInBothUnpackers) {
  Layers l;
  l.Add({Dir("usr"), Dir("usr/lib"), File("usr/lib/a", ""), File("usr/lib/b", ""), File("usr/c", "")});
  l.Add({Whiteout("usr/lib/.wh.a"), Whiteout("usr/.wh.c"), Whiteout("usr/.wh.missing"), Whiteout("new/.wh.x")});
  auto fs = l.Build();
  ASSERT_TRUE(fs.ok()) << fs.error().message;
  for (Unpacker view : {Unpacker::kOverlay, Unpacker::kMerged}) {
    EXPECT_EQ(Listing(*fs, view), "new 0755\nusr 0755\nusr/lib 0755\nusr/lib/b 0644\n");
  }
}

TEST(ImageFs, OpaqueFolderKeepsWhatItsOwnLayerWrote) {
  Layers l;
  l.Add({Dir("etc"), File("etc/old", ""), Dir("etc/sub"), File("etc/sub/old", "")});
  // The marker after this layer's own entries, as a hand-made tar may put it.
  l.Add({Dir("etc"), File("etc/new", ""), Dir("etc/sub"), File("etc/sub/new", ""), Whiteout("etc/.wh..wh..opq")});
  auto fs = l.Build();
  ASSERT_TRUE(fs.ok()) << fs.error().message;
  for (Unpacker view : {Unpacker::kOverlay, Unpacker::kMerged}) {
    EXPECT_EQ(Listing(*fs, view), "etc 0755\netc/new 0644\netc/sub 0755\netc/sub/new 0644\n");
  }
}

TEST(ImageFs, HardlinksShareContentAndMode) {
  Layers l;
  l.Add({File("bin/su", "elf"), Hardlink("bin/su2", "bin/su", 04755), Symlink("s", "bin/su"), Hardlink("s2", "s")});
  auto fs = l.Build();
  EXPECT_EQ(ReadOrWhy(fs, "bin/su2"), "elf");
  EXPECT_EQ(Listing(*fs, Unpacker::kMerged),
            "bin 0755\nbin/su 4755\nbin/su2 4755\ns 0777 -> bin/su\ns2 0777 -> bin/su\n");
  EXPECT_EQ(ReadOrWhy(fs, "s2"), "elf");
}

TEST(ImageFs, WhatUnpackersRefuse) {
  auto refused = [](const std::vector<testing::TarEntry>& top) {
    Layers l;
    l.Add({File("etc/passwd", ""), File("x", "")});
    l.Add(top);
    std::string why = BuildError(l);
    std::string prefix = "layer " + l.digest(1) + ": ";
    return why.rfind(prefix, 0) == 0 ? why.substr(prefix.size()) : why;
  };
  EXPECT_EQ(refused({Whiteout("etc/.wh..")}),
            "entry \"etc/.wh..\": unpacked onto the layers below: an invalid "
            "whiteout name");
  EXPECT_EQ(refused({Whiteout(".wh..wh..opq")}),
            "entry \".wh..wh..opq\": unpacked onto the layers below: an opaque whiteout of the root");
  EXPECT_EQ(refused({File("x/y", "")}), "entry \"x/y\": unpacked onto the layers below: \"x\" is not a folder");
  EXPECT_EQ(refused({Hardlink("y", "nope")}),
            "entry \"y\": unpacked onto the layers below: hardlink to \"nope\": no such file");
  EXPECT_EQ(refused({Hardlink("y", "etc")}),
            "entry \"y\": unpacked onto the layers below: hardlink to \"etc\": a folder");
  EXPECT_EQ(refused({Symlink("y", "")}), "entry \"y\": unpacked onto the layers below: a symlink without a target");
  // Overlay unpackers only: a link into a lower layer, a whiteout of the layer's own entry.
  EXPECT_EQ(refused({Hardlink("y", "x")}),
            "entry \"y\": unpacked on its own: hardlink to \"x\": no such file in this layer (overlay unpackers "
            "link inside it)");
  EXPECT_EQ(refused({Hardlink("y", "etc/passwd")}),
            "entry \"y\": unpacked on its own: hardlink to \"etc/passwd\": \"etc\" does not exist in this layer "
            "(overlay unpackers link inside it)");
  EXPECT_EQ(refused({File("etc/group", ""), Whiteout("etc/.wh.group")}),
            "entry \"etc/.wh.group\": unpacked on its own: a whiteout of \"etc/group\", which this layer also writes");
}

TEST(ImageFs, Limits) {
  Layers l;
  l.Add({File("a", ""), File("b", "")});
  l.Add({File("c", ""), File(std::string(300, 'n'), "")});
  EXPECT_EQ(BuildError(l, {3, 4096}), "layer " + l.digest(1) + ": more than 3 entries in the image's layers");
  EXPECT_EQ(BuildError(l), "layer " + l.digest(1) + ": entry \"" + std::string(200, 'n') +
                               "...\": unpacked onto the layers below: a name of more than 255 bytes");
  // Short names can still lead somewhere too long, through a symlink.
  const std::string far = std::string(100, 'd') + "/" + std::string(100, 'd') + "/" + std::string(40, 'd');
  Layers deep;
  deep.Add({Symlink("l", far), File("l/xxxxxxxxxx", "")});
  EXPECT_EQ(BuildError(deep, {100, 250}), "layer " + deep.digest(0) +
                                              ": entry \"l/xxxxxxxxxx\": unpacked onto the layers below: \"" + far +
                                              "/xxxxxxxxxx\": longer than 250 bytes");
  Layers target;
  target.Add({Symlink("l", far + "/" + far)});
  EXPECT_EQ(
      BuildError(target, {100, 250}),
      "layer " + target.digest(0) + ": entry \"l\": unpacked onto the layers below: a symlink target of 485 bytes");
}

TEST(ImageFs, ReadFileRefusesWhatIsNotARegularFileOrTooLarge) {
  Layers l;
  l.Add({Device("dev/null"), File("big", std::string(2000, 'x'))});
  auto fs = l.Build();
  EXPECT_EQ(
      ReadOrWhy(fs, "dev/null"),
      "error: /dev/null: not a regular file (\"dev/null\", a device or FIFO of layer " + l.digest(0) + " entry 0)");
  auto big = fs->ReadFile("big", 1000);
  EXPECT_EQ(big.error().message, "/big: larger than 1000 bytes");
  EXPECT_EQ(big.error().kind, ErrorKind::kInvalidInput);
}

TEST(ImageFs, SetuidEntriesIncludeWhatALaterLayerDeleted) {
  Layers l;
  l.Add({Dir("usr/bin", 02755), File("usr/bin/su", "", 04755), File("./usr//bin/wall", "", 02755),
         Hardlink("usr/bin/w", "usr/bin/wall", 06755)});
  l.Add({Whiteout("usr/bin/.wh.su"), File("usr/bin/.wh.wall", "", 04755)});
  auto fs = l.Build();
  ASSERT_TRUE(fs.ok()) << fs.error().message;
  std::string got;
  for (const auto& s : fs->setuid_entries()) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", s.mode);
    got += (s.layer == l.digest(0) ? "0 " : "1 ") + s.path + " " + mode + "\n";
  }
  EXPECT_EQ(got, "0 usr/bin/su 4755\n0 usr/bin/wall 2755\n0 usr/bin/w 6755\n");
  // What is left: the link, whose chmod also made its target (now deleted) 6755.
  EXPECT_EQ(Listing(*fs, Unpacker::kOverlay), "usr 0755\nusr/bin 2755\nusr/bin/w 6755\n");
}

TEST(ImageFs, DamagedLayerIsAnIntegrityError) {
  auto store = std::make_shared<oci::MemoryStore>();
  oci::Descriptor d = store->Add(testing::Tar({File("a", "x")}), oci::kMediaTypeLayerTar);
  d.size += 1;  // the descriptor promises a byte more than the blob has
  auto fs = ImageFs::Build({std::make_shared<oci::Blob>(store, d)});
  ASSERT_FALSE(fs.ok());
  EXPECT_EQ(fs.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(fs.error().message, "layer " + d.digest.str() + ": memory: blob " + d.digest.str() +
                                    ": ends after 2048 of the 2049 bytes its descriptor names");
}

// Issue 24: a manifest naming one blob at many positions reads it once, and still applies
// it at each (a file deleted by the layer between comes back).
TEST(ImageFs, ABlobNamedAtManyPositionsIsReadOnceAndAppliedAtEach) {
  auto memory = std::make_shared<oci::MemoryStore>();
  auto counted = std::make_shared<oci::CountingStore>(*memory);
  auto add = [&](const std::vector<testing::TarEntry>& entries) {
    return std::make_shared<oci::Blob>(counted, memory->Add(testing::Tar(entries), oci::kMediaTypeLayerTar));
  };
  auto app = add({Dir("etc"), File("etc/app", "v1", 04755)});
  auto gone = add({Whiteout("etc/.wh.app")});
  std::vector<std::shared_ptr<const oci::Layer>> layers;
  for (int i = 0; i < 100; ++i) layers.push_back(app);
  layers.push_back(gone);
  layers.push_back(app);
  auto fs = ImageFs::Build(layers);
  ASSERT_TRUE(fs.ok()) << fs.error().message;
  EXPECT_EQ(counted->counts().reads, 2u);
  EXPECT_EQ(ReadOrWhy(fs, "etc/app"), "v1");
  EXPECT_EQ(fs->setuid_entries().size(), 101u);  // one per position, as a runtime unpacks them

  // The limits count every position.
  Limits few;
  few.max_entries = 150;
  EXPECT_EQ(ImageFs::Build(layers, few).error().kind, ErrorKind::kInvalidInput);
}

}  // namespace
}  // namespace imgtool::rootfs
