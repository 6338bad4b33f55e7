// The rendezvous store's wire format (trainer/cluster/store_request.h ReadStoreRequest):
// the requests the chief's server reads from any peer that reaches its port. The input is
// the byte stream of one connection: a thread sends it into one end of a socket pair
// (the parser reads with recv) and closes it; requests are read from the other end until
// one is refused or the bytes run out, as the server would until it drops the peer. The
// budget is the server's default, so a declared length past it is refused as it would be
// there.
//
// Each input is read twice: as by an open store, and as by a store with a job token,
// which lets nothing but HELLO and CLAIM through until a CLAIM carries a valid proof
// (the harness plays a server whose nonce is all zeros and whose token is kSecret, so
// make_corpus.py's handshake seed gets past the gate). Every key read goes through
// OwnerOf, and every proof through JobToken::Verify, whose answer must agree with a
// plain comparison against the expected MAC.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "cluster/job_token.h"
#include "cluster/store_auth.h"
#include "cluster/store_keys.h"
#include "cluster/store_request.h"
#include "fuzz_util.h"

namespace {

constexpr char kSecret[] = "fuzz-store-token-0123456789";  // make_corpus.py signs with it too

const trainer::JobToken& Token() {
  static const trainer::JobTokenPtr token = *trainer::JobToken::FromSecret(kSecret, "fuzz");
  return *token;
}

// Whether a CLAIM proves the token to a server that sent the all-zero nonce; aborts when
// Verify and a plain comparison disagree.
bool ProvesToken(const trainer::StoreRequest& req) {
  trainer::store_auth::Nonce server{}, client{};
  if (req.nonce.size() != client.size()) std::abort();
  std::memcpy(client.data(), req.nonce.data(), client.size());
  const std::string message = trainer::store_auth::ClaimMessage(server, client, req.rank, req.who);
  const trainer::Mac want = Token().Sign(message);
  const bool plain = req.proof.size() == want.size() && std::memcmp(req.proof.data(), want.data(), want.size()) == 0;
  const bool verified = Token().Verify(message, reinterpret_cast<const uint8_t*>(req.proof.data()), req.proof.size());
  if (plain != verified) std::abort();
  return verified;
}

void ReadStream(const uint8_t* data, size_t size, bool token_required) {
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
  bool claimed = false;
  for (;;) {
    trainer::StoreRequest req(budget);
    std::string why;
    const auto gate = token_required && !claimed ? trainer::StoreGate::kHandshakeOnly : trainer::StoreGate::kAny;
    if (!trainer::ReadStoreRequest(fds[0], limits, std::nullopt, gate, &req, &why)) break;
    for (const auto& key : req.keys) (void)trainer::DescribeOwner(trainer::OwnerOf(key));
    if (req.op == trainer::store_wire::kClaim && ProvesToken(req)) claimed = true;
  }
  ::close(fds[0]);
  peer.join();
  ::close(fds[1]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ReadStream(data, size, false);
  ReadStream(data, size, true);
  return 0;
}
