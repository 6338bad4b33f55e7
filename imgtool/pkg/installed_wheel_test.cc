// ReadInstalledWheel: the real CUDA wheels installed flattened under /usr/local/cuda
// (RECORD says "nvidia/cu13/lib/x", the file is at /usr/local/cuda/lib/x), and a
// fabricated installed tree that exercises every rule, including the failures.
#include <gtest/gtest.h>

#include <algorithm>

#include "fs/atomic_file.h"
#include "pkg/package.h"
#include "pkg/test_util.h"

namespace imgtool::pkg {
namespace {

using testing::Quoted;
using testing::Sh;
using testing::Write;

const char* kCudaRoot = "/usr/local/cuda";
const char* kRuntimeDistInfo = "/usr/local/cuda/dist-info/nvidia_cuda_runtime-13.0.96.dist-info";

TEST(InstalledWheelTest, CudaRuntimeFlattened) {
  if (!fs::Exists(kRuntimeDistInfo)) {
    GTEST_SKIP() << kRuntimeDistInfo << " absent; FabricatedTree covers the same rules";
  }
  auto got = ReadInstalledWheel(kRuntimeDistInfo, kCudaRoot, "nvidia/cu13/");
  ASSERT_TRUE(got.ok()) << got.error().message;
  const WheelPackage& w = got->wheel;
  EXPECT_EQ(w.name, "nvidia-cuda-runtime");
  EXPECT_EQ(w.version, "13.0.96");
  EXPECT_EQ(w.dist_info, "nvidia_cuda_runtime-13.0.96.dist-info");
  auto record = fs::ReadSmallFile(std::string(kRuntimeDistInfo) + "/RECORD");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(w.record_digest, oci::Digest::Of(*record));
  EXPECT_TRUE(got->skipped.empty());  // every RECORD file of this wheel is on disk
  ASSERT_EQ(w.files.size(), got->host_paths.size());
  EXPECT_EQ(w.files.size(), 102u);  // = RECORD rows
  auto it = std::find_if(w.files.begin(), w.files.end(),
                         [](const PackageFile& f) { return f.path == "nvidia/cu13/lib/libcudart.so.13"; });
  ASSERT_NE(it, w.files.end());
  size_t i = static_cast<size_t>(it - w.files.begin());
  EXPECT_EQ(got->host_paths[i], "/usr/local/cuda/lib/libcudart.so.13");
  auto digest = oci::DigestFile("/usr/local/cuda/lib/libcudart.so.13");
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(it->sha256, digest->digest);
  EXPECT_EQ(it->size, 704288u);
  auto meta = std::find_if(w.files.begin(), w.files.end(), [](const PackageFile& f) {
    return f.path == "nvidia_cuda_runtime-13.0.96.dist-info/METADATA";
  });
  ASSERT_NE(meta, w.files.end());
  EXPECT_EQ(got->host_paths[static_cast<size_t>(meta - w.files.begin())], std::string(kRuntimeDistInfo) + "/METADATA");

  // The wrong prefix maps every file to a path that does not exist: refused, not skipped.
  auto wrong = ReadInstalledWheel(kRuntimeDistInfo, kCudaRoot, "nvidia/cu12/");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().kind, ErrorKind::kIntegrity);
}

// cccl's RECORD lists six files under "nvidia/cu13/.metadata/" the flattened install
// dropped: the hidden-component rule skips exactly those.
TEST(InstalledWheelTest, CudaCcclHiddenMetadataSkipped) {
  std::string di = std::string(kCudaRoot) + "/dist-info/nvidia_cuda_cccl-13.0.85.dist-info";
  if (!fs::Exists(di)) GTEST_SKIP() << di << " absent; FabricatedTree covers the same rule";
  auto got = ReadInstalledWheel(di, kCudaRoot, "nvidia/cu13/");
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->skipped.size(), 6u);
  for (const std::string& s : got->skipped) EXPECT_EQ(s.rfind("nvidia/cu13/.metadata/", 0), 0u) << s;
  EXPECT_EQ(got->wheel.files.size() + got->skipped.size(), 1721u);
}

// mkinstalled.py ROOT CASE: an installed wheel flattened from "vendor/pkg/" to ROOT.
const char* kMakeInstalled = R"PY(
import base64, hashlib, os, sys
root, case = sys.argv[1], sys.argv[2]
di = "demo-2.0.dist-info"
def h(b):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
def put(rel, b):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "wb").write(b)
rows = []
def add(rec_path, host_rel, b, present=True, hashed=True):
    if present:
        put(host_rel, b)
    rows.append("%s,%s,%s" % (rec_path, h(b) if hashed else "", len(b) if hashed else ""))
