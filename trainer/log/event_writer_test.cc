#include "log/event_writer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/crc32c.h"

namespace trainer {

TEST(EventWriter, ScalarEventBytes) {
  // Event{wall_time=1.0, step=5, summary{value{tag="a", simple_value=2.0}}}
  std::string e = EncodeScalarEvent(1.0, 5, "a", 2.0f);
  const std::string want = std::string("\x09\x00\x00\x00\x00\x00\x00\xf0\x3f", 9) + "\x10\x05" +
                           std::string(
                               "\x2a\x0a\x0a\x08\x0a\x01"
                               "a"
                               "\x15\x00\x00\x00\x40",
                               12);
  EXPECT_EQ(e, want);
}

TEST(EventWriter, RecordFraming) {
  std::string rec = FrameRecord("hello");
  ASSERT_EQ(rec.size(), 8u + 4 + 5 + 4);
  uint64_t len;
  std::memcpy(&len, rec.data(), 8);
  EXPECT_EQ(len, 5u);
  uint32_t crc;
  std::memcpy(&crc, rec.data() + 8, 4);
  EXPECT_EQ(crc, MaskedCrc32c(rec.data(), 8));
  std::memcpy(&crc, rec.data() + 17, 4);
  EXPECT_EQ(crc, MaskedCrc32c("hello", 5));
}

TEST(EventWriter, WritesFileVersionFirst) {
  auto dir = (std::filesystem::temp_directory_path() / "trainer_events_test").string();
  std::filesystem::remove_all(dir);
  std::string path;
  {
    auto w = EventWriter::Open(dir);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->AddScalar("train/loss", 1, 0.5f).ok());
    path = (*w)->path();
  }
  EXPECT_EQ(std::filesystem::path(path).filename().string().rfind("events.out.tfevents.", 0), 0u);
  auto bytes = ReadFile(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_NE(bytes->find("brain.Event:2"), std::string::npos);
  EXPECT_NE(bytes->find("train/loss"), std::string::npos);
}

}  // namespace trainer
