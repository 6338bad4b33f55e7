#include "data/idx.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "fs/safe_open.h"

namespace trainer {
namespace {

Error Bad(const std::string& name, const std::string& why) {
  return MakeError(ErrorKind::kIntegrity, name + ": " + why);
}

uint32_t BigEndian32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

}  // namespace

Result<IdxArray> ParseIdx(const std::string& bytes, int expected_ndim, const std::string& name) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < 4) return Bad(name, "truncated: " + std::to_string(bytes.size()) + " bytes, no IDX header");
  if (p[0] != 0 || p[1] != 0) return Bad(name, "bad magic number: not an IDX file");
  if (p[2] != 0x08) return Bad(name, "IDX element type 0x" + std::to_string(p[2]) + " is not unsigned byte (0x08)");
  int ndim = p[3];
  if (ndim != expected_ndim) {
    return Bad(name, "has " + std::to_string(ndim) + " dimensions, expected " + std::to_string(expected_ndim));
  }
  size_t header = 4 + 4 * static_cast<size_t>(ndim);
  if (bytes.size() < header) return Bad(name, "truncated IDX header");
  IdxArray a;
  uint64_t count = 1;
  for (int d = 0; d < ndim; ++d) {
    a.dims.push_back(BigEndian32(p + 4 + std::ptrdiff_t{4} * d));
    count *= a.dims.back();
  }
  if (count > (uint64_t{1} << 34)) return Bad(name, "implausible dimensions");
  uint64_t have = bytes.size() - header;
  if (have < count) {
    return Bad(name,
               "truncated: payload has " + std::to_string(have) + " bytes, dimensions need " + std::to_string(count));
  }
  if (have > count) {
    return Bad(name, "has " + std::to_string(have - count) + " trailing bytes after the payload");
  }
  a.data.assign(p + header, p + header + count);
  return a;
}

Result<IdxArray> ReadIdxGz(const std::string& path, int expected_ndim) {
  // Opened without waiting: a FIFO named like a data file is refused, not read forever.
  auto fd = imgtool::fs::OpenRegular(path);
  if (!fd.ok() && fd.error().kind == ErrorKind::kNotFound) {
    return MakeError(ErrorKind::kNotFound, path + ": cannot open: " + std::strerror(ENOENT));
  }
  if (!fd.ok()) return fd.error();
  // gzdopen owns (and gzclose closes) its descriptor; ours closes with `fd`.
  std::unique_ptr<gzFile_s, decltype(&gzclose)> gz(gzdopen(::dup(fd->get()), "rb"), gzclose);
  if (!gz) return MakeError(ErrorKind::kInternal, path + ": cannot open: " + std::strerror(errno));
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    int n = gzread(gz.get(), buf, sizeof(buf));
    if (n < 0) {
      int errnum = 0;
      const char* msg = gzerror(gz.get(), &errnum);
      return Bad(path, std::string("corrupt gzip stream: ") + msg);
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  // zlib reports a cut-off gzip stream only through gzerror after EOF.
  int errnum = 0;
  const char* msg = gzerror(gz.get(), &errnum);
  if (errnum != Z_OK && errnum != Z_STREAM_END) return Bad(path, std::string("corrupt gzip stream: ") + msg);
  return ParseIdx(bytes, expected_ndim, path);
}

}  // namespace trainer
