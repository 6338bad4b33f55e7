// The rendezvous store's wire format (trainer/cluster/store_request.h StoreRequestParser):
// the requests the chief's server reads from any peer that reaches its port. The input is
// the byte stream of one connection, buffered in pieces as the server's loop would
// receive it; the parser checks each piece (as the server does before counting its
// bytes), then resumes; requests are read until one is refused or the bytes run out, as
// the server would until it drops the peer. The budget is the server's default.
//
// Each input is read twice: as by an open store, and as by a store with a job token,
// which lets nothing but HELLO and CLAIM through until a CLAIM carries a valid proof
// (the harness plays a server whose nonce is all zeros and whose token is kSecret, so
// make_corpus.py's handshake seed gets past the gate). Every key read goes through
// OwnerOf, and every proof through JobToken::Verify, whose answer must agree with a
// plain comparison against the expected MAC.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

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

// Feeds the stream in pieces (sizes from its own bytes), as the server's buffer fills,
// resuming the parser each time, until a request is refused or the bytes run out.
void ReadStream(const uint8_t* data, size_t size, bool token_required) {
  trainer::StoreLimits limits;
  trainer::StoreBudget budget(limits.max_held_bytes);
  trainer::StoreRequestParser parser;
  auto req = std::make_unique<trainer::StoreRequest>(budget);
  bool claimed = false;
  std::string buffered;
  size_t start = 0;  // the current request's first byte in `buffered`
  for (size_t fed = 0; fed < size;) {
    const size_t piece = std::min<size_t>(size - fed, 1 + data[fed] % 97);
    buffered.append(reinterpret_cast<const char*>(data + fed), piece);
    fed += piece;
    for (;;) {
      std::string why;
      const auto gate = token_required && !claimed ? trainer::StoreGate::kHandshakeOnly : trainer::StoreGate::kAny;
      auto step = parser.Parse(buffered.data() + start, buffered.size() - start, gate, req.get(), &why, false);
      if (step == trainer::StoreRequestParser::Step::kDone) {
        step = parser.Parse(buffered.data() + start, buffered.size() - start, gate, req.get(), &why);
      }
      if (step == trainer::StoreRequestParser::Step::kBad) return;
      if (step == trainer::StoreRequestParser::Step::kMore) break;
      for (const auto& key : req->keys) (void)trainer::DescribeOwner(trainer::OwnerOf(key));
      if (req->op == trainer::store_wire::kClaim && ProvesToken(*req)) claimed = true;
      start += parser.size_taken();
      parser.Reset();
      req = std::make_unique<trainer::StoreRequest>(budget);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ReadStream(data, size, false);
  ReadStream(data, size, true);
  return 0;
}
