// UnpackWheel against wheels written by Python's zipfile (good, tampered and hostile),
// and ReadInstalledWheel against the CUDA runtime wheel installed on this machine (or a
// fabricated installed tree when /usr/local/cuda is absent).
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

// mkwheel.py OUT CASE: a demo wheel, bent the way CASE says.
const char* kMakeWheel = R"PY(
import base64, csv, hashlib, io, sys, warnings, zipfile
out, case = sys.argv[1], sys.argv[2]
warnings.simplefilter("ignore")  # zipfile warns about the duplicate on purpose
di = "demo_pkg-1.0.dist-info"
files = {
    "demo_pkg/__init__.py": b"VALUE = 1\n",
    "demo_pkg/tool.sh": b"#!/bin/sh\necho tool\n",
    "demo_pkg/data/deep/x.txt": b"deep\n",
    di + "/METADATA": b"Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n\nLong description.\nName: not-this\n",
    di + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
recorded = dict(files)
if case == "missing":
    recorded["demo_pkg/gone.py"] = b"gone\n"
if case == "tampered":
    files["demo_pkg/__init__.py"] = b"VALUE = 2\n"
if case == "extra":
    files["demo_pkg/sneaky.py"] = b"import os\n"
def h(b):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
rec = io.StringIO()
w = csv.writer(rec, lineterminator="\n")
for p, b in recorded.items():
    w.writerow([p, h(b), len(b)])
w.writerow([di + "/RECORD", "", ""])
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for p, b in files.items():
        zi = zipfile.ZipInfo(p, (2020, 1, 1, 0, 0, 0))
        zi.external_attr = (0o100755 if p.endswith(".sh") else 0o100644) << 16
        z.writestr(zi, b)
    z.writestr(di + "/RECORD", rec.getvalue())
    if case == "dotdot":
        z.writestr("../x", b"x")
    if case == "absolute":
        z.writestr("/abs", b"x")
    if case == "duplicate":
        z.writestr("demo_pkg/__init__.py", b"VALUE = 3\n")
with open(out + ".record", "w") as f:
    f.write(rec.getvalue())
)PY";

class WheelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = fs::TempDir::Create("pkg-wheel-test-");
    ASSERT_TRUE(dir.ok());
    tmp_ = std::move(*dir);
    Write(tmp_.path() + "/mkwheel.py", kMakeWheel);
  }
  std::string Make(const std::string& name) {
    std::string out = tmp_.path() + "/" + name + ".whl";
    auto r = Sh("python3 " + Quoted(tmp_.path() + "/mkwheel.py") + " " + Quoted(out) + " " + name);
    EXPECT_EQ(r.rc, 0) << r.out;
    return out;
  }
  Result<WheelPackage> Unpack(const std::string& whl, UnpackLimits limits = {}) {
    std::string staging = whl + ".staging";
    EXPECT_TRUE(fs::MakeDirs(staging).ok());
    return UnpackWheel(whl, staging, limits);
  }
  fs::TempDir tmp_;
};

