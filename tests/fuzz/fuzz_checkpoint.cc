// Checkpoints (trainer/checkpoint/checkpoint.h ParseCheckpoint): a file in a checkpoint
// folder that may have been damaged or replaced. A fuzzer cannot forge the sha256 that
// closes the file, so half of the inputs (first byte odd) get it appended by the
// harness and are read with the run shape they claim (the parameter count only up to
// 4,096): that reaches every header check past the checksum. The rest are read as they are against a fixed shape.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "checkpoint/checkpoint.h"
#include "core/sha256.h"
#include "fuzz_util.h"

namespace {

trainer::RunShape Shape() { return {64, 8, 60000, 1e-3f}; }

template <typename T>
T At(const std::string& b, size_t offset) {
  T v{};
  if (b.size() >= offset + sizeof(T)) std::memcpy(&v, b.data() + offset, sizeof(T));
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  imgtool::fuzz::MaybeWriteSeeds([] {
    trainer::TrainState s;
    s.step = 937;
    s.epoch = 1;
    s.seed = 42;
    s.params = {0.5f, -1.25f, 3.0f};
    s.adam_m = {0.0f, 1e-3f, -2e-3f};
    s.adam_v = {1e-6f, 0.0f, 4e-6f};
    std::string good = trainer::SerializeCheckpoint(s, Shape());
    // The "fix the checksum" form: a marker byte, the file without its last 32 bytes.
    std::string body = "\x01" + good.substr(0, good.size() - 32);
    return imgtool::fuzz::Seeds{{"ckpt.bin", good}, {"ckpt-body.bin", body}};
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(imgtool::fuzz::Bytes(data, size));
  if (size > 0 && (data[0] & 1)) {
    bytes.erase(0, 1);
    trainer::Sha256Bytes sum = trainer::Sha256(bytes.data(), bytes.size());
    bytes.append(reinterpret_cast<const char*>(sum.data()), sum.size());
    // The shape the header claims (offsets after "TRNCKPT1", version, header size).
    // The parameter count too, when it is small: a real caller passes its model's count
    // (a constant, never the file's), so a larger claim is read against the model's.
    const uint64_t params = At<uint64_t>(bytes, 56);
    trainer::RunShape claimed{At<int32_t>(bytes, 40), At<int32_t>(bytes, 44), At<int32_t>(bytes, 48),
                              std::bit_cast<float>(At<uint32_t>(bytes, 52)), params <= 4096 ? params : 101770};
    (void)trainer::ParseCheckpoint(bytes, claimed, "ckpt-fuzz.bin");
    return 0;
  }
  (void)trainer::ParseCheckpoint(bytes, Shape(), "ckpt-fuzz.bin");
  return 0;
}
