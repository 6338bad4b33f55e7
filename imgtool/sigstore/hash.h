// The hash algorithms a Sigstore message signature may be made over, and only these:
// sha256, sha384 and sha512 (an allow-list: a name outside it is refused, never guessed).
// The bundle's messageDigest, a hashedrekord entry and the verifier must agree on one; a
// P-384 key may sign a sha256 digest (sigstore-python, and clients before 2024, did), so
// the algorithm comes from what the bundle and its log entry say, not from the key.
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace imgtool::sigstore {

enum class HashAlgorithm { kSha256, kSha384, kSha512 };

// Sigstore's protobuf names: "SHA2_256", "SHA2_384", "SHA2_512".
std::optional<HashAlgorithm> HashFromProtobufName(std::string_view name);
std::string ProtobufName(HashAlgorithm alg);
// Rekor v1's names (hashedrekord 0.0.1's data.hash.algorithm): "sha256", "sha384", "sha512".
std::optional<HashAlgorithm> HashFromRekorName(std::string_view name);
std::string RekorName(HashAlgorithm alg);

const EVP_MD* EvpMd(HashAlgorithm alg);
size_t DigestSize(HashAlgorithm alg);
// The raw digest of `bytes`.
std::string HashOf(HashAlgorithm alg, std::string_view bytes);

// What a message signature signs: the artifact's digest under one allowed algorithm.
struct ArtifactDigest {
  HashAlgorithm alg = HashAlgorithm::kSha256;
  std::string digest;  // raw bytes
};

// One pass over a stream, several digests (sha256 always; the others a bundle asks for).
class MultiHasher {
 public:
  explicit MultiHasher(const std::vector<HashAlgorithm>& algorithms);
  void Update(const void* data, size_t size);
  // The raw digest of each algorithm, in the order given; call once.
  std::vector<std::string> Finish();

 private:
  struct CtxFree {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::vector<std::unique_ptr<EVP_MD_CTX, CtxFree>> ctxs_;
};

}  // namespace imgtool::sigstore
