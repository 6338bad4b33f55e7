// TensorBoard event files: TFRecord framing around serialized tensorflow.Event protos
// with scalar summaries. Hand-encoded (a few protobuf fields), no protobuf dependency.
//
// TFRecord:  u64 length | u32 masked_crc32c(length) | data | u32 masked_crc32c(data)
// Event:     1 wall_time (double)  2 step (int64)  3 file_version (string)  5 summary
// Summary:   1 value (repeated Value);  Value: 1 tag (string)  2 simple_value (float)
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "core/result.h"

namespace trainer {

// One serialized Event with a scalar summary (exposed for tests).
std::string EncodeScalarEvent(double wall_time, int64_t step, const std::string& tag, float value);
std::string EncodeFileVersionEvent(double wall_time);
// One TFRecord frame around `data`.
std::string FrameRecord(const std::string& data);

class EventWriter {
 public:
  // Creates logdir and LOGDIR/events.out.tfevents.<unix seconds>.<hostname>.<pid>.
  static Result<std::unique_ptr<EventWriter>> Open(const std::string& logdir);
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  const std::string& path() const { return path_; }
  Status AddScalar(const std::string& tag, int64_t step, float value);

 private:
  EventWriter(std::FILE* f, std::string path) : file_(f), path_(std::move(path)) {}
  Status Write(const std::string& event);

  std::FILE* file_;
  std::string path_;
};

}  // namespace trainer
