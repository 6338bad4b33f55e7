#include "fs/atomic_file.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

namespace imgtool::fs {

namespace {
int CountEntries(const std::string& dir) {
  int n = 0;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = readdir(d)) n += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
  closedir(d);
  return n;
}
}  // namespace

TEST(AtomicFile, CommitReplacesAndLeavesNoTemporary) {
  auto dir = TempDir::Create("fs-test-");
  ASSERT_TRUE(dir.ok());
  std::string path = dir->path() + "/f";
  ASSERT_TRUE(WriteFileAtomic(path, "old").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "new").ok());
  EXPECT_EQ(*ReadSmallFile(path), "new");
  EXPECT_EQ(CountEntries(dir->path()), 1);
}

TEST(AtomicFile, AbandonedWriteKeepsThePreviousFile) {
  auto dir = TempDir::Create("fs-test-");
  std::string path = dir->path() + "/f";
  ASSERT_TRUE(WriteFileAtomic(path, "good").ok());
  {
    AtomicFile f;
    ASSERT_TRUE(f.Open(path).ok());
    ASSERT_TRUE(f.Write("half-writ").ok());
    // destroyed without Commit: as if the build failed here
  }
  EXPECT_EQ(*ReadSmallFile(path), "good");
  EXPECT_EQ(CountEntries(dir->path()), 1);
}

TEST(AtomicFile, CommitAsNamesTheFileLate) {
  auto dir = TempDir::Create("fs-test-");
  AtomicFile f;
  ASSERT_TRUE(f.Open(dir->path() + "/blob").ok());
  ASSERT_TRUE(f.Write("abc").ok());
  EXPECT_EQ(f.bytes_written(), 3u);
  ASSERT_TRUE(f.CommitAs(dir->path() + "/named").ok());
  EXPECT_EQ(*ReadSmallFile(dir->path() + "/named"), "abc");
  EXPECT_FALSE(Exists(dir->path() + "/blob"));
}

TEST(ReadSmallFile, RefusesLargeFilesAndNamesMissingOnes) {
  auto dir = TempDir::Create("fs-test-");
  ASSERT_TRUE(WriteFileAtomic(dir->path() + "/big", std::string(100, 'x')).ok());
  auto r = ReadSmallFile(dir->path() + "/big", 10);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "reading " + dir->path() + "/big: larger than 10 bytes");
  auto missing = ReadSmallFile(dir->path() + "/none");
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
}

TEST(TempDir, RemovesItselfWithContents) {
  std::string path;
  {
    auto dir = TempDir::Create("fs-test-");
    path = dir->path();
    ASSERT_TRUE(MakeDirs(path + "/a/b").ok());
    ASSERT_TRUE(WriteFileAtomic(path + "/a/b/c", "x").ok());
  }
  EXPECT_FALSE(Exists(path));
}

// A file a user names (--key, a spec) that is a FIFO with no writer would block open()
// forever; it is refused at once, naming what it is. So are folders and devices; a
// symlink is followed (the user named it), to a regular file or to a refusal.
TEST(ReadSmallFile, RefusesFifosFoldersAndDevicesWithoutWaiting) {
  auto dir = TempDir::Create("fs-test-");
  ASSERT_TRUE(dir.ok());
  const std::string fifo = dir->path() + "/key.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::symlink(fifo.c_str(), (dir->path() + "/link").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomic(dir->path() + "/real", "pem").ok());
  ASSERT_EQ(::symlink("real", (dir->path() + "/to-real").c_str()), 0);
  auto start = std::chrono::steady_clock::now();
  auto r = ReadSmallFile(fifo);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.error().message, "reading " + fifo + ": a FIFO, not a regular file");
  EXPECT_EQ(ReadSmallFile(dir->path() + "/link").error().message,
            "reading " + dir->path() + "/link: a FIFO, not a regular file");
  EXPECT_EQ(ReadSmallFile(dir->path()).error().message, "reading " + dir->path() + ": a folder, not a regular file");
  EXPECT_EQ(ReadSmallFile("/dev/zero").error().message, "reading /dev/zero: a device, not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(*ReadSmallFile(dir->path() + "/to-real"), "pem");
  auto missing = ReadSmallFile(dir->path() + "/none");
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(missing.error().message, "opening " + dir->path() + "/none: No such file or directory");
}

}  // namespace imgtool::fs
