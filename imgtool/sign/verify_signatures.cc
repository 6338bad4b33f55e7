#include "sign/verify_signatures.h"

#include <algorithm>
#include <filesystem>
#include <functional>

#include "sign/signature_image.h"
#include "sign/store.h"
#include "sign_core/dsse.h"

namespace imgtool::sign {

Result<std::vector<std::string>> PublicKeysIn(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> out;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".pub" && it->is_regular_file()) out.push_back(it->path().string());
  }
  if (ec) return MakeError(ErrorKind::kNotFound, dir + ": " + ec.message());
  if (out.empty()) return MakeError(ErrorKind::kNotFound, dir + ": no *.pub keys");
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<TrustedKey>> LoadTrustedKeys(const std::vector<std::string>& paths) {
  std::vector<TrustedKey> keys;
  for (const auto& p : paths) {
    auto k = LoadPublicKeyFile(p);
    if (!k.ok()) return k.error();
    keys.push_back({p, *k});
  }
  return keys;
}

namespace {

// Keys -> layers at the image's tag -> the pure decision.
Result<SignatureVerdict> Run(const ref::Reference& ref, const std::vector<std::string>& key_paths,
                             const remote::RegistryOptions& opts, std::string_view suffix,
                             const std::function<Decision(const std::vector<SignatureLayer>&, const oci::Digest&,
                                                          const std::vector<TrustedKey>&)>& decide) {
  auto keys = LoadTrustedKeys(key_paths);
  if (!keys.ok()) return keys.error();
  auto store = SignatureStore::Open(ref, transport::SinkOptions{opts, {}});
  if (!store.ok()) return store.error();
  auto layers = store->Read(suffix);
  if (!layers.ok()) {
    // A signature image that is malformed or damaged is no signature: denied, with why.
    ErrorKind k = layers.error().kind;
    if (k != ErrorKind::kIntegrity && k != ErrorKind::kInvalidInput) return layers.error();
    return SignatureVerdict{false, store->image(), layers.error().message, {}, {}};
  }
  Decision d = decide(*layers, store->image(), *keys);
  return SignatureVerdict{d.ok, store->image(), d.reason, d.verified_keys, d.signatures};
}

}  // namespace

Result<SignatureVerdict> VerifyImageSignatures(const ref::Reference& ref,
                                               const std::vector<std::string>& trusted_key_paths,
                                               const remote::RegistryOptions& opts) {
  return Run(ref, trusted_key_paths, opts, kSignatureSuffix, VerifySignatures);
}

Result<SignatureVerdict> VerifyImageAttestations(const ref::Reference& ref,
                                                 const std::vector<std::string>& trusted_key_paths,
                                                 const std::string& predicate_type,
                                                 const remote::RegistryOptions& opts) {
  return Run(ref, trusted_key_paths, opts, kAttestationSuffix,
             [&](const std::vector<SignatureLayer>& l, const oci::Digest& d, const std::vector<TrustedKey>& k) {
               return VerifyAttestations(l, d, k, predicate_type);
             });
}

Result<SignatureVerdict> VerifyImageKeyless(const ref::Reference& ref, const KeylessPolicy& policy, bool attestation,
                                            const std::string& predicate_type, const remote::RegistryOptions& opts) {
  auto store = SignatureStore::Open(ref, transport::SinkOptions{opts, {}});
  if (!store.ok()) return store.error();
  auto legacy = store->Read(attestation ? kAttestationSuffix : kSignatureSuffix);
  auto bundles = legacy.ok() ? store->ReadReferrers(kBundleArtifactType) : legacy;
  for (const auto* r : {&legacy, &bundles}) {
    if (r->ok()) continue;
    // A signature image or referrer that is malformed or damaged is no signature: denied, with why.
    ErrorKind k = r->error().kind;
    if (k != ErrorKind::kIntegrity && k != ErrorKind::kInvalidInput) return r->error();
    return SignatureVerdict{false, store->image(), r->error().message, {}, {}};
  }
  Decision d = attestation ? VerifyKeylessAttestations(*legacy, *bundles, store->image(), policy, predicate_type)
                           : VerifyKeylessSignatures(*legacy, *bundles, store->image(), policy);
  return SignatureVerdict{d.ok, store->image(), d.reason, d.verified_keys, d.signatures};
}

}  // namespace imgtool::sign
