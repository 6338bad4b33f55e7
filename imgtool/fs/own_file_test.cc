// ReadOwnFile / CheckOwnDir decide whether a cache may skip work: each refusal is tested
// with the reason it names, and WriteOwnFile's files are accepted under any umask.
#include "fs/own_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/atomic_file.h"

namespace imgtool::fs {

namespace {

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

void ExpectDenied(const Result<std::string>& r, const std::string& why) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kDenied) << r.error().message;
  EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
}

}  // namespace

TEST(OwnFile, ReadsOursAndRefusesWhatOthersCouldHaveWritten) {
  auto dir = TempDir::Create("own-file-test-");
  std::string f = dir->path() + "/entry";
  ASSERT_TRUE(WriteOwnFile(f, "fact\n").ok());
  EXPECT_EQ(*ReadOwnFile(f, 100), "fact\n");

  ASSERT_EQ(::chmod(f.c_str(), 0664), 0);
  ExpectDenied(ReadOwnFile(f, 100), "writable by group or others");
  ASSERT_EQ(::chmod(f.c_str(), 0644), 0);
  ExpectDenied(ReadOwnFile(f, 3), "larger than 3 bytes");

  std::string link = dir->path() + "/link";
  ASSERT_EQ(::symlink(f.c_str(), link.c_str()), 0);
  ExpectDenied(ReadOwnFile(link, 100), "a symlink");
  ExpectDenied(ReadOwnFile(dir->path(), 100), "not a regular file");

  auto missing = ReadOwnFile(dir->path() + "/none", 100);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
}

TEST(OwnFile, RefusesAFileOfAnotherUser) {
  // As root, a file handed to uid 65534; as anyone else, /etc/passwd is root's.
  auto dir = TempDir::Create("own-file-test-");
  std::string f = "/etc/passwd";
  if (::geteuid() == 0) {
    f = dir->path() + "/theirs";
    ASSERT_TRUE(WriteOwnFile(f, "x").ok());
    ASSERT_EQ(::chown(f.c_str(), 65534, 65534), 0);
  }
  ExpectDenied(ReadOwnFile(f, 1 << 20), "not by us");
}

TEST(OwnFile, FolderChecks) {
  auto dir = TempDir::Create("own-file-test-");
  std::string d = dir->path() + "/a/b";
  mode_t old = ::umask(002);  // a umask that would leave group write
  Status made = MakeOwnDir(d);
  Status wrote = WriteOwnFile(d + "/f", "x");
  ::umask(old);
  ASSERT_TRUE(made.ok()) << made.error().message;
  ASSERT_TRUE(wrote.ok()) << wrote.error().message;
  EXPECT_EQ(ModeOf(d), 0755u);
  EXPECT_EQ(ModeOf(d + "/f"), 0644u);
  EXPECT_TRUE(ReadOwnFile(d + "/f", 10).ok());

  ASSERT_EQ(::chmod(d.c_str(), 0777), 0);
  Status open = CheckOwnDir(d);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.error().message.find("writable by group or others"), std::string::npos);
  EXPECT_FALSE(MakeOwnDir(d).ok()) << "an existing folder is checked, never re-moded";
  EXPECT_EQ(ModeOf(d), 0777u);

  std::string link = dir->path() + "/link";
  ASSERT_EQ(::symlink(dir->path().c_str(), link.c_str()), 0);
  EXPECT_FALSE(CheckOwnDir(link).ok());
  EXPECT_EQ(CheckOwnDir(dir->path() + "/none").error().kind, ErrorKind::kNotFound);
}

// A cache folder named once: nothing below it is followed (a symlinked folder or file
// is refused, kDenied, naming what it is), and the file must still be ours.
TEST(OwnFile, BeneathFollowsNothingBelowTheRoot) {
  auto dir = TempDir::Create("own-file-test-");
  ASSERT_TRUE(MakeOwnDir(dir->path() + "/layers").ok());
  ASSERT_TRUE(WriteOwnFile(dir->path() + "/layers/e.json", "{}").ok());
  EXPECT_EQ(*ReadOwnFileBeneath(dir->path(), "layers/e.json", 10), "{}");

  ASSERT_EQ(::symlink("e.json", (dir->path() + "/layers/l.json").c_str()), 0);
  ExpectDenied(ReadOwnFileBeneath(dir->path(), "layers/l.json", 10), "is a symlink; refused");
  ASSERT_EQ(::symlink("layers", (dir->path() + "/alias").c_str()), 0);
  ExpectDenied(ReadOwnFileBeneath(dir->path(), "alias/e.json", 10), "is a symlink; refused");
  ASSERT_EQ(::mkfifo((dir->path() + "/layers/f.json").c_str(), 0600), 0);
  ExpectDenied(ReadOwnFileBeneath(dir->path(), "layers/f.json", 10), "is a FIFO; refused");
  ASSERT_EQ(::chmod((dir->path() + "/layers/e.json").c_str(), 0666), 0);
  ExpectDenied(ReadOwnFileBeneath(dir->path(), "layers/e.json", 10), "writable by group or others");
  EXPECT_EQ(ReadOwnFileBeneath(dir->path(), "layers/none", 10).error().kind, ErrorKind::kNotFound);
}

}  // namespace imgtool::fs
