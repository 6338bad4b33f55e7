#include "sigstore/hash.h"

namespace imgtool::sigstore {

namespace {

struct Names {
  HashAlgorithm alg;
  std::string_view protobuf, rekor;
};
constexpr Names kNames[] = {
    {HashAlgorithm::kSha256, "SHA2_256", "sha256"},
    {HashAlgorithm::kSha384, "SHA2_384", "sha384"},
    {HashAlgorithm::kSha512, "SHA2_512", "sha512"},
};

const Names& NamesOf(HashAlgorithm alg) {
  for (const Names& n : kNames) {
    if (n.alg == alg) return n;
  }
  return kNames[0];  // unreachable: every enumerator is listed
}

}  // namespace

std::optional<HashAlgorithm> HashFromProtobufName(std::string_view name) {
  for (const Names& n : kNames) {
    if (n.protobuf == name) return n.alg;
  }
  return std::nullopt;
}

std::optional<HashAlgorithm> HashFromRekorName(std::string_view name) {
  for (const Names& n : kNames) {
    if (n.rekor == name) return n.alg;
  }
  return std::nullopt;
}

std::string ProtobufName(HashAlgorithm alg) { return std::string(NamesOf(alg).protobuf); }
std::string RekorName(HashAlgorithm alg) { return std::string(NamesOf(alg).rekor); }

const EVP_MD* EvpMd(HashAlgorithm alg) {
  switch (alg) {
    case HashAlgorithm::kSha384:
      return EVP_sha384();
    case HashAlgorithm::kSha512:
      return EVP_sha512();
    case HashAlgorithm::kSha256:
      break;
  }
  return EVP_sha256();
}

size_t DigestSize(HashAlgorithm alg) { return static_cast<size_t>(EVP_MD_get_size(EvpMd(alg))); }

std::string HashOf(HashAlgorithm alg, std::string_view bytes) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out, &len, EvpMd(alg), nullptr) != 1) return "";
  return std::string(reinterpret_cast<char*>(out), len);
}

MultiHasher::MultiHasher(const std::vector<HashAlgorithm>& algorithms) {
  for (HashAlgorithm alg : algorithms) {
    ctxs_.emplace_back(EVP_MD_CTX_new());
    if (ctxs_.back() == nullptr || EVP_DigestInit_ex(ctxs_.back().get(), EvpMd(alg), nullptr) != 1)
      ctxs_.back().reset();
  }
}

void MultiHasher::Update(const void* data, size_t size) {
  for (auto& ctx : ctxs_) {
    if (ctx != nullptr && EVP_DigestUpdate(ctx.get(), data, size) != 1) ctx.reset();
  }
}

std::vector<std::string> MultiHasher::Finish() {
  std::vector<std::string> out;
  for (auto& ctx : ctxs_) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    // A failed context gives "", which matches no digest: verification then denies.
    bool ok = ctx != nullptr && EVP_DigestFinal_ex(ctx.get(), md, &len) == 1;
    out.push_back(ok ? std::string(reinterpret_cast<char*>(md), len) : "");
  }
  return out;
}

}  // namespace imgtool::sigstore
