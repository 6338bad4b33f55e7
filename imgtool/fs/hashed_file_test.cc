#include "fs/hashed_file.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "fs/atomic_file.h"

namespace imgtool::fs {
namespace {

class HashedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::Create("fs-hashed-test-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
  }
  std::string Put(const std::string& name, const std::string& bytes, mode_t mode = 0644) {
    std::string path = dir_.path() + "/" + name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }
  // Rewrites `path` in place: same inode, same size, other bytes.
  static void Overwrite(const std::string& path, const std::string& bytes) {
    std::fstream(path, std::ios::binary | std::ios::in | std::ios::out) << bytes;
  }
  static std::string ReadAll(oci::Reader& r) {
    auto all = oci::ReadAll(r, 1 << 20, "test");
    EXPECT_TRUE(all.ok());
    return all.ok() ? *all : "";
  }
  UniqueFd Open(const std::string& path) {
    auto fd = OpenRegular(path);
    EXPECT_TRUE(fd.ok());
    return fd.ok() ? std::move(*fd) : UniqueFd();
  }
  TempDir dir_;
};

// A consumer that stops early (an unpacker past its last member) still gets the digest
// of the whole file, and of the very bytes it was handed.
TEST_F(HashedFileTest, HashingReaderDigestsWhatItPassedAndTheRest) {
  std::string path = Put("pkg", "head|tail");
  HashingReader r(std::make_unique<FdReader>(Open(path)));
  char buf[5];
  ASSERT_EQ(*r.Read(buf, 5), 5u);
  EXPECT_EQ(std::string(buf, 5), "head|");
  auto d = r.Finish();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->digest, oci::Digest::Of("head|tail"));
  EXPECT_EQ(d->size, 9u);
}

// Only we can write it: the same descriptor serves the bytes again, so a name swapped
// after the hash changes nothing.
TEST_F(HashedFileTest, AFileOnlyWeCanWriteIsReadThroughTheSameDescriptor) {
  std::string path = Put("pkg.whl", "pinned wheel");
  auto h = HashedFile::Hash(Open(path), dir_.path(), path);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ((*h)->digest().digest, oci::Digest::Of("pinned wheel"));
  Put("other", "hostile!!!!!");
  ASSERT_EQ(::rename((dir_.path() + "/other").c_str(), path.c_str()), 0);
  auto r = (*h)->Open();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ReadAll(**r), "pinned wheel");
  char buf[5];
  ASSERT_EQ(*(*r)->ReadAt(7, buf, sizeof buf), 5u);
  EXPECT_EQ(std::string(buf, 5), "wheel");
  EXPECT_EQ(*(*r)->ReadAt(12, buf, sizeof buf), 0u);
}

// Others can write it: its bytes are copied while hashed, so a rewrite in place after the
// hash (same inode, same size) does not reach the reader.
TEST_F(HashedFileTest, AFileOthersCanWriteIsReadFromAPrivateCopy) {
  std::string path = Put("shared.whl", "pinned wheel", 0666);
  auto h = HashedFile::Hash(Open(path), dir_.path(), path);
  ASSERT_TRUE(h.ok()) << h.error().message;
  Overwrite(path, "HOSTILE!!!!!");
  auto r = (*h)->Open();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ReadAll(**r), "pinned wheel");
  EXPECT_EQ((*h)->digest().digest, oci::Digest::Of("pinned wheel"));
  // The copy has no name: the spill folder holds only the file itself.
  int entries = 0;
  DIR* d = ::opendir(dir_.path().c_str());
  while (dirent* e = ::readdir(d)) entries += e->d_name[0] != '.' || std::string(e->d_name).size() > 2;
  ::closedir(d);
  EXPECT_EQ(entries, 1);
}

TEST_F(HashedFileTest, WrittenTrustsOnlyAFileOnlyWeCanWrite) {
  std::string ours = Put("ours", "downloaded");
  auto ok = HashedFile::Written(Open(ours), {oci::Digest::Of("downloaded"), 10}, dir_.path(), ours);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ReadAll(**(*ok)->Open()), "downloaded");

  // Others can write it and it is no longer what was hashed while downloading: refused.
  std::string shared = Put("shared", "tampered!!", 0666);
  auto bad = HashedFile::Written(Open(shared), {oci::Digest::Of("downloaded"), 10}, dir_.path(), shared);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(bad.error().message, shared + ": changed after it was written (" + oci::Digest::Of("downloaded").str() +
                                     ", now " + oci::Digest::Of("tampered!!").str() + ")");
}

// A name planning saw as a regular file: a symlink or a FIFO there now is refused at
// once, without following or waiting.
TEST_F(HashedFileTest, OpenRegularNoFollowRefusesSymlinksAndFifos) {
  std::string key = Put("key", "secret", 0600);
  std::string link = dir_.path() + "/link";
  ASSERT_EQ(::symlink(key.c_str(), link.c_str()), 0);
  std::string fifo = dir_.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  auto l = OpenRegularNoFollow(link);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().message, link + ": is a symlink; refused");
  auto f = OpenRegularNoFollow(fifo);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message, fifo + ": is a FIFO; refused");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(OpenRegularNoFollow(dir_.path() + "/none").error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(OpenRegularNoFollow(key + "/below").error().kind, ErrorKind::kNotFound);
  uint64_t size = 0;
  ASSERT_TRUE(OpenRegularNoFollow(key, &size).ok());
  EXPECT_EQ(size, 6u);
}

}  // namespace
}  // namespace imgtool::fs