add("vendor/pkg/lib/libdemo.so", "lib/libdemo.so", b"ELF" * 100)
add("vendor/pkg/lib/helper.py", "lib/helper.py", b"print(1)\n")
add("vendor/pkg/.metadata/provenance.txt", "x", b"p\n", present=False)
add("vendor/pkg/__init__.py", "x", b"", present=False)
add("vendor/pkg/lib/__pycache__/helper.cpython-311.pyc", "lib/__pycache__/helper.cpython-311.pyc", b"pyc", hashed=False)
add("other/top.txt", "other/top.txt", b"not under the prefix\n")
add(di + "/METADATA", di + "/METADATA", b"Name: demo\nVersion: 2.0\n")
if case == "missing":
    add("vendor/pkg/lib/gone.so", "x", b"gone", present=False)
if case == "dotdot":
    add("../../bin/demo", "x", b"x", present=False)
rows.append(di + "/RECORD,,")
put(di + "/RECORD", ("\n".join(rows) + "\n").encode())
if case == "tampered":
    put("lib/libdemo.so", b"ELF" * 99 + b"BAD")
if case == "symlink":
    os.remove(os.path.join(root, "lib/helper.py"))
    os.symlink("/etc/hostname", os.path.join(root, "lib/helper.py"))
)PY";

class FabricatedTreeTest : public ::testing::TestWithParam<std::tuple<std::string, ErrorKind, std::string>> {};

Result<InstalledWheel> MakeAndRead(const fs::TempDir& tmp, const std::string& name) {
  Write(tmp.path() + "/mk.py", kMakeInstalled);
  std::string root = tmp.path() + "/root";
  auto r = Sh("python3 " + Quoted(tmp.path() + "/mk.py") + " " + Quoted(root) + " " + name);
  EXPECT_EQ(r.rc, 0) << r.out;
  return ReadInstalledWheel(root + "/demo-2.0.dist-info", root, "vendor/pkg/");
}

TEST(InstalledWheelTest, FabricatedTree) {
  auto tmp = fs::TempDir::Create("pkg-installed-");
  ASSERT_TRUE(tmp.ok());
  auto got = MakeAndRead(*tmp, "good");
  ASSERT_TRUE(got.ok()) << got.error().message;
  std::string root = tmp->path() + "/root";
  EXPECT_EQ(got->wheel.name, "demo");
  EXPECT_EQ(got->wheel.version, "2.0");
  std::vector<std::string> paths;
  for (const PackageFile& f : got->wheel.files) paths.push_back(f.path);
  EXPECT_EQ(paths,
            (std::vector<std::string>{"demo-2.0.dist-info/METADATA", "demo-2.0.dist-info/RECORD", "other/top.txt",
                                      "vendor/pkg/lib/helper.py", "vendor/pkg/lib/libdemo.so"}));
  EXPECT_EQ(got->host_paths,
            (std::vector<std::string>{root + "/demo-2.0.dist-info/METADATA", root + "/demo-2.0.dist-info/RECORD",
                                      root + "/other/top.txt", root + "/lib/helper.py", root + "/lib/libdemo.so"}));
  EXPECT_EQ(got->skipped, (std::vector<std::string>{"vendor/pkg/.metadata/provenance.txt", "vendor/pkg/__init__.py",
                                                    "vendor/pkg/lib/__pycache__/helper.cpython-311.pyc"}));
}

TEST_P(FabricatedTreeTest, Refused) {
  auto [name, kind, want] = GetParam();
  auto tmp = fs::TempDir::Create("pkg-installed-");
  ASSERT_TRUE(tmp.ok());
  auto got = MakeAndRead(*tmp, name);
  ASSERT_FALSE(got.ok()) << name << " was accepted";
  EXPECT_EQ(got.error().kind, kind) << got.error().message;
  std::string root = tmp->path() + "/root";
  std::string msg = got.error().message;
  if (size_t at = want.find("ROOT"); at != std::string::npos) want.replace(at, 4, root);
  // Starts with: the digests in a mismatch message are the test's business elsewhere.
  EXPECT_EQ(msg.rfind(root + "/demo-2.0.dist-info: " + want, 0), 0u) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FabricatedTreeTest,
    ::testing::Values(
        std::make_tuple("missing", ErrorKind::kIntegrity,
                        "\"vendor/pkg/lib/gone.so\": in RECORD but ROOT/lib/gone.so is missing"),
        std::make_tuple("tampered", ErrorKind::kIntegrity,
                        "\"vendor/pkg/lib/libdemo.so\": sha256 mismatch: RECORD says sha256:"),
        std::make_tuple("symlink", ErrorKind::kIntegrity,
                        "\"vendor/pkg/lib/helper.py\": ROOT/lib/helper.py is not a regular file"),
        std::make_tuple("dotdot", ErrorKind::kInvalidInput,
                        "RECORD path \"../../bin/demo\": \"..\" path component (nothing outside the site root can "
                        "be pinned)")),
    [](const auto& info) { return std::get<0>(info.param); });

}  // namespace
}  // namespace imgtool::pkg
