#include "fs/atomic_file.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

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

// A key or a credential file is never readable by others, not even before Commit: the
// temporary exists with the mode asked for from its create on (a chmod afterwards, by
// name or by descriptor, leaves a window in which anyone could open it and keep the
// descriptor to read the secret once written).
TEST(AtomicFile, TheTemporaryIsCreatedWithItsFinalMode) {
  auto dir = TempDir::Create("fs-test-");
  ASSERT_TRUE(dir.ok());
  mode_t old_umask = ::umask(0);  // what a careless environment gives: nothing masked
  AtomicFile secret;
  Status opened = secret.Open(dir->path() + "/cosign.key", 0600);
  ::umask(old_umask);
  ASSERT_TRUE(opened.ok());
  struct stat st {};
  ASSERT_EQ(::lstat(secret.temp_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u) << "the temporary was created readable by others";
  ASSERT_TRUE(secret.Write("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----").ok());
  ASSERT_TRUE(secret.Commit().ok());
  ASSERT_EQ(::lstat((dir->path() + "/cosign.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  AtomicFile plain;
  ASSERT_TRUE(plain.Open(dir->path() + "/plain").ok());
  ASSERT_EQ(::lstat(plain.temp_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777 & ~0644u, 0u) << "0644 at most by default";
}

// ReadBack reads the very file written, whatever its name holds later.
TEST(AtomicFile, ReadBackReadsTheFileWrittenNotItsName) {
  auto dir = TempDir::Create("fs-test-");
  ASSERT_TRUE(dir.ok());
  AtomicFile f;
  ASSERT_TRUE(f.Open(dir->path() + "/download").ok());
  ASSERT_TRUE(f.Write("pinned bytes").ok());
  auto back = f.ReadBack();
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(f.Commit().ok());
  ASSERT_TRUE(WriteFileAtomic(dir->path() + "/download", "other bytes!").ok());  // the name replaced
  std::string got;
  ASSERT_TRUE(ReadExactly(back->get(), &got, 12));
  EXPECT_EQ(got, "pinned bytes");
}

// O_DIRECT lasts while writes are aligned; an unaligned one (the tail) or an unaligned
// start turns it off, and the file holds exactly the bytes written either way.
TEST(AtomicFile, WriteDirectKeepsTheBytesWhateverTheAlignment) {
  auto dir = TempDir::Create("fs-test-");
  ASSERT_TRUE(dir.ok());
  const size_t a = AtomicFile::kDirectAlignment;
  auto* block = static_cast<char*>(std::aligned_alloc(a, 4 * a));
  for (size_t i = 0; i < 4 * a; ++i) block[i] = static_cast<char>(i * 7 + i / 251);
  std::string expect(block, 4 * a);
  expect += std::string(block + 1, 100);
  expect += std::string(block, a);
  {
    AtomicFile f;
    ASSERT_TRUE(f.Open(dir->path() + "/d").ok());
    f.WriteDirect();  // on where the filesystem allows it (not every /tmp does)
    ASSERT_TRUE(f.Write(block, 4 * a).ok());
    ASSERT_TRUE(f.Write(block + 1, 100).ok());  // unaligned: buffered from here on
    ASSERT_TRUE(f.Write(block, a).ok());
    ASSERT_TRUE(f.Commit().ok());
  }
  EXPECT_EQ(*ReadSmallFile(dir->path() + "/d"), expect);
  {
    AtomicFile f;
    ASSERT_TRUE(f.Open(dir->path() + "/e").ok());
    ASSERT_TRUE(f.Write(block, 3).ok());
    EXPECT_FALSE(f.WriteDirect());  // the file offset is not aligned
    ASSERT_TRUE(f.Write(block, a).ok());
    ASSERT_TRUE(f.Commit().ok());
  }
  EXPECT_EQ(*ReadSmallFile(dir->path() + "/e"), std::string(block, 3) + std::string(block, a));
  std::free(block);
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