TEST_F(WheelTest, GoodWheel) {
  std::string whl = Make("good");
  auto wheel = Unpack(whl);
  ASSERT_TRUE(wheel.ok()) << wheel.error().message;
  EXPECT_EQ(wheel->name, "demo-pkg");  // the header's, not the body's "Name: not-this"
  EXPECT_EQ(wheel->version, "1.0");
  EXPECT_EQ(wheel->dist_info, "demo_pkg-1.0.dist-info");
  auto record = fs::ReadSmallFile(whl + ".record");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(wheel->record_digest, oci::Digest::Of(*record));
  std::vector<std::string> paths;
  for (const PackageFile& f : wheel->files) paths.push_back(f.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"demo_pkg-1.0.dist-info/METADATA", "demo_pkg-1.0.dist-info/RECORD",
                                             "demo_pkg-1.0.dist-info/WHEEL", "demo_pkg/__init__.py",
                                             "demo_pkg/data/deep/x.txt", "demo_pkg/tool.sh"}));
  EXPECT_EQ(wheel->files[3].sha256, oci::Digest::Of("VALUE = 1\n"));
  EXPECT_EQ(wheel->files[3].size, 10u);
  struct stat st {};
  ASSERT_EQ(::stat((whl + ".staging/demo_pkg/tool.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode, S_IFREG | 0755u);
  ASSERT_EQ(::stat((whl + ".staging/demo_pkg/__init__.py").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode, S_IFREG | 0644u);
  ASSERT_EQ(::stat((whl + ".staging/demo_pkg/data/deep").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode, S_IFDIR | 0755u);
}

class WheelBadTest : public WheelTest,
                     public ::testing::WithParamInterface<std::tuple<std::string, ErrorKind, std::string>> {};

TEST_P(WheelBadTest, Refused) {
  auto [name, kind, want] = GetParam();
  std::string whl = Make(name);
  auto wheel = Unpack(whl);
  ASSERT_FALSE(wheel.ok()) << name << " was accepted";
  EXPECT_EQ(wheel.error().kind, kind) << wheel.error().message;
  EXPECT_EQ(wheel.error().message, whl + ": " + want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WheelBadTest,
    ::testing::Values(
        std::make_tuple("tampered", ErrorKind::kIntegrity,
                        "\"demo_pkg/__init__.py\": sha256 mismatch: RECORD says sha256:e13df8c44af5, file is "
                        "sha256:3da6c4b35580"),
        std::make_tuple("extra", ErrorKind::kIntegrity, "\"demo_pkg/sneaky.py\": in the wheel but not in RECORD"),
        std::make_tuple("missing", ErrorKind::kIntegrity, "\"demo_pkg/gone.py\": in RECORD but not in the wheel"),
        std::make_tuple("dotdot", ErrorKind::kInvalidInput, "entry \"../x\": \"..\" path component"),
        std::make_tuple("absolute", ErrorKind::kInvalidInput, "entry \"/abs\": absolute path"),
        std::make_tuple("duplicate", ErrorKind::kInvalidInput, "entry \"demo_pkg/__init__.py\": duplicate entry")),
    [](const auto& info) { return std::get<0>(info.param); });

TEST_F(WheelTest, SizeLimit) {
  UnpackLimits limits;
  limits.max_total_bytes = 20;
  std::string whl = Make("good");
  auto wheel = Unpack(whl, limits);
  ASSERT_FALSE(wheel.ok());
  EXPECT_EQ(wheel.error().kind, ErrorKind::kInvalidInput);
  EXPECT_NE(wheel.error().message.find("wheel unpacks to more than 20 bytes"), std::string::npos)
      << wheel.error().message;
}

// Found by tests/fuzz (fuzz_wheel): libarchive can fail on a zip (here, two
// end-of-central-directory records in 46 bytes) without setting an error message; the
// NULL it returned then reached std::string and ended the process.
TEST_F(WheelTest, FailureWithoutALibarchiveMessage) {
  static const unsigned char kZip[] = {0x14, 0x00, 0x65, 0x6c, 0x6c, 0x00, 0x00, 0x01, 0x00, 0x00, 0x44, 0x50,
                                       0x4b, 0x05, 0x06, 0x00, 0x4e, 0x61, 0x6d, 0x65, 0x00, 0x00, 0x00, 0x44,
                                       0x50, 0x4b, 0x05, 0x06, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x06, 0x00,
                                       0xab, 0xff, 0xff, 0xff, 0x6d, 0x00, 0x00, 0x00, 0x00, 0x00};
  std::string whl = tmp_.path() + "/two-eocd.whl";
  Write(whl, std::string(reinterpret_cast<const char*>(kZip), sizeof kZip));
  auto wheel = Unpack(whl);
  ASSERT_FALSE(wheel.ok());
  EXPECT_EQ(wheel.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(wheel.error().message, whl + ": corrupt zip archive");
}

}  // namespace
}  // namespace imgtool::pkg
