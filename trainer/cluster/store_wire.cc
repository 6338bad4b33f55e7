#include "cluster/store_wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace trainer::store_wire {
namespace {

// Reads what has arrived, up to n bytes: how many (0: closed or failed; -1: late).
ssize_t ReadSome(int fd, void* out, size_t n, Deadline deadline) {
  for (;;) {
    int wait_ms = -1;
    if (deadline) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return -1;
      wait_ms = static_cast<int>(std::min<int64_t>(left, INT32_MAX));
    }
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, wait_ms);
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) return -1;
    if (rc < 0) return 0;
    ssize_t r = ::recv(fd, out, n, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    return r < 0 ? 0 : r;
  }
}

}  // namespace

void PutU32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t GetU32(const uint8_t* b) {
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

bool WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

Read ReadExact(int fd, void* out, size_t n, Deadline deadline) {
  char* p = static_cast<char*>(out);
  while (n > 0) {
    ssize_t r = ReadSome(fd, p, n, deadline);
    if (r < 0) return Read::kLate;
    if (r == 0) return Read::kClosed;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return Read::kOk;
}

Read ReadU32(int fd, uint32_t* v, Deadline deadline) {
  uint8_t b[4];
  Read r = ReadExact(fd, b, 4, deadline);
  if (r == Read::kOk) *v = GetU32(b);
  return r;
}

Read ReadGrowing(int fd, size_t n, std::string* out, Deadline deadline, const std::function<bool(size_t)>& grow) {
  char chunk[16 << 10];
  const size_t want = out->size() + n;
  while (out->size() < want) {
    ssize_t r = ReadSome(fd, chunk, std::min(sizeof(chunk), want - out->size()), deadline);
    if (r < 0) return Read::kLate;
    if (r == 0) return Read::kClosed;
    const size_t need = out->size() + static_cast<size_t>(r);
    if (need > out->capacity()) {
      const size_t before = out->capacity();
      const size_t cap = std::min(want, std::max(need, 2 * before));
      if (!grow(cap - before)) return Read::kRefused;
      out->reserve(cap);
      // The library may round a reservation up (libstdc++: to twice the old capacity).
      if (out->capacity() > cap && !grow(out->capacity() - cap)) return Read::kRefused;
    }
    out->append(chunk, static_cast<size_t>(r));
  }
  return Read::kOk;
}

std::string OpName(uint8_t op) {
  switch (op) {
    case kSet:
      return "SET";
    case kGet:
      return "GET";
    case kCheck:
      return "CHECK";
    case kWait:
      return "WAIT";
    case kHello:
      return "HELLO";
    case kClaim:
      return "CLAIM";
    default:
      return "op " + std::to_string(op);
  }
}

std::string Printable(const std::string& s, size_t max) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    const char c = s[i];
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  if (s.size() > max) out += "...";
  return out;
}

std::string Seconds(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%gs", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

}  // namespace trainer::store_wire
