#include "policy/registry_image.h"

#include "fs/atomic_file.h"
#include "oci/image_config.h"
#include "policy/pinned.h"
#include "remote/transfer.h"
#include "sign/verify_signatures.h"

namespace imgtool::policy {

bool NeedsLayers(const Policy& policy, const std::string& user) {
  std::string name = user.substr(0, user.find(':'));
  bool named_user = !name.empty() && name.find_first_not_of("0123456789") != std::string::npos;
  return policy.no_setuid || policy.allowed_stacks || (policy.max_size && policy.max_size->uncompressed_bytes) ||
         (policy.non_root && named_user);
}

Result<layout::OpenedImage> OpenRegistryImage(const ref::Reference& ref, const remote::RegistryOptions& options,
                                              const Policy& policy) {
  auto head = remote::OpenRemoteImage(ref, options);
  if (!head.ok()) return head.error();
  const oci::Json& cfg = head->image->config();
  std::string user = cfg.contains("config") && cfg["config"].contains("User") && cfg["config"]["User"].is_string()
                         ? cfg["config"]["User"].get<std::string>()
                         : "";
  if (!NeedsLayers(policy, user)) return head;
  auto scratch = fs::TempDir::Create("imgtool-policy-");
  if (!scratch.ok()) return scratch.error();
  auto pinned = ref;
  pinned.digest = head->image->digest().str();  // the layers of exactly the manifest judged above
  auto dst = ref::ParseReference("oci:" + scratch->path() + ":pulled");
  if (!dst.ok()) return dst.error();
  remote::TransferOptions t;
  t.source = options;
  auto copied = remote::Copy(pinned, *dst, t);
  if (!copied.ok()) return copied.error().Context("pulling " + ref.str() + " to read its layers");
  auto opened = layout::OpenImage(*dst);
  if (!opened.ok()) return opened.error();
  opened->extracted = std::make_shared<fs::TempDir>(std::move(*scratch));
  return opened;
}

SignatureVerifier RegistrySignatureVerifier(const remote::RegistryOptions& options) {
  return [options](const std::string& reference, const std::vector<std::string>& keys) -> SignatureFacts {
    auto pinned = ParsePinnedReference(reference);
    if (!pinned.ok()) return {false, {pinned.error().message}};
    auto verdict = sign::VerifyImageSignatures(pinned->ref, keys, options);
    if (!verdict.ok()) return {false, {verdict.error().message}};
    if (!verdict->verified) return {false, {verdict->reason}};
    std::string by;
    for (const auto& k : verdict->verified_keys) by += (by.empty() ? "" : ", ") + fs::BaseName(k);
    return {true, {"verified by " + by}};
  };
}

}  // namespace imgtool::policy
