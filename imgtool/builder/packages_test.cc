// Package files that change between their check and their use (issue 24, class 1). A
// test hook fires once the file is opened and, for a wheel, once it is hashed; there the
// test renames another package over it, or rewrites it in place, as anyone who can write
// the spec's folder or the download cache could. The staged content must be the pinned
// one, or the stage must fail with kIntegrity (exit 4) and leave no staging folder.
#include "builder/packages.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "archive/layer.h"
#include "builder/fetch.h"
#include "fs/atomic_file.h"
#include "pkg/test_util.h"

namespace imgtool::build {
namespace {

using pkg::testing::Quoted;
using pkg::testing::Sh;
using pkg::testing::Write;

// Same name, version and size; only usr/share/alpha/msg differs ("pinned!" or "HOSTILE").
const char* kMakeWheel = R"PY(
import base64, hashlib, sys, zipfile
out, msg = sys.argv[1], sys.argv[2].encode()
di = "alpha-1.0.dist-info"
files = {"alpha/msg": msg, di + "/METADATA": b"Metadata-Version: 2.1\nName: alpha\nVersion: 1.0\n\n"}
h = lambda b: "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
files[di + "/RECORD"] = "".join(f"{p},{h(b)},{len(b)}\n" for p, b in files.items()).encode() + f"{di}/RECORD,,\n".encode()
with zipfile.ZipFile(out, "w") as z:
    for p, b in files.items():
        z.writestr(zipfile.ZipInfo(p, (2020, 1, 1, 0, 0, 0)), b)
)PY";

class PackageFileRace : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = fs::TempDir::Create("build-pkg-race-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
  }
  void TearDown() override { SetPackageFileHookForTest(nullptr); }
  std::string T(const std::string& rel) const { return dir_.path() + "/" + rel; }

  std::string Deb(const std::string& file, const std::string& msg) {
    std::string root = T("src-" + file);
    Write(root + "/DEBIAN/control",
          "Package: alpha\nVersion: 1.0-1\nArchitecture: all\nMaintainer: T <t@example.com>\nDescription: d\n");
    Write(root + "/usr/share/alpha/msg", msg);
    std::string out = T(file);
    auto r = Sh("dpkg-deb --root-owner-group -Znone --build " + Quoted(root) + " " + Quoted(out));
    EXPECT_EQ(r.rc, 0) << r.out;
    return out;
  }
  std::string Wheel(const std::string& file, const std::string& msg) {
    Write(T("mkwheel.py"), kMakeWheel);
    std::string out = T(file);
    auto r = Sh("python3 " + Quoted(T("mkwheel.py")) + " " + Quoted(out) + " " + Quoted(msg));
    EXPECT_EQ(r.rc, 0) << r.out;
    return out;
  }
  PackageSpec Spec(PackageKind kind, const std::string& path) {
    PackageSpec p;
    p.kind = kind;
    p.src = path;
    p.given = fs::BaseName(path);
    p.sha256 = *oci::Digest::Parse("sha256:" + Sh("sha256sum " + Quoted(path) + " | cut -c1-64").out.substr(0, 64));
    p.name = "alpha";
    p.version = kind == PackageKind::kDeb ? "1.0-1" : "1.0";
    p.where = "$.layers[0].pkg";
    return p;
  }
  std::string Staged(const StagedPackage& s, const std::string& rel) {
    auto text = fs::ReadSmallFile(s.staging->path() + "/" + rel);
    return text.ok() ? *text : "(" + text.error().message + ")";
  }
  // Staging folders left in the parent (a failed stage must leave none).
  int StagingLeft() {
    int n = 0;
    DIR* d = ::opendir(T("staging").c_str());
    if (d == nullptr) return 0;
    while (dirent* e = ::readdir(d)) n += std::string(e->d_name).rfind("imgtool-pkg-", 0) == 0;
    ::closedir(d);
    return n;
  }
  static void RenameOver(const std::string& from, const std::string& to) {
    ASSERT_EQ(::rename(from.c_str(), to.c_str()), 0);
  }
  // Same inode, other bytes (the packages are the same size).
  static void RewriteInPlace(const std::string& path, const std::string& from) {
    auto bytes = fs::ReadSmallFile(from);
    ASSERT_TRUE(bytes.ok());
    std::fstream(path, std::ios::binary | std::ios::in | std::ios::out) << *bytes;
  }

  fs::TempDir dir_;
};

