// UnpackDeb and the dpkg records against packages built by dpkg-deb itself, in every
// compression dpkg-deb offers, and against a real Debian package (jq). The records are
// checked by dpkg: dpkg-query reads them and dpkg --verify re-hashes the staging tree.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "fs/atomic_file.h"
#include "pkg/package.h"
#include "pkg/test_util.h"

namespace imgtool::pkg {
namespace {

using testing::Quoted;
using testing::Sh;
using testing::Write;

const char* kControl =
    "Package: demo\n"
    "Version: 1.2-3\n"
    "Architecture: all\n"
    "Maintainer: Test <test@example.com>\n"
    "Installed-Size: 20\n"
    "Description: demo package\n"
    " with a second line\n";

class DebTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = fs::TempDir::Create("pkg-deb-test-");
    ASSERT_TRUE(dir.ok());
    tmp_ = std::move(*dir);
  }
  std::string T(const std::string& rel) const { return tmp_.path() + "/" + rel; }

  // A package with a postinst, a conffile, an executable, a symlink, a hardlink and nested dirs.
  std::string BuildDemo(const std::string& compression) {
    std::string root = T("src-" + compression);
    Write(root + "/DEBIAN/control", kControl);
    Write(root + "/DEBIAN/postinst", "#!/bin/sh\nexit 0\n", 0755);
    Write(root + "/DEBIAN/conffiles", "/etc/demo.conf\n");
    Write(root + "/etc/demo.conf", "setting=1\n");
    Write(root + "/usr/bin/demo", "#!/bin/sh\necho demo\n", 0755);
    Write(root + "/usr/share/demo/a/b/c.txt", "nested file\n");
    EXPECT_EQ(::symlink("demo", (root + "/usr/bin/demo-link").c_str()), 0);
    EXPECT_EQ(::link((root + "/usr/share/demo/a/b/c.txt").c_str(), (root + "/usr/share/demo/hard.txt").c_str()), 0);
    std::string deb = T("demo-" + compression + ".deb");
    auto r = Sh("dpkg-deb --root-owner-group -Z" + compression + " --build " + Quoted(root) + " " + Quoted(deb));
    EXPECT_EQ(r.rc, 0) << r.out;
    return deb;
  }

  fs::TempDir tmp_;
};

