// Known diff_ids are read back only as Record wrote them, for the blob they name, from
// files and a folder that only this user can write; everything else is a miss.
#include "archive/known_diff_ids.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/atomic_file.h"
#include "fs/own_file.h"

namespace imgtool::archive {

namespace {

const oci::Digest kBlobA = oci::Digest::Of("blob a");
const oci::Digest kBlobB = oci::Digest::Of("blob b");
const KnownDiffId kDiffA{oci::Digest::Of("tar a"), 1234};

struct KnownDiffIdsTest : ::testing::Test {
  void SetUp() override {
    tmp = *fs::TempDir::Create("known-diff-ids-test-");
    known = KnownDiffIds::In(tmp.path());
    known.Record(kBlobA, kDiffA);
  }
  std::string EntryFor(const oci::Digest& blob) const { return known.dir() + "/" + blob.hex(); }
  fs::TempDir tmp;
  KnownDiffIds known;
};

}  // namespace

TEST_F(KnownDiffIdsTest, RecordThenFind) {
  auto k = known.Find(kBlobA);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->diff_id, kDiffA.diff_id);
  EXPECT_EQ(k->uncompressed_size, 1234u);
  EXPECT_FALSE(known.Find(kBlobB).has_value());
}

TEST_F(KnownDiffIdsTest, DisabledFindsAndRecordsNothing) {
  KnownDiffIds off;
  off.Record(kBlobB, kDiffA);
  EXPECT_FALSE(off.Find(kBlobA).has_value());
  EXPECT_FALSE(fs::Exists(EntryFor(kBlobB)));
}

TEST_F(KnownDiffIdsTest, AnEntryUnderAnotherBlobsNameIsRefused) {
  ASSERT_EQ(::link(EntryFor(kBlobA).c_str(), EntryFor(kBlobB).c_str()), 0);
  EXPECT_FALSE(known.Find(kBlobB).has_value());
  EXPECT_TRUE(known.Find(kBlobA).has_value());
}

TEST_F(KnownDiffIdsTest, AnEditedEntryIsRefused) {
  std::string text = *fs::ReadSmallFile(EntryFor(kBlobA));
  for (const std::string& edited : {text + "x", text + " ", text.substr(0, text.size() - 1), std::string("")}) {
    ASSERT_TRUE(fs::WriteOwnFile(EntryFor(kBlobA), edited).ok());
    EXPECT_FALSE(known.Find(kBlobA).has_value()) << edited;
  }
}

TEST_F(KnownDiffIdsTest, EntriesOthersCouldWriteAreRefused) {
  ASSERT_EQ(::chmod(EntryFor(kBlobA).c_str(), 0666), 0);
  EXPECT_FALSE(known.Find(kBlobA).has_value());
  ASSERT_EQ(::chmod(EntryFor(kBlobA).c_str(), 0644), 0);
  ASSERT_TRUE(known.Find(kBlobA).has_value());

  ASSERT_EQ(::chmod(known.dir().c_str(), 0777), 0);
  EXPECT_FALSE(known.Find(kBlobA).has_value());
  known.Record(kBlobB, kDiffA);  // nothing is written into a folder Find refuses
  EXPECT_FALSE(fs::Exists(EntryFor(kBlobB)));
}

TEST_F(KnownDiffIdsTest, ASymlinkedEntryIsRefused) {
  std::string target = tmp.path() + "/elsewhere";
  ASSERT_EQ(::rename(EntryFor(kBlobA).c_str(), target.c_str()), 0);
  ASSERT_EQ(::symlink(target.c_str(), EntryFor(kBlobA).c_str()), 0);
  EXPECT_FALSE(known.Find(kBlobA).has_value());
}

}  // namespace imgtool::archive