TEST_F(PackageFileRace, ADebRenamedOverOnceOpenedIsUnpackedAsPinned) {
  std::string deb = Deb("alpha.deb", "pinned!"), hostile = Deb("hostile.deb", "HOSTILE");
  PackageSpec p = Spec(PackageKind::kDeb, deb);
  SetPackageFileHookForTest([&](const PackageSpec&, PackageFileStage) { RenameOver(hostile, deb); });
  auto s = StagePackage(p, T("staging"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(Staged(*s, "usr/share/alpha/msg"), "pinned!");
  EXPECT_EQ(s->record.sha256, p.sha256);
  EXPECT_EQ(s->staged_digests.at("usr/share/alpha/msg"), oci::Digest::Of("pinned!"));
}

TEST_F(PackageFileRace, ADebRewrittenInPlaceOnceOpenedIsRefused) {
  std::string deb = Deb("alpha.deb", "pinned!"), hostile = Deb("hostile.deb", "HOSTILE");
  ASSERT_EQ(Sh("stat -c %s " + Quoted(deb)).out, Sh("stat -c %s " + Quoted(hostile)).out);
  PackageSpec p = Spec(PackageKind::kDeb, deb);
  oci::Digest hostile_digest = Spec(PackageKind::kDeb, hostile).sha256;
  SetPackageFileHookForTest([&](const PackageSpec&, PackageFileStage) { RewriteInPlace(deb, hostile); });
  auto s = StagePackage(p, T("staging"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(s.error().message, "$.layers[0].pkg.sha256: alpha.deb: the spec pins " + p.sha256.str() +
                                   " but the file is " + hostile_digest.str());
  EXPECT_EQ(StagingLeft(), 0);
}

TEST_F(PackageFileRace, AWheelRenamedOverOnceOpenedOrHashedIsUnpackedAsPinned) {
  for (PackageFileStage when : {PackageFileStage::kOpened, PackageFileStage::kHashed}) {
    std::string whl = Wheel("alpha-1.0-py3-none-any.whl", "pinned!"), hostile = Wheel("hostile.whl", "HOSTILE");
    PackageSpec p = Spec(PackageKind::kWheel, whl);
    SetPackageFileHookForTest([&](const PackageSpec&, PackageFileStage at) {
      if (at == when) RenameOver(hostile, whl);
    });
    auto s = StagePackage(p, T("staging"));
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(Staged(*s, "alpha/msg"), "pinned!") << static_cast<int>(when);
    EXPECT_EQ(s->record.sha256, p.sha256);
  }
}

// A wheel that others can write, rewritten in place after it was hashed (same inode, same
// size): the zip reader reads the private copy made while hashing.
TEST_F(PackageFileRace, AWheelOthersCanWriteRewrittenOnceHashedIsUnpackedAsHashed) {
  std::string whl = Wheel("alpha-1.0-py3-none-any.whl", "pinned!"), hostile = Wheel("hostile.whl", "HOSTILE");
  ASSERT_EQ(::chmod(whl.c_str(), 0666), 0);
  PackageSpec p = Spec(PackageKind::kWheel, whl);
  SetPackageFileHookForTest([&](const PackageSpec&, PackageFileStage at) {
    if (at == PackageFileStage::kHashed) RewriteInPlace(whl, hostile);
  });
  auto s = StagePackage(p, T("staging"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(Staged(*s, "alpha/msg"), "pinned!");
  EXPECT_EQ(*fs::ReadSmallFile(whl), *fs::ReadSmallFile(hostile)) << "the rewrite did happen";
}

// The download cache's entry replaced by a symlink to a 0600 key after fetch hashed it:
// the stage reads the descriptor fetch hashed, never the cache's name again.
TEST_F(PackageFileRace, ADownloadIsReadThroughTheDescriptorFetchHashed) {
  std::string deb = Deb("alpha.deb", "pinned!");
  PackageSpec p = Spec(PackageKind::kDeb, deb);
  FetchOptions fetch;
  fetch.cache_dir = T("downloads");
  for (bool cached : {false, true}) {
    auto f = FetchPinned("file://" + deb, p.sha256, fetch);
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(f->cached, cached);
    p.src = f->path;
    p.fetched = f->file;
    std::string key = T("id_key");
    Write(key, "SECRET-KEY-BYTES", 0600);
    ASSERT_EQ(::unlink(f->path.c_str()), 0);
    ASSERT_EQ(::symlink(key.c_str(), f->path.c_str()), 0);
    auto s = StagePackage(p, T("staging"));
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(Staged(*s, "usr/share/alpha/msg"), "pinned!");
    EXPECT_TRUE(CheckPackageFile(p).ok());
    ASSERT_EQ(::unlink(f->path.c_str()), 0);
    ASSERT_EQ(::link(deb.c_str(), f->path.c_str()), 0);  // the next round finds it cached
  }
}

// An installed wheel's files are hashed against RECORD while planning and read again by
// the layer: each entry carries RECORD's digest, so a file rewritten in between fails
// the layer (exit 4) instead of entering it unchecked.
TEST_F(PackageFileRace, AnInstalledWheelFileRewrittenAfterItsCheckFailsTheLayer) {
  std::string site = T("site");
  Write(site + "/alpha/msg", "pinned!");
  Write(site + "/alpha-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: alpha\nVersion: 1.0\n\n");
  std::string b64 = Sh("python3 -c \"import base64, hashlib; "
                       "print(base64.urlsafe_b64encode(hashlib.sha256(b'pinned!').digest()).rstrip(b'=').decode())\"")
                        .out.substr(0, 43);
  Write(site + "/alpha-1.0.dist-info/RECORD", "alpha/msg,sha256=" + b64 + ",7\nalpha-1.0.dist-info/RECORD,,\n");
  PackageSpec p;
  p.kind = PackageKind::kInstalledWheel;
  p.dist_info = site + "/alpha-1.0.dist-info";
  p.site_root = site;
  p.name = "alpha";
  p.version = "1.0";
  p.prefix = "opt/site";
  p.where = "$.layers[0].installed_wheels[0]";
  auto s = StagePackage(p, "");
  ASSERT_TRUE(s.ok()) << s.error().message;
  std::vector<archive::Entry> entries;
  for (const auto& e : s->extra) {
    if (e.path == "opt/site/alpha/msg") entries.push_back(e);
  }
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].expect_sha256, oci::Digest::Of("pinned!"));
  Write(site + "/alpha/msg", "HOSTILE");
  fs::AtomicFile out;
  ASSERT_TRUE(out.Open(T("layer.blob")).ok());
  auto layer = archive::WriteLayer(entries, archive::LayerOptions{}, out);
  ASSERT_FALSE(layer.ok());
  EXPECT_EQ(layer.error().kind, ErrorKind::kIntegrity);
  EXPECT_NE(layer.error().message.find(site + "/alpha/msg: changed while building"), std::string::npos)
      << layer.error().message;
}

}  // namespace
}  // namespace imgtool::build
