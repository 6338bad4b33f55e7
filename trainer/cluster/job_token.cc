#include "cluster/job_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdlib>

namespace trainer {

Result<JobTokenPtr> JobToken::FromSecret(std::string secret, std::string source) {
  const size_t n = secret.size();
  if (n < kJobTokenMinBytes || n > kJobTokenMaxBytes) {
    OPENSSL_cleanse(secret.data(), secret.size());
    return MakeError(ErrorKind::kInvalidInput, source + ": a job token of " + std::to_string(n) + " bytes; it needs " +
                                                   std::to_string(kJobTokenMinBytes) + " to " +
                                                   std::to_string(kJobTokenMaxBytes) +
                                                   " (e.g. `openssl rand -hex 32`)");
  }
  return JobTokenPtr(new JobToken(std::move(secret), std::move(source)));
}

JobToken::~JobToken() { OPENSSL_cleanse(secret_.data(), secret_.size()); }

Mac JobToken::Sign(std::string_view message) const {
  Mac mac{};
  unsigned int len = 0;
  // HMAC() with EVP_sha256 cannot fail for in-memory input short of memory exhaustion;
  // then the MAC stays zero and every verification fails (closed).
  ::HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(), &len);
  return mac;
}

bool JobToken::Verify(std::string_view message, const uint8_t* got, size_t got_len) const {
  if (got_len != Mac{}.size()) return false;
  const Mac want = Sign(message);
  return CRYPTO_memcmp(want.data(), got, want.size()) == 0;
}

TokenSource EnvironmentTokenSource(const std::string& name) {
  return [name]() -> Result<JobTokenPtr> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr || *value == '\0') return JobTokenPtr();
    return JobToken::FromSecret(value, name);
  };
}

Result<JobTokenPtr> FindJobToken(const std::vector<TokenSource>& sources) {
  for (const auto& source : sources) {
    auto token = source();
    if (!token.ok() || *token) return token;
  }
  return JobTokenPtr();
}

std::vector<TokenSource> DefaultTokenSources() { return {EnvironmentTokenSource()}; }

}  // namespace trainer
