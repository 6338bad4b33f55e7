#include "fleet/probe.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "fleet/probe_cuda.h"
#include "fleet/probe_hash.h"
#include "fleet/probe_libraries.h"
#include "fs/atomic_file.h"
#include "oci/digest.h"

namespace imgtool::fleet {
namespace {

constexpr const char* kDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Sets mtime to a fixed, distinct time: a key change that does not depend on the clock tick.
void SetMtime(const std::string& path, time_t seconds) {
  struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

class ProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = fs::TempDir::Create("probe-test-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
  }
  // Tests that are not about the cache share one, so the CUDA libraries are hashed once.
  static ProbeOptions Options() {
    ProbeOptions o;
    o.hash_cache_dir = ::testing::TempDir() + "/imgtool-probe-test-cache-" + std::to_string(::geteuid());
    o.stack_json_path = "/nonexistent/stack.json";
    o.environment = {"PATH=/bin"};
    return o;
  }
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }
  fs::TempDir dir_;
};

TEST_F(ProbeTest, ReportsEveryFieldWithoutAGpu) {
  auto fp = Probe(Options());
  ASSERT_TRUE(fp.ok()) << fp.error().message;
  for (const char* f : {"image.digest", "image.stack_json", "os.release", "os.kernel", "os.glibc", "driver.version",
                        "cuda.driver_api", "cuda.runtime", "cublas", "cudnn", "nccl", "gpu.count", "gpu.model",
                        "gpu.sm_count", "gpu.memory_mib", "gpu.compute_capability"}) {
    EXPECT_TRUE(fp->fields.count(f)) << f;
  }
  EXPECT_EQ(fp->fields["image.digest"], "unknown");
  EXPECT_EQ(fp->fields["image.stack_json"], "absent");
  EXPECT_FALSE(fp->node["hostname"].empty());
  if (!fs::Exists("/proc/driver/nvidia/version")) {
    EXPECT_EQ(fp->fields["driver.version"], "absent");
  }
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == nullptr) {
    EXPECT_EQ(fp->fields["gpu.count"], "0");
    EXPECT_EQ(fp->fields["gpu.model"], "absent");
    EXPECT_EQ(fp->fields["cuda.driver_api"], "absent");
    EXPECT_NE(fp->node["error.cuda.driver_api"].find("libcuda.so.1"), std::string::npos);
  } else {
    EXPECT_NE(fp->fields["gpu.count"].find_first_of("0123456789"), std::string::npos);
  }
  for (const auto& [k, v] : fp->fields) {
    if (k.rfind("lib.", 0) != 0) continue;
    // Two files of one name (only when a test loaded one by path) join with ','.
    std::stringstream values(v), paths(fp->node[k]);
    for (std::string one, path; std::getline(values, one, ',') && std::getline(paths, path, ',');) {
      EXPECT_TRUE(oci::Digest::Parse(one).ok()) << k << " = " << v;
      EXPECT_EQ(path.substr(path.rfind('/') + 1), k.substr(4)) << "keyed by the real file's name";
    }
    EXPECT_TRUE(IsCudaLibraryName(k.substr(4))) << k;
  }
}

TEST_F(ProbeTest, LibraryHashIsTheFileSha256) {
  auto fp = Probe(Options());
  ASSERT_TRUE(fp.ok());
  std::string smallest;
  uint64_t smallest_size = UINT64_MAX;
  for (const auto& [k, path] : fp->node) {
    if (k.rfind("lib.", 0) != 0 || path.find(',') != std::string::npos) continue;
    auto key = StatFileKey(path);
    if (key.ok() && key->size < smallest_size) smallest = k, smallest_size = key->size;
  }
  if (smallest.empty()) GTEST_SKIP() << "no CUDA library on this machine (the hash cache tests cover hashing)";
  auto want = oci::DigestFile(fp->node[smallest]);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(fp->fields[smallest], want->digest.str()) << smallest;
}

