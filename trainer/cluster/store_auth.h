// The store's handshake (tcp_store.h, HELLO and CLAIM): what each side signs with the job
// token. Both messages start with their own label, so a proof made for one role is no
// proof for the other, and both cover the two nonces, so a proof seen on one connection
// proves nothing on another. Internal to trainer/cluster.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace trainer::store_auth {

inline constexpr size_t kNonceBytes = 32;
using Nonce = std::array<uint8_t, kNonceBytes>;

// Fresh random bytes from OpenSSL's generator; false when it fails.
bool FreshNonce(Nonce* out);

// What a client signs to claim `rank` on the connection where the server sent `server`
// and the client chose `client`; `who` is its self-description ("pid 12 on node-a").
std::string ClaimMessage(const Nonce& server, const Nonce& client, uint32_t rank, std::string_view who);

// What the server signs back once the claim is granted: the client learns that the store
// it talks to holds the token too (and is not something else on the chief's port).
std::string ChiefMessage(const Nonce& server, const Nonce& client, uint32_t rank);

}  // namespace trainer::store_auth
