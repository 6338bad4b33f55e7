// The job token: a secret every process of one job holds and nobody else does, so the
// rendezvous store (tcp_store.h) can tell the job's processes from anyone who reaches its
// port. It is an HMAC-SHA256 key: the store's handshake proves knowledge of it over fresh
// nonces, so the token itself never crosses the network, and no message, log line or
// error ever contains it (errors name where it came from: `source()`).
//
// Where it comes from is pluggable: a TokenSource is asked in order with the others, and
// the first that has one wins. Today: the environment variable IMGTOOL_FLEET_TOKEN. A
// launcher that gives every task of a job a credential nobody else gets (a scheduler's)
// adds its own source in front (DefaultTokenSources).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trainer {

inline constexpr char kJobTokenVariable[] = "IMGTOOL_FLEET_TOKEN";
// A token shorter than this is guessable; `openssl rand -hex 32` gives 64 characters.
inline constexpr size_t kJobTokenMinBytes = 16;
inline constexpr size_t kJobTokenMaxBytes = 4096;

using Mac = std::array<uint8_t, 32>;  // HMAC-SHA256

class JobToken {
 public:
  // Refuses a secret under kJobTokenMinBytes or over kJobTokenMaxBytes (kInvalidInput,
  // naming `source` and the length, never the secret).
  static Result<std::shared_ptr<const JobToken>> FromSecret(std::string secret, std::string source);
  ~JobToken();  // wipes the secret from memory
  JobToken(const JobToken&) = delete;
  JobToken& operator=(const JobToken&) = delete;

  // Where the token came from, for messages: "IMGTOOL_FLEET_TOKEN".
  const std::string& source() const { return source_; }
  // HMAC-SHA256 of `message` under the token.
  Mac Sign(std::string_view message) const;
  // Whether `got` is Sign(message); in constant time.
  bool Verify(std::string_view message, const uint8_t* got, size_t got_len) const;

 private:
  JobToken(std::string secret, std::string source) : secret_(std::move(secret)), source_(std::move(source)) {}
  std::string secret_;
  std::string source_;
};

using JobTokenPtr = std::shared_ptr<const JobToken>;

// A place a token may come from: the token, null when this source has none (the variable
// is unset), or an error (it is set but unusable: too short).
using TokenSource = std::function<Result<JobTokenPtr>()>;

// The environment variable `name`; unset or empty: none.
TokenSource EnvironmentTokenSource(const std::string& name = kJobTokenVariable);

// The first source that has a token; null when none has (the store then runs open).
Result<JobTokenPtr> FindJobToken(const std::vector<TokenSource>& sources);

// What the trainer and `imgtool fleet check` ask: IMGTOOL_FLEET_TOKEN.
std::vector<TokenSource> DefaultTokenSources();

}  // namespace trainer
