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

// The facts of one image, all but the signature (which belongs to what the reference
// names: the image itself, or its index).
void GatherImage(const oci::Image& img, const Policy& policy, ImageFacts& f) {
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
}

// BuildKit puts its attestation manifests at unknown/unknown: no runtime selects that
// platform, so such an entry is skipped unopened.
bool UnknownPlatform(const oci::Descriptor& d) {
  return d.platform && d.platform->os == "unknown" && d.platform->architecture == "unknown";
}

IndexFacts GatherIndex(const std::string& reference, const oci::ImageIndex& index, const Policy& policy) {
  IndexFacts out;
  const auto& entries = index.children();
  if (entries.size() > kMaxIndexEntries) {
    out.bounded =
        MakeError(ErrorKind::kInvalidInput, "the index has " + std::to_string(entries.size()) + " entries; at most " +
                                                std::to_string(kMaxIndexEntries) + " are judged");
    return out;
  }
  for (const auto& e : entries) {
    std::string platform = e.platform ? oci::PlatformString(*e.platform) : "no platform";
    std::string entry = platform + " " + e.digest.Short() + ": ";
    if (UnknownPlatform(e)) {
      out.skipped.push_back(entry + "not a runnable platform (an attestation manifest)");
      continue;
    }
    auto node = index.Child(e);
    if (node.ok() && node->image && node->image->is_artifact()) {
      out.skipped.push_back(entry + "an artifact (" + node->image->artifact_type() + ")");
      continue;
    }
    ChildFacts c{platform, {}};
    c.image.reference = reference;
    c.image.digest = e.digest.str();
    if (!node.ok()) {
      c.image.opened = node.error();
    } else if (!node->image) {
      // Fail closed rather than recurse: judging it means judging its entries in turn.
      c.image.opened = MakeError(ErrorKind::kInvalidInput, "an index inside the index is not judged");
    } else {
      GatherImage(*node->image, policy, c.image);
    }
    out.images.push_back(std::move(c));
  }
  return out;
}

}  // namespace

ReferenceFacts GatherFacts(const std::string& reference, const Result<oci::Node>& opened, const Policy& policy,
                           const SignatureVerifier& verify_signature) {
  ReferenceFacts out;
  ImageFacts& f = out.top;
  f.reference = reference;
  if (!opened.ok()) {
    f.opened = opened.error();
    return out;
  }
  if (opened->image) {
    GatherImage(*opened->image, policy, f);
  } else {
    f.digest = opened->index->digest().str();
    out.index = GatherIndex(reference, *opened->index, policy);
  }
  if (policy.signed_by) {
    if (verify_signature) {
      f.signature = verify_signature(reference, policy.signed_by->keys);
    } else {
      f.signature = MakeError(ErrorKind::kDenied, "no signature verifier");
    }
  }
  return out;
}

bool AllOpened(const ReferenceFacts& facts) {
  if (!facts.top.opened.ok()) return false;
  if (!facts.index) return true;
  for (const auto& c : facts.index->images) {
    if (!c.image.opened.ok()) return false;
  }
  return true;
}

}  // namespace imgtool::policy
