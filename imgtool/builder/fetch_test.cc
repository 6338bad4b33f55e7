#include "builder/fetch.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include "fs/atomic_file.h"

namespace imgtool::build {

namespace {

struct Fixture {
  fs::TempDir dir = std::move(*fs::TempDir::Create("fetch-test-"));
  std::string Source(const std::string& content) {
    std::string path = dir.path() + "/pkg.deb";
    EXPECT_TRUE(fs::WriteFileAtomic(path, content).ok());
    return "file://" + path;
  }
  FetchOptions Options() {
    FetchOptions o;
    o.cache_dir = dir.path() + "/downloads";
    return o;
  }
  // Files in the download cache, temporaries included.
  int CacheFiles() {
    int n = 0;
    DIR* d = opendir((dir.path() + "/downloads/sha256").c_str());
    if (d == nullptr) return 0;
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.' || std::string(e->d_name).size() > 2;
    closedir(d);
    return n;
  }
};

}  // namespace

TEST(Fetch, RecognizesUrls) {
  EXPECT_TRUE(IsPackageUrl("https://example.invalid/a.whl"));
  EXPECT_TRUE(IsPackageUrl("http://127.0.0.1:8000/a.deb"));
  EXPECT_TRUE(IsPackageUrl("file:///tmp/a.deb"));
  EXPECT_FALSE(IsPackageUrl("debs/a.deb"));
  EXPECT_FALSE(IsPackageUrl("ftp://host/a.deb"));
}

TEST(Fetch, DownloadsOnceIntoTheCacheByDigest) {
  Fixture f;
  std::string url = f.Source("package bytes\n");
  oci::Digest pin = oci::Digest::Of("package bytes\n");
  auto first = FetchPinned(url, pin, f.Options());
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_FALSE(first->cached);
  EXPECT_EQ(first->path, f.dir.path() + "/downloads/sha256/" + pin.hex());
  EXPECT_EQ(first->size, 14u);
  EXPECT_EQ(*fs::ReadSmallFile(first->path), "package bytes\n");
  auto second = FetchPinned(url, pin, f.Options());
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->cached);
}

TEST(Fetch, AWrongDigestLeavesNothing) {
  Fixture f;
  std::string url = f.Source("tampered\n");
  oci::Digest pin = oci::Digest::Of("original\n");
  auto r = FetchPinned(url, pin, f.Options());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kIntegrity);
  EXPECT_NE(r.error().message.find(pin.str()), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(oci::Digest::Of("tampered\n").str()), std::string::npos);
  EXPECT_EQ(f.CacheFiles(), 0);
}

TEST(Fetch, ADamagedCacheEntryIsFetchedAgain) {
  Fixture f;
  std::string url = f.Source("good\n");
  oci::Digest pin = oci::Digest::Of("good\n");
  ASSERT_TRUE(FetchPinned(url, pin, f.Options()).ok());
  ASSERT_TRUE(fs::WriteFileAtomic(f.dir.path() + "/downloads/sha256/" + pin.hex(), "bad\n").ok());
  auto r = FetchPinned(url, pin, f.Options());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->cached);
  EXPECT_EQ(*fs::ReadSmallFile(r->path), "good\n");
}

TEST(Fetch, MissingSourceAndOversizeAreErrors) {
  Fixture f;
  auto missing = FetchPinned("file://" + f.dir.path() + "/nope.deb", oci::Digest::Of("x"), f.Options());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("nope.deb"), std::string::npos) << missing.error().message;
  FetchOptions small = f.Options();
  small.max_bytes = 4;
  auto big = FetchPinned(f.Source("more than four\n"), oci::Digest::Of("more than four\n"), small);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("refused"), std::string::npos) << big.error().message;
  EXPECT_EQ(f.CacheFiles(), 0);
}

TEST(Fetch, NoCacheFolderIsAClearError) {
  FetchOptions o;
  auto r = FetchPinned("https://user:secret@example.invalid/a.whl", oci::Digest::Of("x"), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.find("secret"), std::string::npos) << r.error().message;
}

}  // namespace imgtool::build