TEST_F(ProbeTest, EnvironmentComesFromOptions) {
  ::setenv("NCCL_PROTO", "LL", 1);  // in the process, not in options: not read
  ProbeOptions o = Options();
  o.environment = {
      "NCCL_ALGO=Ring",         "HOME=/root",   "CUDA_VISIBLE_DEVICES=0,1",       "PATH=/bin", "NCCL_ALGO=Tree",
      "NVIDIA_TF32_OVERRIDE=0", "TF_CONFIG={}", "CUBLAS_WORKSPACE_CONFIG=:4096:8"};
  auto fp = Probe(o);
  ::unsetenv("NCCL_PROTO");
  ASSERT_TRUE(fp.ok());
  EXPECT_EQ(fp->fields["env.NCCL_ALGO"], "Ring") << "the first definition wins, as for getenv";
  EXPECT_EQ(fp->fields["env.NVIDIA_TF32_OVERRIDE"], "0");
  EXPECT_EQ(fp->fields["env.CUBLAS_WORKSPACE_CONFIG"], ":4096:8");
  EXPECT_EQ(fp->node["env.CUDA_VISIBLE_DEVICES"], "0,1");
  EXPECT_FALSE(fp->fields.count("env.CUDA_VISIBLE_DEVICES"));
  for (const char* absent : {"env.HOME", "env.PATH", "env.TF_CONFIG", "env.NCCL_PROTO"}) {
    EXPECT_FALSE(fp->fields.count(absent)) << absent;
    EXPECT_FALSE(fp->node.count(absent)) << absent;
  }
}

TEST_F(ProbeTest, ValuesAreValidUtf8AndWithinTheFingerprintBounds) {
  ProbeOptions o = Options();
  std::string long_value(5000, 'x');
  o.environment = {"NCCL_A=\xff\xfe ok \xc3\xa9", "NCCL_B=" + long_value, "NCCL_" + std::string(300, 'N') + "=1",
                   "CUDA_C=\xed\xa0\x80"};  // a surrogate: not UTF-8
  ProbeTimings t;
  auto fp = Probe(o, &t);
  ASSERT_TRUE(fp.ok());
  EXPECT_EQ(fp->fields["env.NCCL_A"], "\\xff\\xfe ok \xc3\xa9");
  EXPECT_EQ(fp->fields["env.CUDA_C"], "\\xed\\xa0\\x80");
  EXPECT_EQ(fp->fields["env.NCCL_B"], oci::Digest::Of(long_value).str() + " (5000 bytes)");
  EXPECT_FALSE(fp->fields.count("env.NCCL_" + std::string(300, 'N')));
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(t.notes[0].rfind("left out of fields: env.NCCL_NNN", 0), 0u) << t.notes[0];
  auto back = FingerprintFromJson(ToJson(*fp).dump());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->fields, fp->fields);
}

TEST(EnvVarRoleTest, DocumentedList) {
  EXPECT_EQ(EnvVarRole("NCCL_ALGO"), EnvRole::kField);
  EXPECT_EQ(EnvVarRole("NCCL_SOCKET_IFNAME"), EnvRole::kField);
  EXPECT_EQ(EnvVarRole("CUBLASLT_HEURISTICS_CACHE_CAPACITY"), EnvRole::kField);
  EXPECT_EQ(EnvVarRole("CUDNN_CONV_WSCAP_DBG"), EnvRole::kField);
  EXPECT_EQ(EnvVarRole("NVIDIA_TF32_OVERRIDE"), EnvRole::kField);
  EXPECT_EQ(EnvVarRole("LD_PRELOAD"), EnvRole::kField);
  EXPECT_EQ(EnvVarRole("CUDA_VISIBLE_DEVICES"), EnvRole::kNode);
  EXPECT_EQ(EnvVarRole("NCCL_DEBUG"), EnvRole::kNode);
  EXPECT_EQ(EnvVarRole("LD_LIBRARY_PATH"), EnvRole::kNode);
  EXPECT_EQ(EnvVarRole("CUDA_HOME"), EnvRole::kNode);
  for (const char* none : {"HOME", "PATH", "TF_CONFIG", "NCCL_", "NCCLX", "OMP_NUM_THREADS", "IMGTOOL_IMAGE_DIGEST"}) {
    EXPECT_EQ(EnvVarRole(none), EnvRole::kNone) << none;
    EXPECT_FALSE(RecordedEnvVar(none)) << none;
  }
  EXPECT_TRUE(RecordedEnvVar("CUDA_VISIBLE_DEVICES"));
}