const PackageFile* FindFile(const DebPackage& deb, const std::string& path) {
  for (const PackageFile& f : deb.files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
}

class DebCompressionTest : public DebTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(DebCompressionTest, UnpacksAndDpkgAcceptsTheRecords) {
  std::string deb_path = BuildDemo(GetParam());
  std::string root = T("root");
  ASSERT_TRUE(fs::MakeDirs(root).ok());
  auto deb = UnpackDeb(deb_path, root, UnpackLimits{});
  ASSERT_TRUE(deb.ok()) << deb.error().message;

  EXPECT_EQ(deb->name, "demo");
  EXPECT_EQ(deb->version, "1.2-3");
  EXPECT_EQ(deb->architecture, "all");
  EXPECT_EQ(deb->control + "\n", kControl);
  EXPECT_EQ(deb->maintainer_scripts, std::vector<std::string>{"postinst"});
  EXPECT_EQ(deb->conffiles, std::vector<std::string>{"/etc/demo.conf"});
  EXPECT_EQ(DpkgInfoName(*deb), "demo");
  for (const char* p :
       {"etc", "etc/demo.conf", "usr/bin/demo", "usr/bin/demo-link", "usr/share/demo/a/b", "usr/share/demo/hard.txt"}) {
    EXPECT_NE(std::find(deb->paths.begin(), deb->paths.end(), p), deb->paths.end()) << p;
  }
  EXPECT_TRUE(std::is_sorted(deb->files.begin(), deb->files.end(),
                             [](const PackageFile& a, const PackageFile& b) { return a.path < b.path; }));

  // Modes, symlink and hardlink as shipped.
  EXPECT_EQ(ModeOf(root + "/usr/bin/demo"), S_IFREG | 0755);
  EXPECT_EQ(ModeOf(root + "/etc/demo.conf"), S_IFREG | 0644);
  EXPECT_EQ(ModeOf(root + "/usr/share/demo/a/b"), S_IFDIR | 0755);
  EXPECT_EQ(ModeOf(root + "/usr/bin/demo-link"), S_IFLNK | 0777);
  char target[64] = {};
  ASSERT_EQ(::readlink((root + "/usr/bin/demo-link").c_str(), target, sizeof target - 1), 4);
  EXPECT_STREQ(target, "demo");
  struct stat a {
  }, b{};
  ASSERT_EQ(::stat((root + "/usr/share/demo/a/b/c.txt").c_str(), &a), 0);
  ASSERT_EQ(::stat((root + "/usr/share/demo/hard.txt").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(a.st_nlink, 2u);

  // Hashes: the hardlink carries its target's record; MD5 agrees with md5sum.
  const PackageFile* c = FindFile(*deb, "usr/share/demo/a/b/c.txt");
  const PackageFile* h = FindFile(*deb, "usr/share/demo/hard.txt");
  ASSERT_TRUE(c != nullptr && h != nullptr);
  EXPECT_EQ(c->sha256, oci::Digest::Of("nested file\n"));
  EXPECT_EQ(c->size, 12u);
  EXPECT_EQ(h->sha256, c->sha256);
  EXPECT_EQ(h->md5_hex, c->md5_hex);
  EXPECT_EQ(Sh("md5sum < " + Quoted(root + "/usr/share/demo/a/b/c.txt")).out.substr(0, 32), c->md5_hex);
  EXPECT_EQ(FindFile(*deb, "usr/bin/demo-link"), nullptr);  // symlinks have no file record

  // dpkg reads our records and finds the tree intact.
  std::string admin = root + "/var/lib/dpkg";
  Write(admin + "/status", DpkgStatusStanza(*deb));
  Write(admin + "/info/demo.list", DpkgList(*deb));
  Write(admin + "/info/demo.md5sums", DpkgMd5sums(*deb));
  auto w = Sh("dpkg-query --admindir " + Quoted(admin) + " -W -f '${Package} ${Version}\\n'");
  EXPECT_EQ(w.rc, 0) << w.out;
  EXPECT_EQ(w.out, "demo 1.2-3\n");
  auto l = Sh("dpkg-query --admindir " + Quoted(admin) + " -L demo");
  EXPECT_EQ(l.rc, 0) << l.out;
  EXPECT_EQ(l.out, DpkgList(*deb));
  EXPECT_NE(l.out.find("\n/usr/share/demo/hard.txt\n"), std::string::npos);
  auto v = Sh("dpkg --admindir " + Quoted(admin) + " --root " + Quoted(root) + " --verify demo");
  EXPECT_EQ(v.rc, 0) << v.out;
  EXPECT_EQ(v.out, "");

  // The check can fail: a changed byte is reported by dpkg --verify.
  Write(root + "/usr/share/demo/a/b/c.txt", "nested filE\n");
  Write(root + "/etc/demo.conf", "setting=2\n");
  auto bad = Sh("dpkg --admindir " + Quoted(admin) + " --root " + Quoted(root) + " --verify demo");
  EXPECT_NE(bad.out.find("/usr/share/demo/a/b/c.txt"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find(" c /etc/demo.conf"), std::string::npos) << bad.out;
}

INSTANTIATE_TEST_SUITE_P(AllCompressions, DebCompressionTest, ::testing::Values("gzip", "xz", "zstd", "none"));

TEST_F(DebTest, StatusStanzaShape) {
  DebPackage deb;
  deb.name = "libfoo1";
  deb.architecture = "amd64";
  deb.control = "Package: libfoo1\nMulti-Arch: same\nArchitecture: amd64\nVersion: 1";
  deb.paths = {"usr", "usr/lib", "usr/lib/libfoo.so.1"};
  deb.files = {PackageFile{"usr/lib/libfoo.so.1", oci::Digest::Of("x"), "9dd4e461268c8034f5c8564e155c67a6", 1}};
  EXPECT_EQ(DpkgStatusStanza(deb),
            "Package: libfoo1\nStatus: install ok installed\nMulti-Arch: same\nArchitecture: amd64\nVersion: 1\n\n");
  EXPECT_EQ(DpkgInfoName(deb), "libfoo1:amd64");
  EXPECT_EQ(DpkgList(deb), "/.\n/usr\n/usr/lib\n/usr/lib/libfoo.so.1\n");
  EXPECT_EQ(DpkgMd5sums(deb), "9dd4e461268c8034f5c8564e155c67a6  usr/lib/libfoo.so.1\n");
}

TEST_F(DebTest, SetuidDroppedUnlessAllowed) {
  std::string src = T("suid");
  Write(src + "/DEBIAN/control", kControl);
  Write(src + "/usr/bin/su-ish", "x", 04755);
  ASSERT_EQ(Sh("dpkg-deb --root-owner-group --build " + Quoted(src) + " " + Quoted(T("suid.deb"))).rc, 0);
  for (bool allow : {false, true}) {
    std::string root = T(allow ? "allowed" : "dropped");
    ASSERT_TRUE(fs::MakeDirs(root).ok());
    auto deb = UnpackDeb(T("suid.deb"), root, UnpackLimits{}, allow);
    ASSERT_TRUE(deb.ok()) << deb.error().message;
    EXPECT_EQ(ModeOf(root + "/usr/bin/su-ish"), S_IFREG | (allow ? 04755u : 0755u));
  }
}

// A real package from the Debian archive, fetched once into the build folder.
TEST_F(DebTest, RealDebianPackageJq) {
  std::string cache = testing::BinaryDir() + "/pkg_test_cache";
  ASSERT_TRUE(fs::MakeDirs(cache).ok());
  auto find = Sh("ls " + Quoted(cache) + "/jq_*.deb 2>/dev/null | head -1");
  if (find.out.empty()) {
    auto dl = Sh("cd " + Quoted(cache) + " && apt-get download jq");
    ASSERT_EQ(dl.rc, 0) << "apt-get download jq failed (network to the Debian archive? apt-get update?):\n" << dl.out;
    find = Sh("ls " + Quoted(cache) + "/jq_*.deb | head -1");
  }
  ASSERT_FALSE(find.out.empty()) << "no jq_*.deb in " << cache;
  std::string deb_path = find.out.substr(0, find.out.find('\n'));
  std::string root = T("jq-root");
  ASSERT_TRUE(fs::MakeDirs(root).ok());
  auto deb = UnpackDeb(deb_path, root, UnpackLimits{});
  ASSERT_TRUE(deb.ok()) << deb.error().message;
  EXPECT_EQ(deb->name, "jq");
  EXPECT_EQ(deb->version + "\n", Sh("dpkg-deb -f " + Quoted(deb_path) + " Version").out);
  EXPECT_EQ(deb->architecture + "\n", Sh("dpkg-deb -f " + Quoted(deb_path) + " Architecture").out);
  EXPECT_EQ(ModeOf(root + "/usr/bin/jq"), S_IFREG | 0755);
  // Our md5sums equal the ones the package ships (dh_md5sums's, for non-conffiles).
  auto shipped = Sh("dpkg-deb --ctrl-tarfile " + Quoted(deb_path) + " | tar -xO ./md5sums | sort");
  auto ours = DpkgMd5sums(*deb);
  EXPECT_EQ(Sh("printf '%s' " + Quoted(ours) + " | sort").out, shipped.out);
}

}  // namespace
}  // namespace imgtool::pkg
