#include "cluster/store_auth.h"

#include <openssl/rand.h>

#include "cluster/store_wire.h"

namespace trainer::store_auth {
namespace {

std::string Message(std::string_view label, const Nonce& server, const Nonce& client, uint32_t rank) {
  std::string m(label);
  m.push_back('\0');
  m.append(reinterpret_cast<const char*>(server.data()), server.size());
  m.append(reinterpret_cast<const char*>(client.data()), client.size());
  store_wire::PutU32(&m, rank);
  return m;
}

}  // namespace

bool FreshNonce(Nonce* out) { return RAND_bytes(out->data(), static_cast<int>(out->size())) == 1; }

std::string ClaimMessage(const Nonce& server, const Nonce& client, uint32_t rank, std::string_view who) {
  std::string m = Message("imgtool rendezvous store v1: claim", server, client, rank);
  store_wire::PutU32(&m, static_cast<uint32_t>(who.size()));
  m.append(who);
  return m;
}

std::string ChiefMessage(const Nonce& server, const Nonce& client, uint32_t rank) {
  return Message("imgtool rendezvous store v1: chief", server, client, rank);
}

}  // namespace trainer::store_auth
