// DirLock serializes read-modify-write updates across threads (each holder opens the
// folder afresh, so flock applies between threads of one process as between processes);
// FileIdentity moves with every write, even one that sets mtime back; temporary names
// never collide between threads.
#include "fs/dir_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fs/atomic_file.h"
#include "fs/file_identity.h"
#include "fs/own_file.h"

namespace imgtool::fs {

namespace {

struct stat StatOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

}  // namespace

// Each thread reads a counter file, yields, and writes it back incremented: without the
// lock, increments are lost (the same shape as two builds tagging one index.json).
TEST(DirLock, SerializesReadModifyWriteAcrossThreads) {
  auto dir = TempDir::Create("dir-lock-test-");
  const std::string counter = dir->path() + "/counter";
  ASSERT_TRUE(WriteFileAtomic(counter, "0").ok());
  constexpr int kThreads = 8, kRounds = 25;
  std::vector<std::thread> threads;
  std::vector<Status> failures(kThreads, Status::Ok());
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        auto lock = DirLock::Exclusive(dir->path());
        if (!lock.ok()) {
          failures[t] = lock.error();
          return;
        }
        int n = std::stoi(*ReadSmallFile(counter));
        std::this_thread::yield();
        if (auto st = WriteFileAtomic(counter, std::to_string(n + 1)); !st.ok()) {
          failures[t] = st;
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& f : failures) EXPECT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(*ReadSmallFile(counter), std::to_string(kThreads * kRounds));
}

TEST(DirLock, NamesAMissingFolder) {
  auto dir = TempDir::Create("dir-lock-test-");
  auto lock = DirLock::Exclusive(dir->path() + "/none");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(lock.error().message.find("locking " + dir->path() + "/none: No such file"), std::string::npos)
      << lock.error().message;
}

TEST(FileIdentity, RoundTripsAndRefusesAnythingElse) {
  FileIdentity id{1, 2, 3, 4000000005, -6};
  EXPECT_EQ(id.str(), "dev 1 ino 2 size 3 mtime 4000000005 ctime -6");
  EXPECT_EQ(FileIdentity::Parse(id.str()), id);
  EXPECT_FALSE(FileIdentity::Parse(id.str() + " extra"));
  EXPECT_FALSE(FileIdentity::Parse("dev 1 ino 2 size 3 mtime 4 ctim 6"));
  EXPECT_FALSE(FileIdentity::Parse("dev 1  ino 2 size 3 mtime 4 ctime 6"));
  EXPECT_FALSE(FileIdentity::Parse(""));
}

// What the layer cache relies on: an in-place write of the same size with mtime set back
// still gives another identity (ctime), and so does a replacement under the same name.
TEST(FileIdentity, MovesWithAWriteEvenWhenMtimeIsSetBack) {
  auto dir = TempDir::Create("identity-test-");
  const std::string f = dir->path() + "/blob";
  ASSERT_TRUE(WriteOwnFile(f, "original").ok());
  struct stat before = StatOf(f);
  FileIdentity id = FileIdentity::Of(before);
  EXPECT_EQ(FileIdentity::Of(StatOf(f)), id);  // unchanged: the same identity

  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the timestamp tick
  int fd = ::open(f.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "ALTERED!", 8, 0), 8);
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::futimens(fd, times), 0);  // mtime put back, as an attacker would
  ::close(fd);
  struct stat after = StatOf(f);
  EXPECT_EQ(after.st_size, before.st_size);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  EXPECT_NE(FileIdentity::Of(after), id);

  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(WriteOwnFile(f, "original").ok());  // replaced by rename: another inode
  EXPECT_NE(FileIdentity::Of(StatOf(f)), id);
}

TEST(UniqueTempPath, NeverRepeatsAcrossThreads) {
  constexpr int kThreads = 8, kNames = 500;
  std::vector<std::vector<std::string>> names(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kNames; ++i) names[t].push_back(UniqueTempPath("/layout/blobs/sha256/ab"));
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::string> all;
  for (const auto& v : names) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kNames));
  EXPECT_EQ(names[0][0].rfind("/layout/blobs/sha256/.tmp-ab-", 0), 0u) << names[0][0];
}

}  // namespace imgtool::fs
