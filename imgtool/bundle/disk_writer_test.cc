// The disk writer on its own (placements and headers made by hand: every entry type,
// modes, owners, times, xattrs, hardlinks, what it refuses, never writing through a
// symlink) and behind rootfs::Applier (UnpackLayers on tar layers in memory: whiteouts,
// opaque folders, hostile names that land inside the root as umoci puts them).
#include "bundle/disk_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>

#include "bundle/bundle.h"
#include "fs/atomic_file.h"
#include "rootfs/test_tar.h"

namespace imgtool::bundle {
namespace {

using archive::HeaderType;
using archive::TarHeader;
using rootfs::Placement;

// A fresh folder with a `root` to write into and a `sentinel` beside it that must stay empty.
class Disk {
 public:
  Disk() {
    auto dir = fs::TempDir::Create("disk-writer-test-");
    if (!dir.ok()) std::abort();
    dir_ = std::move(*dir);
    if (::mkdir(root().c_str(), 0755) != 0 || ::mkdir(sentinel().c_str(), 0755) != 0) std::abort();
    fd_.Reset(::open(root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  ~Disk() { (void)RemoveAt(AT_FDCWD, dir_.path()); }
  std::string root() const { return dir_.path() + "/root"; }
  std::string sentinel() const { return dir_.path() + "/sentinel"; }
  fs::UniqueFd Fd() const { return fs::UniqueFd(::dup(fd_.get())); }
  int fd() const { return fd_.get(); }
  struct stat Lstat(const std::string& path) const {
    struct stat st {};
    if (::lstat((root() + "/" + path).c_str(), &st) != 0) st.st_mode = 0;  // absent
    return st;
  }
  std::string Read(const std::string& path) const {
    auto bytes = fs::ReadSmallFile(root() + "/" + path);
    return bytes.ok() ? *bytes : "error: " + bytes.error().message;
  }
  bool SentinelEmpty() const {
    struct stat st {};
    return ::lstat(sentinel().c_str(), &st) == 0 && st.st_nlink == 2;  // "." and its parent's entry
  }

 private:
  fs::TempDir dir_;
  fs::UniqueFd fd_;
};

TarHeader Header(std::string name, HeaderType type, uint32_t mode, std::string link = "") {
  TarHeader h;
  h.name = std::move(name);
  h.type = type;
  h.mode = mode;
  h.link = std::move(link);
  h.mtime = 1700000000;
  h.mtime_nsec = 123456789;
  return h;
}

Placement Create(std::string dir, std::string name, std::string link_path = "") {
  Placement p;
  p.kind = Placement::Kind::kCreate;
  p.dir = std::move(dir);
  p.name = std::move(name);
  p.link_path = std::move(link_path);
  return p;
}

// Content as blocks at offsets; a gap between them is a hole.
archive::ReadContent Blocks(const std::vector<std::pair<uint64_t, std::string>>& blocks) {
  return [blocks](const archive::ContentBlock& block) -> Status {
    for (const auto& [offset, data] : blocks) IMGTOOL_TRY(block(offset, data.data(), data.size()));
    return Status::Ok();
  };
}
const archive::ReadContent kNoContent = [](const archive::ContentBlock&) { return Status::Ok(); };

// An Applier with no layers: what Write asks of it only for an opaque folder.
const rootfs::Applier& NoTree() {
  static const rootfs::Applier* empty = new rootfs::Applier({});
  return *empty;
}

std::string WriteError(DiskWriter& w, const Placement& p, const TarHeader& h,
                       const archive::ReadContent& read = kNoContent) {
  Status st = w.Write(p, h, read, NoTree());
  return st.ok() ? "written" : st.error().message;
}

TEST(DiskWriter, WritesEveryEntryType) {
  Disk d;
  DiskWriter w(d.Fd(), {});
  ASSERT_EQ(WriteError(w, Create("", "etc"), Header("etc", HeaderType::kDir, 0755)), "written");
  TarHeader file = Header("etc/data", HeaderType::kFile, 0640);
  file.size = 8192 + 5;
  ASSERT_EQ(WriteError(w, Create("etc", "data"), file, Blocks({{0, "head"}, {8192, "tail!"}})), "written");
  ASSERT_EQ(WriteError(w, Create("etc", "link"), Header("etc/link", HeaderType::kSymlink, 0777, "data")), "written");
  ASSERT_EQ(WriteError(w, Create("", "hard", "etc/data"), Header("hard", HeaderType::kHardlink, 0640, "etc/data")),
            "written");
  TarHeader fifo = Header("run/fifo", HeaderType::kOther, 0620);
  fifo.special = S_IFIFO;
  ASSERT_EQ(WriteError(w, Create("run", "fifo"), fifo), "written");  // "run" made as a parent
  ASSERT_TRUE(w.Finish().ok());

  EXPECT_TRUE(S_ISDIR(d.Lstat("etc").st_mode));
  EXPECT_TRUE(S_ISDIR(d.Lstat("run").st_mode));
  struct stat data = d.Lstat("etc/data");
  ASSERT_TRUE(S_ISREG(data.st_mode));
  EXPECT_EQ(data.st_size, 8192 + 5);
  EXPECT_EQ(d.Read("etc/data"), "head" + std::string(8188, '\0') + "tail!");
  EXPECT_EQ(w.stats().bytes, 9u);  // the hole is not written
  EXPECT_TRUE(S_ISLNK(d.Lstat("etc/link").st_mode));
  char target[16] = {};
  ASSERT_EQ(::readlink((d.root() + "/etc/link").c_str(), target, sizeof target - 1), 4);
  EXPECT_STREQ(target, "data");
  EXPECT_EQ(d.Lstat("hard").st_ino, data.st_ino);
  EXPECT_EQ(d.Lstat("hard").st_nlink, 2u);
  EXPECT_TRUE(S_ISFIFO(d.Lstat("run/fifo").st_mode));
}

TEST(DiskWriter, ModesAndTimesAreTheHeadersWhateverTheUmask) {
  Disk d;
  const mode_t old = ::umask(0077);
  DiskWriter w(d.Fd(), {});
  ASSERT_EQ(WriteError(w, Create("", "ro"), Header("ro", HeaderType::kDir, 0555)), "written");
  // A read-only folder still takes its children: folders are 0700 until Finish.
  TarHeader tool = Header("ro/tool", HeaderType::kFile, 04755);
  ASSERT_EQ(WriteError(w, Create("ro", "tool"), tool), "written");
  TarHeader fifo = Header("ro/fifo", HeaderType::kOther, 0666);
  fifo.special = S_IFIFO;
  ASSERT_EQ(WriteError(w, Create("ro", "fifo"), fifo), "written");
  ASSERT_EQ(WriteError(w, Create("ro", "sym"), Header("ro/sym", HeaderType::kSymlink, 0777, "tool")), "written");
  EXPECT_EQ(d.Lstat("ro").st_mode & 07777, 0700u);  // until Finish
  ASSERT_TRUE(w.Finish().ok());
  ::umask(old);

  EXPECT_EQ(d.Lstat("ro").st_mode & 07777, 0555u);
  EXPECT_EQ(d.Lstat("ro/tool").st_mode & 07777, 04755u);
  EXPECT_EQ(d.Lstat("ro/fifo").st_mode & 07777, 0666u);
  for (const char* path : {"ro", "ro/tool", "ro/fifo", "ro/sym"}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(d.Lstat(path).st_mtim.tv_sec, 1700000000);
    EXPECT_EQ(d.Lstat(path).st_mtim.tv_nsec, 123456789);
  }
}

TEST(DiskWriter, AFolderMadeOnlyAsAParentIsThe0755OfMkdirP) {
  Disk d;
  DiskWriter w(d.Fd(), {});
  ASSERT_EQ(WriteError(w, Create("a/b", "f"), Header("a/b/f", HeaderType::kFile, 0644)), "written");
  ASSERT_TRUE(w.Finish().ok());
  EXPECT_EQ(d.Lstat("a").st_mode & 07777, 0755u);
  EXPECT_EQ(d.Lstat("a/b").st_mode & 07777, 0755u);
  EXPECT_EQ(d.Lstat("a/b").st_uid, ::geteuid());
}

TEST(DiskWriter, OwnersAreTheHeadersWithChownAndTheUsersWithout) {
  TarHeader dir = Header("d", HeaderType::kDir, 0750);
  TarHeader tool = Header("d/tool", HeaderType::kFile, 06755);  // chown clears setuid: chmod comes after
  TarHeader sym = Header("d/sym", HeaderType::kSymlink, 0777, "tool");
  for (TarHeader* h : {&dir, &tool, &sym}) h->uid = 10001, h->gid = 10002;
  auto unpack = [&](Disk& d, bool chown) {
    DiskWriter w(d.Fd(), WriterOptions{chown});
    EXPECT_EQ(WriteError(w, Create("", "d"), dir), "written");
    EXPECT_EQ(WriteError(w, Create("d", "tool"), tool), "written");
    EXPECT_EQ(WriteError(w, Create("d", "sym"), sym), "written");
    EXPECT_TRUE(w.Finish().ok());
  };
  Disk mine;
  unpack(mine, /*chown=*/false);
  for (const char* path : {"d", "d/tool", "d/sym"}) {
    EXPECT_EQ(mine.Lstat(path).st_uid, ::geteuid()) << path;
    EXPECT_EQ(mine.Lstat(path).st_gid, ::getegid()) << path;
  }
  EXPECT_EQ(mine.Lstat("d/tool").st_mode & 07777, 06755u);
  if (::geteuid() != 0) GTEST_SKIP() << "chown to other owners needs root; the rootless half ran";
  Disk theirs;
  unpack(theirs, /*chown=*/true);
  for (const char* path : {"d", "d/tool", "d/sym"}) {
    EXPECT_EQ(theirs.Lstat(path).st_uid, 10001u) << path;
    EXPECT_EQ(theirs.Lstat(path).st_gid, 10002u) << path;
  }
  EXPECT_EQ(theirs.Lstat("d/tool").st_mode & 07777, 06755u);
  EXPECT_EQ(theirs.Lstat("d").st_mode & 07777, 0750u);
}

TEST(DiskWriter, ASymlinkWhereTheTreeHasAFolderIsAnErrorNeverFollowed) {
  Disk d;
  ASSERT_EQ(::symlink(d.sentinel().c_str(), (d.root() + "/etc").c_str()), 0);
  ASSERT_EQ(::symlink("../sentinel", (d.root() + "/up").c_str()), 0);
  DiskWriter w(d.Fd(), {});
  EXPECT_EQ(WriteError(w, Create("etc", "passwd"), Header("etc/passwd", HeaderType::kFile, 0644)),
            "\"etc\" is not a folder on disk, though the tree has one");
  EXPECT_EQ(WriteError(w, Create("up/x", "f"), Header("up/x/f", HeaderType::kFile, 0644)),
            "\"up\" is not a folder on disk, though the tree has one");
  // A file on the way is refused the same way.
  ASSERT_TRUE(fs::WriteFileAtomic(d.root() + "/plain", "x").ok());
  EXPECT_EQ(WriteError(w, Create("plain", "f"), Header("plain/f", HeaderType::kFile, 0644)),
            "\"plain\" is not a folder on disk, though the tree has one");
  EXPECT_TRUE(d.SentinelEmpty());
}

TEST(DiskWriter, ANameAlreadyThereIsReplacedNeverWrittenThrough) {
  Disk d;
  const std::string outside = d.sentinel() + "/target";
  ASSERT_TRUE(fs::WriteFileAtomic(outside, "host").ok());
  ASSERT_EQ(::symlink(outside.c_str(), (d.root() + "/f").c_str()), 0);
  ASSERT_EQ(::symlink(outside.c_str(), (d.root() + "/h").c_str()), 0);
  ASSERT_EQ(::mkfifo((d.root() + "/p").c_str(), 0600), 0);  // opened without O_EXCL, it would block
  ASSERT_EQ(::mkdir((d.root() + "/dir").c_str(), 0700), 0);
  ASSERT_TRUE(fs::WriteFileAtomic(d.root() + "/dir/old", "old").ok());
  DiskWriter w(d.Fd(), {});
  TarHeader f = Header("f", HeaderType::kFile, 0600);
  f.size = 3;
  ASSERT_EQ(WriteError(w, Create("", "f"), f, Blocks({{0, "new"}})), "written");
  ASSERT_EQ(WriteError(w, Create("", "p"), f, Blocks({{0, "new"}})), "written");
  ASSERT_EQ(WriteError(w, Create("", "dir"), f, Blocks({{0, "new"}})), "written");
  ASSERT_EQ(WriteError(w, Create("", "h", "f"), Header("h", HeaderType::kHardlink, 0600, "f")), "written");
  ASSERT_TRUE(w.Finish().ok());
  EXPECT_EQ(d.Read("f"), "new");
  EXPECT_EQ(d.Read("p"), "new");
  EXPECT_EQ(d.Read("dir"), "new");
  EXPECT_EQ(d.Lstat("h").st_ino, d.Lstat("f").st_ino);
  auto host = fs::ReadSmallFile(outside);
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(*host, "host");
  struct stat st {};
  ASSERT_EQ(::stat(outside.c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST(DiskWriter, AHardlinkSharesTheInodeAndTakesItsHeadersMode) {
  Disk d;
  DiskWriter w(d.Fd(), {});
  TarHeader f = Header("bin/tool", HeaderType::kFile, 0755);
  f.size = 2;
  ASSERT_EQ(WriteError(w, Create("bin", "tool"), f, Blocks({{0, "ok"}})), "written");
  ASSERT_EQ(
      WriteError(w, Create("sbin", "tool", "bin/tool"), Header("sbin/tool", HeaderType::kHardlink, 0700, "bin/tool")),
      "written");
  // A hardlink whose target's folder is a symlink on disk: refused, not followed.
  ASSERT_EQ(::symlink(d.sentinel().c_str(), (d.root() + "/lnk").c_str()), 0);
  EXPECT_EQ(WriteError(w, Create("", "evil", "lnk/x"), Header("evil", HeaderType::kHardlink, 0644, "lnk/x")),
            "\"lnk\" is not a folder on disk, though the tree has one");
  EXPECT_EQ(WriteError(w, Create("", "none", "bin/gone"), Header("none", HeaderType::kHardlink, 0644, "bin/gone")),
            "making hardlink: No such file or directory");
  ASSERT_TRUE(w.Finish().ok());
  EXPECT_EQ(d.Lstat("sbin/tool").st_ino, d.Lstat("bin/tool").st_ino);
  EXPECT_EQ(d.Lstat("bin/tool").st_nlink, 2u);
  EXPECT_EQ(d.Lstat("bin/tool").st_mode & 07777, 0700u);  // one inode: containerd's chmod after link
  EXPECT_EQ(d.Read("sbin/tool"), "ok");
  EXPECT_TRUE(d.SentinelEmpty());
}

TEST(DiskWriter, DevicesAndSocketsAreRefused) {
  Disk d;
  DiskWriter w(d.Fd(), {});
  for (auto [kind, what] : {std::pair{S_IFCHR, "a character device"}, std::pair{S_IFBLK, "a block device"},
                            std::pair{S_IFSOCK, "a socket"}}) {
    TarHeader h = Header("dev/x", HeaderType::kOther, 0600);
    h.special = kind;
    Status st = w.Write(Create("dev", "x"), h, kNoContent, NoTree());
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().kind, ErrorKind::kInvalidInput);
    EXPECT_EQ(st.error().message, std::string(what) + ": unpack makes no device nodes or sockets");
  }
  EXPECT_EQ(d.Lstat("dev/x").st_mode, 0u);
}

// A user.* xattr lands on files and folders; where the filesystem takes none, rootless
// skips and counts it (as umoci --rootless), and as root (chown) it is an error.
TEST(DiskWriter, XattrsAreSetOrCountedWhenTheFilesystemTakesNone) {
  Disk d;
  const bool supported = ::setxattr(d.root().c_str(), "user.probe", "1", 1, 0) == 0;
  DiskWriter w(d.Fd(), {});
  TarHeader dir = Header("d", HeaderType::kDir, 0755);
  dir.xattrs = {{"user.test", "folder"}};
  TarHeader file = Header("d/f", HeaderType::kFile, 0644);
  file.xattrs = {{"user.test", "file value"}, {"user.empty", ""}};
  ASSERT_EQ(WriteError(w, Create("", "d"), dir), "written");
  ASSERT_EQ(WriteError(w, Create("d", "f"), file), "written");
  ASSERT_TRUE(w.Finish().ok());
  auto get = [&](const std::string& path, const char* name) {
    char value[64] = {};
    ssize_t n = ::lgetxattr((d.root() + "/" + path).c_str(), name, value, sizeof value);
    return n < 0 ? std::string("none: ") + std::strerror(errno) : std::string(value, static_cast<size_t>(n));
  };
  if (supported) {
    EXPECT_EQ(get("d", "user.test"), "folder");
    EXPECT_EQ(get("d/f", "user.test"), "file value");
    EXPECT_EQ(get("d/f", "user.empty"), "");
    EXPECT_EQ(w.stats().xattrs_skipped, 0u);
  } else {
    EXPECT_EQ(w.stats().xattrs_skipped, 3u);
  }
  if (::geteuid() != 0) return;
  // trusted.* is root's only: as root it is set (or, refused by the filesystem, an error).
  Disk root;
  DiskWriter as_root(root.Fd(), WriterOptions{true});
  TarHeader t = Header("t", HeaderType::kFile, 0644);
  t.xattrs = {{"trusted.test", "x"}};
  const std::string got = WriteError(as_root, Create("", "t"), t);
  if (::setxattr(root.root().c_str(), "trusted.probe", "1", 1, 0) == 0) {
    EXPECT_EQ(got, "written");
  } else {
    EXPECT_NE(got.find("setting xattr \"trusted.test\""), std::string::npos) << got;
  }
}

TEST(DiskWriter, RemoveAtTakesAWholeTreeWithReadOnlyFoldersAndFollowsNothing) {
  Disk d;
  const std::string tree = d.root() + "/tree";
  ASSERT_EQ(::mkdir(tree.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((tree + "/ro").c_str(), 0755), 0);
  ASSERT_TRUE(fs::WriteFileAtomic(tree + "/ro/f", "x").ok());
  ASSERT_TRUE(fs::WriteFileAtomic(d.sentinel() + "/keep", "x").ok());
  ASSERT_EQ(::symlink(d.sentinel().c_str(), (tree + "/ro/out").c_str()), 0);
  ASSERT_EQ(::chmod((tree + "/ro").c_str(), 0), 0);
  ASSERT_TRUE(RemoveAt(d.fd(), "tree").ok());
  EXPECT_EQ(d.Lstat("tree").st_mode, 0u);
  EXPECT_TRUE(fs::ReadSmallFile(d.sentinel() + "/keep").ok());
  EXPECT_TRUE(RemoveAt(d.fd(), "tree").ok());  // already gone: success
}

// ---- behind the Applier: tar layers in memory through UnpackLayers ----

using rootfs::testing::Dir;
using rootfs::testing::File;
using rootfs::testing::Hardlink;
using rootfs::testing::Symlink;
using rootfs::testing::Whiteout;

std::string Unpack(const Disk& d, const std::vector<std::vector<rootfs::testing::TarEntry>>& layers) {
  auto store = std::make_shared<oci::MemoryStore>();
  std::vector<std::shared_ptr<const oci::Layer>> blobs;
  for (const auto& entries : layers) blobs.push_back(rootfs::testing::AddLayer(store, entries));
  WriterStats stats;
  auto fs = UnpackLayers(blobs, d.fd(), {}, &stats);
  return fs.ok() ? "unpacked" : fs.error().message;
}

TEST(UnpackLayers, WhiteoutsAndOpaqueFoldersRemoveWhatTheMergedViewRemoves) {
  Disk d;
  ASSERT_EQ(Unpack(d, {{Dir("etc"), File("etc/a", "1"), File("etc/b", "2"), Dir("opt"), Dir("opt/x"),
                        File("opt/x/y", "3"), File("keep", "4")},
                       {Whiteout("etc/.wh.a"), Whiteout("opt/.wh..wh..opq"), File("opt/new", "5"), Whiteout(".wh.keep"),
                        File("keep", "again")}}),
            "unpacked");
  EXPECT_EQ(d.Lstat("etc/a").st_mode, 0u);
  EXPECT_EQ(d.Read("etc/b"), "2");
  EXPECT_EQ(d.Lstat("opt/x").st_mode, 0u);
  EXPECT_EQ(d.Read("opt/new"), "5");
  EXPECT_EQ(d.Read("keep"), "again");
  EXPECT_EQ(d.Lstat(".wh.keep").st_mode, 0u);
}

TEST(UnpackLayers, HostileNamesLandInsideTheRootWhereUmociPutsThem) {
  Disk d;
  ASSERT_EQ(Unpack(d, {{File("../../escaped", "a"), Symlink("evil", d.sentinel()), File("evil/pwned", "b"),
                        Symlink("up", "../../../.."), File("up/upfile", "c"), Hardlink("uplink", "../../upfile"),
                        Dir("d"), Symlink("d/back", ".."), File("d/back/d/back/twice", "e")}}),
            "unpacked");
  EXPECT_EQ(d.Read("escaped"), "a");
  EXPECT_EQ(d.Read(d.sentinel().substr(1) + "/pwned"), "b");
  EXPECT_EQ(d.Read("upfile"), "c");
  EXPECT_EQ(d.Lstat("uplink").st_ino, d.Lstat("upfile").st_ino);
  EXPECT_EQ(d.Read("twice"), "e");
  EXPECT_TRUE(S_ISLNK(d.Lstat("evil").st_mode));
  EXPECT_TRUE(d.SentinelEmpty());
}

TEST(UnpackLayers, AFolderRemovedAndMadeAgainIsNotTheOldOne) {
  // The writer keeps the last folder open: a whiteout must drop it.
  Disk d;
  ASSERT_EQ(Unpack(d, {{Dir("a"), File("a/old", "1")}, {Whiteout(".wh.a"), Dir("a", 0700), File("a/new", "2")}}),
            "unpacked");
  EXPECT_EQ(d.Lstat("a/old").st_mode, 0u);
  EXPECT_EQ(d.Read("a/new"), "2");
  EXPECT_EQ(d.Lstat("a").st_mode & 07777, 0700u);
}

TEST(UnpackLayers, RefusalsComeFromTheApplierWithTheLayerAndEntry) {
  Disk d;
  const std::string got = Unpack(d, {{Symlink("l1", "l2"), Symlink("l2", "l1"), File("l1/x", "")}});
  EXPECT_NE(got.find("too many levels of symbolic links"), std::string::npos) << got;
  EXPECT_NE(got.find("entry \"l1/x\""), std::string::npos) << got;
  EXPECT_TRUE(d.SentinelEmpty());
}

}  // namespace
}  // namespace imgtool::bundle
