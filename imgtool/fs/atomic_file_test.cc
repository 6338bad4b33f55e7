#include "fs/atomic_file.h"

#include <dirent.h>
#include <gtest/gtest.h>

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

}  // namespace imgtool::fs
