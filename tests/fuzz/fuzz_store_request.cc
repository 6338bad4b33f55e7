// The rendezvous store's wire format (trainer/cluster/store_request.h ReadStoreRequest):
// the requests the chief's server reads from any peer that reaches its port. The input is
// the byte stream of one connection, served from a memfd (the parser reads a descriptor);
// requests are read until one is refused or the bytes run out, as the server would until
// it drops the peer. The budget is the server's default, so a declared length past it is
// refused as it would be there.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/store_request.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = memfd_create("store-request", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(fd, data + written, size - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  lseek(fd, 0, SEEK_SET);
  trainer::StoreLimits limits;
  trainer::StoreBudget budget(limits.max_held_bytes);
  for (;;) {
    trainer::StoreRequest req(budget);
    std::string why;
    if (!trainer::ReadStoreRequest(fd, limits, std::nullopt, &req, &why)) break;
  }
  close(fd);
  return 0;
}
