// Hostile .deb files: data.tar members written by Python's tarfile (which writes what it
// is told, unlike dpkg-deb), wrapped with `ar rc`. Each must be refused with
// kInvalidInput naming the package and the entry, and nothing may land outside staging.
#include <gtest/gtest.h>

#include "fs/atomic_file.h"
#include "pkg/deb_internal.h"
#include "pkg/package.h"
#include "pkg/test_util.h"

namespace imgtool::pkg {
namespace {

using testing::Quoted;
using testing::Sh;
using testing::Write;

// mkdeb.py OUT CASE: builds debian-binary, control.tar.gz and data.tar.gz for CASE.
const char* kMakeDeb = R"PY(
import io, os, subprocess, sys, tarfile
out, case = sys.argv[1], sys.argv[2]
work = os.path.dirname(out)

def tar(path, members):
    with tarfile.open(path, "w:gz", format=tarfile.GNU_FORMAT) as t:
        for name, kind, extra in members:
            ti = tarfile.TarInfo(name)
            ti.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
            ti.type = kind
            data = None
            if kind == tarfile.REGTYPE:
                data = extra.encode() if isinstance(extra, str) else extra
                ti.size = len(data)
            elif kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                ti.linkname = extra
            t.addfile(ti, io.BytesIO(data) if data is not None else None)

D, F, L, H = tarfile.DIRTYPE, tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE
cases = {
    "absolute": [("./", D, None), ("/etc/evil", F, "x")],
    "dotdot": [("./", D, None), ("./../x", F, "x")],
    "symlink": [("./", D, None), ("./a", L, "/tmp"), ("./a/evil", F, "x")],
    "hardlink_escape": [("./", D, None), ("./f", F, "x"), ("./h", H, "../../etc/passwd")],
    "hardlink_missing": [("./", D, None), ("./f", F, "x"), ("./h", H, "./etc/passwd")],
    "chardev": [("./", D, None), ("./null", tarfile.CHRTYPE, None)],
    "fifo": [("./", D, None), ("./pipe", tarfile.FIFOTYPE, None)],
    "duplicate": [("./", D, None), ("./f", F, "one"), ("./f", F, "two")],
    "big": [("./", D, None), ("./big", F, "y" * 5000)],
    "nodata": None,
}
# Control files that break Debian policy's grammar; the data is harmless.
ok = "Package: evil\nVersion: 1\nArchitecture: all\n"
controls = {
    "arch_slash": "Package: evil\nVersion: 1\nArchitecture: a/b\nMulti-Arch: same\n",
    "arch_upper": "Package: evil\nVersion: 1\nArchitecture: AMD64\n",
    "package_slash": "Package: ../../evil\nVersion: 1\nArchitecture: all\n",
    "package_upper": "Package: Evil\nVersion: 1\nArchitecture: all\n",
    "package_short": "Package: e\nVersion: 1\nArchitecture: all\n",
    "version_slash": "Package: evil\nVersion: 1.0/../../x\nArchitecture: all\n",
    "version_epoch": "Package: evil\nVersion: x:1.0\nArchitecture: all\n",
    "version_colon": "Package: evil\nVersion: 1:2:3\nArchitecture: all\n",
    "version_revision": "Package: evil\nVersion: 1.0-\nArchitecture: all\n",
    "version_space": "Package: evil\nVersion: 1.0 beta\nArchitecture: all\n",
    "multiarch_garbage": "Package: evil\nVersion: 1\nArchitecture: amd64\nMulti-Arch: same/../x\n",
    "second_stanza": ok + "\nPackage: libc6\nVersion: 99\nArchitecture: all\n",
    "duplicate_field": ok + "package: libc6\n",
    "not_a_field": ok + "no colon here\n",
}
for name in controls:
    cases[name] = [("./", D, None), ("./usr", D, None), ("./usr/x", F, "x")]
with open(os.path.join(work, "debian-binary"), "w") as f:
    f.write("2.0\n")
tar(os.path.join(work, "control.tar.gz"), [("./", D, None), ("./control", F, controls.get(case, ok))])
members = ["debian-binary", "control.tar.gz"]
if cases[case] is not None:
    tar(os.path.join(work, "data.tar.gz"), cases[case])
    members.append("data.tar.gz")
subprocess.run(["ar", "rc", out] + members, cwd=work, check=True)
)PY";

// Builds CASE with mkdeb.py and unpacks it into an empty staging folder; the error must
// be kInvalidInput "<deb>: <want>". Returns the staging folder.
std::string ExpectRefused(const fs::TempDir& tmp, const std::string& name, const std::string& want) {
  std::string work = tmp.path() + "/work";
  Write(work + "/mkdeb.py", kMakeDeb);
  std::string deb = work + "/" + name + ".deb";
  auto r = Sh("python3 " + Quoted(work + "/mkdeb.py") + " " + Quoted(deb) + " " + name);
  EXPECT_EQ(r.rc, 0) << r.out;
  std::string staging = tmp.path() + "/staging";
  EXPECT_TRUE(fs::MakeDirs(staging).ok());
  UnpackLimits limits;
  limits.max_total_bytes = 1000;
  auto got = UnpackDeb(deb, staging, limits);
  EXPECT_FALSE(got.ok()) << name << " was accepted";
  if (got.ok()) return staging;
  EXPECT_EQ(got.error().kind, ErrorKind::kInvalidInput) << got.error().message;
  EXPECT_EQ(got.error().message, deb + ": " + want);
  EXPECT_FALSE(fs::Exists("/tmp/evil"));
  return staging;
}

class DebHostileTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(DebHostileTest, Refused) {
  auto [name, want] = GetParam();
  auto tmp = fs::TempDir::Create("pkg-hostile-");
  ASSERT_TRUE(tmp.ok());
  ExpectRefused(*tmp, name, want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DebHostileTest,
    ::testing::Values(
        std::make_pair("absolute", "data.tar.gz: entry \"/etc/evil\": absolute path"),
        std::make_pair("dotdot", "data.tar.gz: entry \"./../x\": \"..\" path component"),
        std::make_pair("symlink", "data.tar.gz: entry \"a/evil\": would be written through the symlink \"a\""),
        std::make_pair("hardlink_escape",
                       "data.tar.gz: entry \"h\": hardlink target \"../../etc/passwd\": \"..\" path component"),
        std::make_pair("hardlink_missing",
                       "data.tar.gz: entry \"h\": hardlink target \"etc/passwd\" is not an "
                       "earlier regular file of the package"),
        std::make_pair("chardev", "data.tar.gz: entry \"null\": character device"),
        std::make_pair("fifo", "data.tar.gz: entry \"pipe\": fifo"),
        std::make_pair("duplicate", "data.tar.gz: entry \"f\": duplicate entry"),
        std::make_pair("big", "data.tar.gz: entry \"big\": package unpacks to more than 1000 bytes"),
        std::make_pair("nodata", "no data.tar member")),
    [](const auto& info) { return info.param.first; });

// Control fields are checked before data.tar is read: nothing is staged.
class DebControlTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(DebControlTest, RefusedBeforeAnythingIsStaged) {
  auto [name, want] = GetParam();
  auto tmp = fs::TempDir::Create("pkg-control-");
  ASSERT_TRUE(tmp.ok());
  std::string staging = ExpectRefused(*tmp, name, "control.tar.gz: control: " + want);
  auto left = Sh("ls -A " + Quoted(staging));
  EXPECT_EQ(left.out, "") << name << " staged files";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DebControlTest,
    ::testing::Values(
        std::make_pair("arch_slash", "Architecture \"a/b\": not a Debian architecture name ([a-z0-9][a-z0-9-]*)"),
        std::make_pair("arch_upper", "Architecture \"AMD64\": not a Debian architecture name ([a-z0-9][a-z0-9-]*)"),
        std::make_pair("package_slash", "Package \"../../evil\": not a Debian package name ([a-z0-9][a-z0-9+.-]+)"),
        std::make_pair("package_upper", "Package \"Evil\": not a Debian package name ([a-z0-9][a-z0-9+.-]+)"),
        std::make_pair("package_short", "Package \"e\": not a Debian package name ([a-z0-9][a-z0-9+.-]+)"),
        std::make_pair("version_slash",
                       "Version \"1.0/../../x\": the upstream version may hold only alphanumerics and \".+~-\""),
        std::make_pair("version_epoch",
                       "Version \"x:1.0\": the epoch before \":\" is not a number of at most 9 digits"),
        std::make_pair("version_colon",
                       "Version \"1:2:3\": the upstream version may hold only alphanumerics and \".+~-\""),
        std::make_pair("version_revision",
                       "Version \"1.0-\": the revision after the last \"-\" may hold only alphanumerics and \"+.~\""),
        std::make_pair("version_space",
                       "Version \"1.0 beta\": the upstream version may hold only alphanumerics and \".+~-\""),
        std::make_pair("multiarch_garbage", "Multi-Arch \"same/../x\": want no, same, foreign or allowed"),
        std::make_pair("second_stanza", "line 4: blank line (a control file holds one stanza)"),
        std::make_pair("duplicate_field", "line 4: duplicate field package"),
        std::make_pair("not_a_field", "line 4: not a \"Field: value\" line")),
    [](const auto& info) { return info.param.first; });

TEST(DebControlTest, PolicyExamplesAccepted) {
  for (const char* control : {
           "Package: libstdc++6\nVersion: 1:12.2.0-14+deb12u1\nArchitecture: amd64\nMulti-Arch: same",
           "Package: g++-12\nVersion: 2.28.9~rc1-1ubuntu0.1\nArchitecture: kfreebsd-i386\nMulti-Arch: foreign",
           "Package: python3.11\nVersion: 3.11.2\nArchitecture: all\nMulti-Arch: allowed\nDescription: x\n .\n y",
           "Package: jq\nVersion: 0~git20230601.ab12-2~bpo12+1\nArchitecture: arm64\nMulti-Arch: no",
       }) {
    Status st = internal::CheckControl(control, ParseStanza(control));
    EXPECT_TRUE(st.ok()) << control << ": " << st.error().message;
  }
}

TEST(DebMalformedTest, NotAnArArchive) {
  auto tmp = fs::TempDir::Create("pkg-hostile-");
  ASSERT_TRUE(tmp.ok());
  std::string deb = tmp->path() + "/text.deb";
  Write(deb, "this is not an ar archive, just some text that is long enough\n");
  ASSERT_TRUE(fs::MakeDirs(tmp->path() + "/s").ok());
  auto got = UnpackDeb(deb, tmp->path() + "/s", UnpackLimits{});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(got.error().message, deb + ": not an ar archive");
}

TEST(DebMalformedTest, StagingMustBeEmpty) {
  auto tmp = fs::TempDir::Create("pkg-hostile-");
  ASSERT_TRUE(tmp.ok());
  Write(tmp->path() + "/s/old", "x");
  Write(tmp->path() + "/x.deb", "!<arch>\n");
  auto got = UnpackDeb(tmp->path() + "/x.deb", tmp->path() + "/s", UnpackLimits{});
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message.find("is not empty"), std::string::npos) << got.error().message;
}

}  // namespace
}  // namespace imgtool::pkg
