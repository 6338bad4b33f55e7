// Our gzip encoder (imgtool/archive/deflate.h, parallel_gzip.h) on any bytes a layer
// might hold: the output must inflate, with zlib (an independent decoder), back to the
// input, and must not depend on the thread count or on how the input was cut into
// writes. An input whose first byte has the top bit set is repeated past the 1 MiB chunk
// size, so the priming of one chunk with the previous one's tail is reached too.
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "archive/compress.h"

namespace {

using namespace imgtool::archive;

class VectorSink : public internal::ByteSink {
 public:
  imgtool::Status Write(const uint8_t* data, size_t len) override {
    bytes.insert(bytes.end(), data, data + len);
    return imgtool::Status::Ok();
  }
  std::vector<uint8_t> bytes;
};

std::vector<uint8_t> Gzip(const std::vector<uint8_t>& in, int threads, size_t piece) {
  VectorSink sink;
  auto c = internal::NewCompressor(Compression::kGzip, sink, threads);
  if (!c.ok()) std::abort();
  for (size_t off = 0; off < in.size(); off += piece) {
    if (!(*c)->Write(in.data() + off, std::min(piece, in.size() - off)).ok()) std::abort();
  }
  if (!(*c)->Finish().ok()) std::abort();
  return sink.bytes;
}

void CheckInflatesTo(const std::vector<uint8_t>& gz, const std::vector<uint8_t>& want) {
  z_stream z{};
  if (inflateInit2(&z, 16 + 15) != Z_OK) std::abort();
  std::vector<uint8_t> out(want.size() + 1);
  z.next_in = const_cast<uint8_t*>(gz.data());
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&z, Z_FINISH);
  bool ok = rc == Z_STREAM_END && z.avail_in == 0 && z.total_out == want.size() &&
            (want.empty() || std::memcmp(out.data(), want.data(), want.size()) == 0);
  inflateEnd(&z);
  if (!ok) std::abort();  // the encoder wrote a stream that is not its input
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> in(data, data + size);
  if (size > 0 && (data[0] & 0x80) != 0) {
    while (in.size() < (1u << 20) + 4096) {
      in.insert(in.end(), data, data + size);
      in.push_back(static_cast<uint8_t>(in.size()));  // not quite periodic
    }
  }
  size_t piece = size > 1 ? 1 + data[1] * 97u : in.size() + 1;
  std::vector<uint8_t> one = Gzip(in, 1, in.size() + 1);
  CheckInflatesTo(one, in);
  if (Gzip(in, 3, piece) != one) std::abort();  // threads or write sizes changed the bytes
  return 0;
}
