// Sparse files in a .deb's data.tar: dpkg-deb builds the package, then its data.tar is
// rebuilt by GNU tar --sparse (dpkg-deb never writes sparse entries, but dpkg-deb -x
// extracts them with tar, holes as zeros). UnpackDeb must stage the same bytes as
// dpkg-deb -x, and the sha256/md5sums must describe those bytes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "fs/atomic_file.h"
#include "pkg/package.h"
#include "pkg/test_util.h"

namespace imgtool::pkg {
namespace {

using testing::Quoted;
using testing::Sh;
using testing::Write;

constexpr uint64_t k64MiB = 64ull << 20;

class DebSparseTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto dir = fs::TempDir::Create("pkg-sparse-");
    ASSERT_TRUE(dir.ok());
    tmp_ = std::move(*dir);
  }
  std::string T(const std::string& rel) const { return tmp_.path() + "/" + rel; }

  // holes.img: 64 MiB, all hole. mixed.bin: "head", a hole, "mid" at 1 MiB, a hole to 3 MiB.
  std::string BuildSparseDeb(const std::string& format) {
    std::string root = T("src");
    Write(root + "/DEBIAN/control",
          "Package: sparse\nVersion: 1.0-1\nArchitecture: all\nMaintainer: T <t@example.com>\n"
          "Installed-Size: 68608\nDescription: sparse files\n");
    Write(root + "/usr/share/sparse/mixed.bin", "head");
    std::string deb = T("sparse-" + format + ".deb");
    std::string d = Quoted(root + "/usr/share/sparse");
    auto r = Sh("set -e; truncate -s 64M " + d + "/holes.img; printf mid | dd of=" + d +
                "/mixed.bin bs=1 seek=1048576 conv=notrunc status=none; truncate -s 3M " + d + "/mixed.bin; " +
                "dpkg-deb --root-owner-group -Zgzip --build " + Quoted(root) + " " + Quoted(deb) + " >/dev/null; " +
                "cd " + Quoted(tmp_.path()) + "; tar --sparse --format=" + format +
                " --owner=0 --group=0 --numeric-owner --exclude=./DEBIAN -czf data.tar.gz -C src . && ar r " +
                Quoted(deb) + " data.tar.gz");
    EXPECT_EQ(r.rc, 0) << r.out;
    // The test is only worth something if the entries really are sparse.
    auto check =
        Sh("python3 -c 'import sys, tarfile; t = tarfile.open(sys.argv[1]); "
           "assert all(m.issparse() for m in t if m.name.endswith((\".img\", \".bin\")))' " +
           Quoted(T("data.tar.gz")));
    EXPECT_EQ(check.rc, 0) << check.out;
    return deb;
  }

  fs::TempDir tmp_;
};

TEST_P(DebSparseTest, HolesAreZerosAndTheHashesMatchDpkgDeb) {
  std::string deb_path = BuildSparseDeb(GetParam());
  std::string root = T("root"), ref = T("ref");
  ASSERT_TRUE(fs::MakeDirs(root).ok());
  auto deb = UnpackDeb(deb_path, root, UnpackLimits{});
  ASSERT_TRUE(deb.ok()) << deb.error().message;
  auto x = Sh("dpkg-deb -x " + Quoted(deb_path) + " " + Quoted(ref));
  ASSERT_EQ(x.rc, 0) << x.out;

  struct stat st {};
  ASSERT_EQ(::stat((root + "/usr/share/sparse/holes.img").c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), k64MiB);
  for (const char* f : {"usr/share/sparse/holes.img", "usr/share/sparse/mixed.bin"}) {
    auto same = Sh("cmp " + Quoted(root + "/" + f) + " " + Quoted(ref + "/" + f));
    EXPECT_EQ(same.rc, 0) << f << ": " << same.out;
  }
  auto zeros = Sh("head -c 64M /dev/zero | cmp - " + Quoted(root + "/usr/share/sparse/holes.img"));
  EXPECT_EQ(zeros.rc, 0) << zeros.out;

  // md5sums as dpkg would check them, and our sha256, both over dpkg-deb -x's bytes.
  auto md5 = Sh("cd " + Quoted(ref) + " && find . -type f -printf '%P\\n' | LC_ALL=C sort | xargs md5sum");
  ASSERT_EQ(md5.rc, 0) << md5.out;
  EXPECT_EQ(DpkgMd5sums(*deb), md5.out);
  for (const PackageFile& f : deb->files) {
    auto sha = Sh("sha256sum < " + Quoted(ref + "/" + f.path) + " | cut -d' ' -f1");
    EXPECT_EQ("sha256:" + sha.out, f.sha256.str() + "\n") << f.path;
  }
  ASSERT_EQ(deb->files.size(), 2u);
  EXPECT_EQ(deb->files[0].size, k64MiB);
  EXPECT_EQ(deb->files[1].size, 3ull << 20);
}

TEST_P(DebSparseTest, HolesCountAgainstTheLimitsBeforeAnythingIsWritten) {
  std::string deb_path = BuildSparseDeb(GetParam());
  std::string root = T("root");
  ASSERT_TRUE(fs::MakeDirs(root).ok());
  UnpackLimits limits;
  limits.max_total_bytes = 8 << 20;
  auto deb = UnpackDeb(deb_path, root, limits);
  ASSERT_FALSE(deb.ok());
  EXPECT_EQ(deb.error().message, deb_path +
                                     ": data.tar.gz: entry \"usr/share/sparse/holes.img\": package unpacks to more "
                                     "than 8388608 bytes");
  EXPECT_FALSE(fs::Exists(root + "/usr/share/sparse/holes.img"));
}

INSTANTIATE_TEST_SUITE_P(Formats, DebSparseTest, ::testing::Values("gnu", "posix"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace imgtool::pkg
