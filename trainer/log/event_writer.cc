#include "log/event_writer.h"

#include <unistd.h>

#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/crc32c.h"

namespace trainer {
namespace {

static_assert(std::endian::native == std::endian::little, "fixed-width protobuf fields are little-endian");

double Now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

void Varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void Key(std::string* out, int field, int wire_type) { Varint(out, static_cast<uint64_t>(field) << 3 | wire_type); }

template <typename V>
void Fixed(std::string* out, V v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

void Bytes(std::string* out, int field, const std::string& b) {
  Key(out, field, 2);
  Varint(out, b.size());
  out->append(b);
}

std::string EventHeader(double wall_time, int64_t step) {
  std::string e;
  Key(&e, 1, 1);  // wall_time, fixed64
  Fixed(&e, wall_time);
  if (step != 0) {
    Key(&e, 2, 0);  // step, varint
    Varint(&e, static_cast<uint64_t>(step));
  }
  return e;
}

}  // namespace

std::string EncodeScalarEvent(double wall_time, int64_t step, const std::string& tag, float value) {
  std::string v;
  Bytes(&v, 1, tag);
  Key(&v, 2, 5);  // simple_value, fixed32
  Fixed(&v, value);
  std::string summary;
  Bytes(&summary, 1, v);
  std::string e = EventHeader(wall_time, step);
  Bytes(&e, 5, summary);
  return e;
}

std::string EncodeFileVersionEvent(double wall_time) {
  std::string e = EventHeader(wall_time, 0);
  Bytes(&e, 3, "brain.Event:2");
  return e;
}

std::string FrameRecord(const std::string& data) {
  std::string out;
  uint64_t len = data.size();
  Fixed(&out, len);
  Fixed(&out, MaskedCrc32c(&len, sizeof(len)));
  out.append(data);
  Fixed(&out, MaskedCrc32c(data.data(), data.size()));
  return out;
}

Result<std::unique_ptr<EventWriter>> EventWriter::Open(const std::string& logdir) {
  std::error_code ec;
  std::filesystem::create_directories(logdir, ec);
  if (ec) return MakeError(ErrorKind::kInternal, "creating " + logdir + ": " + ec.message());
  char host[256] = "localhost";
  ::gethostname(host, sizeof(host) - 1);
  std::string path = logdir + "/events.out.tfevents." + std::to_string(static_cast<long long>(Now())) + "." + host +
                     "." + std::to_string(::getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return MakeError(ErrorKind::kInternal, "creating " + path + ": " + std::strerror(errno));
  std::unique_ptr<EventWriter> w(new EventWriter(f, path));
  TRAINER_TRY(w->Write(EncodeFileVersionEvent(Now())));
  return w;
}

EventWriter::~EventWriter() { std::fclose(file_); }

Status EventWriter::AddScalar(const std::string& tag, int64_t step, float value) {
  return Write(EncodeScalarEvent(Now(), step, tag, value));
}

Status EventWriter::Write(const std::string& event) {
  std::string rec = FrameRecord(event);
  if (std::fwrite(rec.data(), 1, rec.size(), file_) != rec.size() || std::fflush(file_) != 0) {
    return MakeError(ErrorKind::kInternal, "writing " + path_ + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace trainer