TEST_F(ProbeTest, ImageDigestIsValidated) {
  ProbeOptions o = Options();
  o.image_digest = kDigest;
  auto fp = Probe(o);
  ASSERT_TRUE(fp.ok());
  EXPECT_EQ(fp->fields["image.digest"], kDigest);
  for (const char* bad : {"sha256:xyz", "0123456789abcdef", "sha512:0123",
                          "sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"}) {
    o.image_digest = bad;
    auto r = Probe(o);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
    EXPECT_NE(r.error().message.find(std::string("image digest: digest '") + bad + "'"), std::string::npos)
        << r.error().message;
  }
}

TEST_F(ProbeTest, StackJsonIsTheDigestOfItsBytes) {
  ProbeOptions o = Options();
  o.stack_json_path = Path("stack.json");
  std::string text = R"({"components":{"nccl":{"version":"2.28.9"}},"schemaVersion":1})";
  WriteFile(o.stack_json_path, text);
  auto fp = Probe(o);
  ASSERT_TRUE(fp.ok());
  EXPECT_EQ(fp->fields["image.stack_json"], oci::Digest::Of(text).str());

  o.stack_json_path = dir_.path();  // a folder: the caller's to fix
  auto r = Probe(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.error().message, "reading " + dir_.path() + ": not a regular file");

  if (::geteuid() != 0) {  // root reads anything
    o.stack_json_path = Path("stack.json");
    ::chmod(o.stack_json_path.c_str(), 0);
    r = Probe(o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "reading " + o.stack_json_path + ": Permission denied");
  }
}

TEST_F(ProbeTest, SecondProbeHitsTheHashCache) {
  ProbeOptions o = Options();
  o.hash_cache_dir = Path("cache");
  ProbeTimings cold, warm;
  auto a = Probe(o, &cold);
  auto b = Probe(o, &warm);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->fields, b->fields);
  EXPECT_EQ(cold.libraries_cached, 0);
  EXPECT_EQ(warm.libraries_hashed, 0);
  EXPECT_EQ(warm.libraries_cached, cold.libraries_hashed);
  EXPECT_TRUE(warm.notes.empty());
  if (cold.libraries_hashed > 0) {
    EXPECT_TRUE(fs::Exists(o.hash_cache_dir + "/hashes.json"));
  }
  o.hash_cache_dir = "";  // disabled: everything hashed, same values
  ProbeTimings off;
  auto c = Probe(o, &off);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(a->fields, c->fields);
  EXPECT_EQ(off.libraries_cached, 0);
}

TEST(ProbeVersionsTest, CodesAsDottedStrings) {
  EXPECT_EQ(CudaVersionString(13000), "13.0");
  EXPECT_EQ(CudaVersionString(12080), "12.8");
  EXPECT_EQ(CudnnVersionString(91900), "9.19.0");
  EXPECT_EQ(CudnnVersionString(8907), "8.9.7");
  EXPECT_EQ(NcclVersionString(22809), "2.28.9");
  EXPECT_EQ(NcclVersionString(21903), "2.19.3");
  EXPECT_EQ(NcclVersionString(2804), "2.8.4");
  EXPECT_EQ(ParseNvidiaDriverVersion("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 2025\n"
                                     "GCC version:  gcc version 12.2.0\n"),
            "580.65.06");
  EXPECT_EQ(ParseNvidiaDriverVersion("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.172.08  Release "
                                     "Build  (dvs-builder@U16-I3-B03-4-3)  Tue Jul  8 18:54:46 UTC 2025\n"),
            "570.172.08");
  EXPECT_EQ(ParseNvidiaDriverVersion("garbage 1.2.3\n"), "");
}

