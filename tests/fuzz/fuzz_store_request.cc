// The rendezvous store's wire format (trainer/cluster/tcp_store.h ReadStoreRequest): the
// requests the chief's server reads from any peer that reaches its port. The input is
// the byte stream of one connection; requests are read until one is refused or the
// bytes run out, as the server would until it drops the peer.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "cluster/tcp_store.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t at = 0;
  auto read = [&](void* out, size_t n) {
    if (n > size - at) return false;
    if (n > 0) std::memcpy(out, data + at, n);
    at += n;
    return true;
  };
  while (trainer::ReadStoreRequest(read)) {
  }
  return 0;
}
