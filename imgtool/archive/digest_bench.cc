// digest_bench: the floor of `verify --full` on one layer blob, for bench/verify_throughput.
// Times each stage alone on one thread (read, sha256 as stored, inflate, sha256 of what it
// inflates to) in thread CPU seconds (steadier than wall time on a shared machine), then
// DigestLayer on one thread and on a pipeline (wall and process CPU), and prints
// key=value lines. A benchmark driver, not a user tool.
//
//   digest_bench BLOB
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "archive/layer.h"
#include "archive/layer_decoder.h"
#include "fs/safe_open.h"
#include "oci/main_guard.h"

namespace {

using imgtool::archive::internal::DecodedSink;

constexpr size_t kChunk = 1 << 20;

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double ThreadCpu() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}
double Cpu() {
  rusage r{};
  ::getrusage(RUSAGE_SELF, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

// Decodes into one buffer; hashes it (timing only the hash) when asked.
class Sink : public DecodedSink {
 public:
  explicit Sink(bool hash) : hash_(hash), buf_(new uint8_t[kChunk]) {}
  uint8_t* Room(size_t& size) override {
    size = kChunk;
    return buf_.get();
  }
  void Wrote(size_t n) override {
    bytes += n;
    if (!hash_) return;
    double t = ThreadCpu();
    sha.Update(buf_.get(), n);
    hash_s += ThreadCpu() - t;
  }
  uint64_t bytes = 0;
  double hash_s = 0;
  imgtool::oci::Sha256 sha;

 private:
  bool hash_;
  std::unique_ptr<uint8_t[]> buf_;
};

// One pass over the blob: read it, and hash and/or inflate it. Returns CPU seconds.
double Pass(const std::string& path, bool hash, bool inflate, Sink& sink) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  std::unique_ptr<uint8_t[]> buf(new uint8_t[kChunk]);
  imgtool::oci::Sha256 raw;
  std::unique_ptr<imgtool::archive::internal::Decoder> decoder;
  double t = ThreadCpu();
  for (ssize_t got; (got = ::read(fd, buf.get(), kChunk)) > 0;) {
    if (hash) raw.Update(buf.get(), static_cast<size_t>(got));
    if (inflate && !decoder) {
      decoder = imgtool::archive::internal::DecoderFor(buf.get(), static_cast<size_t>(got), path);
      if (!decoder) return -1;
      decoder->set_sink(&sink);
    }
    if (decoder && !decoder->Feed(buf.get(), static_cast<size_t>(got)).ok()) return -1;
  }
  ::close(fd);
  return ThreadCpu() - t;
}

void Digest(const std::string& path, const char* key, imgtool::archive::CoreBudget* cores) {
  double w = Now(), c = Cpu();
  auto fd = imgtool::fs::UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  imgtool::fs::FdReader reader(std::move(fd));
  auto d = imgtool::archive::DigestLayer(reader, path, true, cores);
  if (!d.ok()) std::fprintf(stderr, "digest_bench: %s\n", d.error().message.c_str());
  std::printf("%s_wall=%.3f\n%s_cpu=%.3f\n", key, Now() - w, key, Cpu() - c);
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: digest_bench BLOB\n");
    return 2;
  }
  const std::string path = argv[1];
  Sink none(false), hashed(true);
  double read = Pass(path, false, false, none);
  double sha_stored = Pass(path, true, false, none) - read;
  double inflate = Pass(path, false, true, none) - read;
  double inflate_and_hash = Pass(path, false, true, hashed) - read;
  if (read < 0 || sha_stored < -read || inflate < -read || inflate_and_hash < -read) {
    std::fprintf(stderr, "digest_bench: %s: not a readable gzip or zstd blob\n", path.c_str());
    return 1;
  }
  std::printf("decompressed_bytes=%llu\n", static_cast<unsigned long long>(hashed.bytes));
  std::printf("read_s=%.3f\nsha_stored_s=%.3f\ninflate_s=%.3f\nsha_decompressed_s=%.3f\n", read, sha_stored, inflate,
              hashed.hash_s);
  Digest(path, "one_thread", nullptr);
  imgtool::archive::CoreBudget spare(1);
  Digest(path, "pipeline", &spare);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return imgtool::RunGuarded("digest_bench", [&] { return Main(argc, argv); });
}