TEST(ProbeLibrariesTest, FakeNcclReportsItsVersionAndIsMapped) {
  std::string error;
  EXPECT_EQ(LibraryVersion("nccl", {"/nonexistent/libnccl.so.2"}, &error), "absent");
  EXPECT_NE(error.find("/nonexistent/libnccl.so.2"), std::string::npos) << error;
  error.clear();
  EXPECT_EQ(LibraryVersion("nccl", {"/nonexistent/libnccl.so.2", FAKE_NCCL_DIR "/libnccl.so.2"}, &error), "2.19.3");
  EXPECT_EQ(error, "");
  char real[PATH_MAX];
  ASSERT_NE(::realpath(FAKE_NCCL_DIR "/libnccl.so.2", real), nullptr);
  bool found = false;
  for (const auto& l : MappedCudaLibraries()) {
    if (l.real_path != real) continue;
    found = true;
    EXPECT_EQ(LibFieldName(l), "lib." + std::string(real).substr(std::string(real).rfind('/') + 1));
  }
  EXPECT_TRUE(found) << "the fake libnccl is mapped after the version query";
  EXPECT_TRUE(IsCudaLibraryName("libcublasLt.so.13"));
  EXPECT_TRUE(IsCudaLibraryName("libnvidia-ptxjitcompiler.so.580.65.06"));
  EXPECT_FALSE(IsCudaLibraryName("libc.so.6"));
  EXPECT_FALSE(IsCudaLibraryName("libcudaish.txt"));
}

TEST_F(ProbeTest, CudnnSubLibrariesAreFoundBesideTheShimAndInLdLibraryPath) {
  ASSERT_TRUE(fs::MakeDirs(Path("a")).ok() && fs::MakeDirs(Path("b")).ok());
  for (const char* f : {"a/libcudnn.so.9", "a/libcudnn_ops.so.9", "a/libcudnn_cnn.so.9", "b/libcudnn_ops.so.9"}) {
    WriteFile(Path(f), f);
  }
  std::vector<LoadedLibrary> mapped = {{Path("a/libcudnn.so.9"), Path("a/libcudnn.so.9")}};
  auto subs = CudnnSubLibraries(mapped, "");
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[0].real_path, Path("a/libcudnn_ops.so.9"));
  EXPECT_EQ(subs[1].real_path, Path("a/libcudnn_cnn.so.9"));
  subs = CudnnSubLibraries(mapped, "/nonexistent::" + Path("b"));  // LD_LIBRARY_PATH comes first
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[0].real_path, Path("b/libcudnn_ops.so.9"));
  mapped.push_back({Path("a/libcudnn_cnn.so.9"), Path("a/libcudnn_cnn.so.9")});
  EXPECT_EQ(CudnnSubLibraries(mapped, "").size(), 1u) << "already mapped: not twice";
}

// The hash cache on ordinary files, so it is tested on machines without CUDA too.
class HashCacheTest : public ProbeTest {
 protected:
  void SetUp() override {
    ProbeTest::SetUp();
    for (int i = 0; i < 5; ++i) {
      files_.push_back(Path("lib" + std::to_string(i) + ".so"));
      WriteFile(files_.back(), std::string(static_cast<size_t>(i) * 300000 + 7, static_cast<char>('a' + i)));
      SetMtime(files_.back(), 1700000000);
    }
    cache_dir_ = Path("cache");
  }
  // Hashes files_ through a cache loaded from cache_dir_ and saved after.
  std::vector<FileHash> Run(std::vector<std::string>* notes = nullptr, std::chrono::nanoseconds racy = {}) {
    HashCache c = HashCache::Load(cache_dir_);
    c.racy_window = racy;
    auto out = HashFiles(files_, c);
    EXPECT_TRUE(c.Save().ok());
    if (notes != nullptr) *notes = c.notes();
    return out;
  }
  static int Cached(const std::vector<FileHash>& hs) {
    int n = 0;
    for (const auto& h : hs) n += h.cached ? 1 : 0;
    return n;
  }
  void ExpectTrueDigests(const std::vector<FileHash>& hs) {
    ASSERT_EQ(hs.size(), files_.size());
    for (size_t i = 0; i < hs.size(); ++i) {
      EXPECT_EQ(hs[i].path, files_[i]);
      auto want = oci::DigestFile(files_[i]);
      ASSERT_TRUE(want.ok());
      EXPECT_EQ(hs[i].digest, want->digest) << files_[i];
    }
  }
  std::vector<std::string> files_;
  std::string cache_dir_;
};

