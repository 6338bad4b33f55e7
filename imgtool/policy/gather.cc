#include "policy/gather.h"

#include "archive/layer.h"
#include "oci/image_config.h"

namespace imgtool::policy {

namespace {

using Layers = std::vector<std::shared_ptr<const oci::Layer>>;

// Content of `path` in the top-most layer that has it (kNotFound when none does).
// Whiteouts are not followed: a file deleted by a later layer still counts, which can
// only make a rule stricter.
Result<std::string> ReadTopmost(const Layers& layers, const std::string& path) {
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    auto content = archive::ReadFileFromLayer(**it, path);
    if (content.ok()) return content;
    if (content.error().kind != ErrorKind::kNotFound) {
      return content.error().Context("reading /" + path + " from layer " + (*it)->digest().str());
    }
  }
  return MakeError(ErrorKind::kNotFound, "/" + path + " is in no layer");
}

// Every file with a setuid or setgid bit, in every layer. A setgid folder only makes new
// files inherit its group, so folders are not counted.
Result<std::vector<SetuidFile>> ScanSetuid(const Layers& layers) {
  std::vector<SetuidFile> out;
  for (const auto& l : layers) {
    auto entries = archive::ListLayer(*l);
    if (!entries.ok()) return entries.error().Context("listing layer " + l->digest().str());
    for (const auto& e : *entries) {
      if (e.type != archive::EntryType::kDir && (e.mode & 06000)) out.push_back({l->digest().str(), e.path, e.mode});
    }
  }
  return out;
}

Result<uint64_t> UncompressedSize(const Layers& layers) {
  uint64_t total = 0;
  for (const auto& l : layers) {
    auto reader = l->Open();
    if (!reader.ok()) return reader.error().Context("layer " + l->digest().str());
    auto d = archive::DigestLayer(**reader, "layer " + l->digest().str());
    if (!d.ok()) return d.error().Context("reading layer " + l->digest().str());
    total += d->uncompressed_size;
  }
  return total;
}

bool NumericUser(const std::string& user) {
  std::string u = user.substr(0, user.find(':'));
  return !u.empty() && u.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

ImageFacts GatherFacts(const std::string& reference, const Result<oci::Node>& opened, const Policy& policy,
                       const SignatureVerifier& verify_signature) {
  ImageFacts f;
  f.reference = reference;
  if (!opened.ok()) {
    f.opened = opened.error();
    return f;
  }
  if (!opened->image) {
    f.opened = MakeError(ErrorKind::kInvalidInput, reference + ": an image index; evaluate each platform's image");
    return f;
  }
  const oci::Image& img = *opened->image;
  f.digest = img.digest().str();
  f.user = oci::ConfigUser(img.config());
  f.labels = oci::ConfigLabels(img.config());
  f.annotations = img.manifest().annotations;
  Layers layers = img.layers();
  for (const auto& l : layers) f.compressed_size += static_cast<uint64_t>(l->size());

  if (policy.non_root && !NumericUser(f.user)) f.passwd = ReadTopmost(layers, "etc/passwd");
  if (policy.allowed_stacks) f.stack_json = ReadTopmost(layers, "etc/imgtool/stack.json");
  if (policy.no_setuid) f.setuid_files = ScanSetuid(layers);
  if (policy.max_size && policy.max_size->uncompressed_bytes) f.uncompressed_size = UncompressedSize(layers);
  if (policy.signed_by) {
    if (verify_signature) {
      f.signature = verify_signature(reference, policy.signed_by->keys);
    } else {
      f.signature = MakeError(ErrorKind::kDenied, "no signature verifier");
    }
  }
  return f;
}

}  // namespace imgtool::policy
