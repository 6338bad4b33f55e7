// The rendezvous store's wire format (trainer/cluster/store_request.h ReadStoreRequest):
// the requests the chief's server reads from any peer that reaches its port. The input is
// the byte stream of one connection: a thread sends it into one end of a socket pair
// (the parser reads with recv) and closes it; requests are read from the other end until
// one is refused or the bytes run out, as the server would until it drops the peer. The
// budget is the server's default, so a declared length past it is refused as it would be
// there.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

#include "cluster/store_request.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) std::abort();
  std::thread peer([fd = fds[1], data, size] {
    for (size_t sent = 0; sent < size;) {
      ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
      if (n <= 0) break;  // the server end closed: it dropped the peer
      sent += static_cast<size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
  });
  trainer::StoreLimits limits;
  trainer::StoreBudget budget(limits.max_held_bytes);
  for (;;) {
    trainer::StoreRequest req(budget);
    std::string why;
    if (!trainer::ReadStoreRequest(fds[0], limits, std::nullopt, &req, &why)) break;
  }
  ::close(fds[0]);
  peer.join();
  ::close(fds[1]);
  return 0;
}