TEST_F(HashCacheTest, SecondRunComesFromTheCache) {
  auto cold = Run();
  ExpectTrueDigests(cold);
  EXPECT_EQ(Cached(cold), 0);
  std::vector<std::string> notes;
  auto warm = Run(&notes);
  ExpectTrueDigests(warm);
  EXPECT_EQ(Cached(warm), 5);
  EXPECT_TRUE(notes.empty());
  struct stat st {};
  ASSERT_EQ(::stat((cache_dir_ + "/hashes.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 022, 0u);
}

TEST_F(HashCacheTest, ChangedFileIsRehashed) {
  Run();
  WriteFile(files_[2], std::string(600007, 'z'));  // same size, new bytes
  SetMtime(files_[2], 1700000001);                 // "touch": a new mtime
  auto again = Run();
  ExpectTrueDigests(again);
  EXPECT_FALSE(again[2].cached);
  EXPECT_EQ(Cached(again), 4);
  EXPECT_EQ(again[2].digest, oci::Digest::Of(std::string(600007, 'z')));
}

TEST_F(HashCacheTest, EntryWithAnotherKeyIsNotTrusted) {
  Run();
  auto text = fs::ReadSmallFile(cache_dir_ + "/hashes.json");
  ASSERT_TRUE(text.ok());
  auto j = oci::Json::parse(*text);
  for (auto& e : j["entries"]) {  // another inode, and a digest that is not the file's
    e["ino"] = e["ino"].get<uint64_t>() + 1;
    e["sha256"] = oci::Digest::Of("forged").str();
  }
  ASSERT_TRUE(fs::WriteFileAtomic(cache_dir_ + "/hashes.json", j.dump()).ok());
  auto again = Run();
  ExpectTrueDigests(again);
  EXPECT_EQ(Cached(again), 0);
}

TEST_F(HashCacheTest, CorruptOrForeignCacheIsIgnoredAndRewritten) {
  for (const char* bad :
       {"{not json", R"({"schemaVersion":1,"entries":[{"path":"/x"}]})", R"({"schemaVersion":"1"})", R"([1,2])"}) {
    ASSERT_TRUE(fs::MakeDirs(cache_dir_).ok());
    ASSERT_TRUE(fs::WriteFileAtomic(cache_dir_ + "/hashes.json", bad).ok());
    std::vector<std::string> notes;
    auto hs = Run(&notes);
    ExpectTrueDigests(hs);
    EXPECT_EQ(Cached(hs), 0) << bad;
    ASSERT_EQ(notes.size(), 1u) << bad;
    EXPECT_NE(notes[0].find("ignoring hash cache " + cache_dir_ + "/hashes.json"), std::string::npos) << notes[0];
    EXPECT_EQ(Cached(Run(&notes)), 5) << "rewritten after " << bad;
    EXPECT_TRUE(notes.empty());
  }
  ::chmod((cache_dir_ + "/hashes.json").c_str(), 0666);
  std::vector<std::string> notes;
  EXPECT_EQ(Cached(Run(&notes)), 0);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("writable by group or others"), std::string::npos) << notes[0];
}

TEST_F(HashCacheTest, FreshFilesAreNotRemembered) {
  for (const auto& f : files_) WriteFile(f, "just written " + f);  // mtime and ctime: now
  auto first = Run(nullptr, std::chrono::seconds(60));
  ExpectTrueDigests(first);
  EXPECT_EQ(Cached(Run(nullptr, std::chrono::seconds(60))), 0) << "younger than the racy window";
}

TEST_F(HashCacheTest, DisabledCacheHashesEverything) {
  HashCache off;
  auto hs = HashFiles(files_, off);
  ExpectTrueDigests(hs);
  EXPECT_EQ(Cached(hs), 0);
  EXPECT_TRUE(off.Save().ok());
  EXPECT_FALSE(fs::Exists(cache_dir_));
  files_.push_back(Path("missing.so"));
  hs = HashFiles(files_, off);
  EXPECT_EQ(hs.back().error, "stat " + Path("missing.so") + ": No such file or directory");
}

}  // namespace
}  // namespace imgtool::fleet
