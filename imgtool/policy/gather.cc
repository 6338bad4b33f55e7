#include "policy/gather.h"

#include <map>
#include <optional>
#include <tuple>

#include "archive/layer.h"
#include "oci/image_config.h"
#include "rootfs/image_fs.h"
#include "rootfs/user_arg.h"

namespace imgtool::policy {

namespace {

using Layers = std::vector<std::shared_ptr<const oci::Layer>>;

// /etc/passwd and stack.json are small; a bigger one is not judged (rootfs/users.h reads
// at most as much).
constexpr uint64_t kMaxFactFile = 1 << 20;

// Files are read from one view of the unpacked image (rootfs/image_fs.h), found where a
// runtime finds them: through symlinked folders, whatever the entry's spelling, after
// whiteouts. Reading a file by its entry name let a top layer hide the one a runtime reads.
Result<std::string> ReadImageFile(const Result<rootfs::ImageFs>& view, const std::string& path) {
  if (!view.ok()) return view.error().Context("/" + path);
  return view->ReadFile(path, kMaxFactFile);
}

// Every setuid or setgid file header in every layer, including files a later layer
// deleted: they still ship in the image (and come back for anyone building on a lower
// layer), and the list does not depend on how a runtime unpacks. A setgid folder only
// makes new files inherit its group, so folders are not counted.
Result<std::vector<SetuidFile>> SetuidFiles(const Result<rootfs::ImageFs>& view) {
  if (!view.ok()) return view.error();
  std::vector<SetuidFile> out;
  for (const auto& e : view->setuid_entries()) out.push_back({e.layer, e.path, e.mode});
  return out;
}

Result<rootfs::ImageFs> ViewOf(const oci::Image& img) {
  auto view = rootfs::ImageFs::Build(img);
  if (!view.ok()) return view.error().Context("unpacking the image's layers");
  return view;
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

// Only a User whose user part runtimes look up as a name needs /etc/passwd (user_arg.h).
bool UserIsAName(const std::string& user) {
  std::string u = user.substr(0, user.find(':'));
  return !u.empty() && rootfs::ParseUserArg(u).kind == rootfs::UserArg::Kind::kName;
}

// The facts of one image, all but the signature (which belongs to what the reference
// names: the image itself, or its index).
void GatherImage(const oci::Image& img, const Policy& policy, ImageFacts& f) {
  f.digest = img.digest().str();
  // The rules judge what a runtime would run: an artifact (a BuildKit attestation named
  // at the top, an SBOM) is no image, and an image without a readable config is unknown.
  if (img.is_artifact()) {
    f.opened = MakeError(ErrorKind::kInvalidInput, "manifest " + img.digest().Short() + ": an artifact (" +
                                                       img.artifact_type() + "), not an image: no rule judges it");
    return;
  }
  const auto& config = img.config();
  if (!config.ok()) {
    f.opened = config.error();
    return;
  }
  f.user = oci::ConfigUser(*config);
  f.labels = oci::ConfigLabels(*config);
  f.annotations = img.manifest().annotations;
  Layers layers = img.layers();
  for (const auto& l : layers) f.compressed_size += static_cast<uint64_t>(l->size());

  bool wants_passwd = policy.non_root && UserIsAName(f.user);
  if (wants_passwd || policy.allowed_stacks || policy.no_setuid) {
    auto view = ViewOf(img);  // once, for every rule that reads files
    if (wants_passwd) f.passwd = ReadImageFile(view, "etc/passwd");
    if (policy.allowed_stacks) f.stack_json = ReadImageFile(view, "etc/imgtool/stack.json");
    if (policy.no_setuid) f.setuid_files = SetuidFiles(view);
  }
  if (policy.max_size && policy.max_size->uncompressed_bytes) f.uncompressed_size = UncompressedSize(layers);
}

// BuildKit puts its attestation manifests at unknown/unknown: no runtime selects that
// platform, so such an entry is skipped unopened.
bool UnknownPlatform(const oci::Descriptor& d) {
  return d.platform && d.platform->os == "unknown" && d.platform->architecture == "unknown";
}

// An entry repeated as it was (digest, size, media type) is judged by the facts gathered
// for the first: an index naming one image 64 times unpacks it once.
using EntryKey = std::tuple<oci::Digest, int64_t, std::string>;
struct Gathered {
  std::optional<ImageFacts> facts;  // judged
  std::string skipped;              // or skipped, why
};

Gathered GatherEntry(const std::string& reference, const oci::ImageIndex& index, const oci::Descriptor& e,
                     const Policy& policy) {
  auto node = index.Child(e);
  if (node.ok() && node->image && node->image->is_artifact()) {
    return {std::nullopt, "an artifact (" + node->image->artifact_type() + ")"};
  }
  ImageFacts f;
  f.reference = reference;
  f.digest = e.digest.str();
  if (!node.ok()) {
    f.opened = node.error();
  } else if (!node->image) {
    // Fail closed rather than recurse: judging it means judging its entries in turn.
    f.opened = MakeError(ErrorKind::kInvalidInput, "an index inside the index is not judged");
  } else {
    GatherImage(*node->image, policy, f);
  }
  return {std::move(f), ""};
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
  std::map<EntryKey, Gathered> gathered;
  for (const auto& e : entries) {
    std::string platform = e.platform ? oci::PlatformString(*e.platform) : "no platform";
    std::string entry = platform + " " + e.digest.Short() + ": ";
    if (UnknownPlatform(e)) {
      out.skipped.push_back(entry + "not a runnable platform (an attestation manifest)");
      continue;
    }
    EntryKey key{e.digest, e.size, e.media_type};
    auto it = gathered.find(key);
    if (it == gathered.end()) it = gathered.emplace(key, GatherEntry(reference, index, e, policy)).first;
    if (!it->second.facts) {
      out.skipped.push_back(entry + it->second.skipped);
      continue;
    }
    out.images.push_back({platform, *it->second.facts});
  }
  return out;
}

}  // namespace

ReferenceFacts GatherFacts(const std::string& reference, const Result<oci::Node>& opened, const Policy& policy,
                           const SignatureVerifier& verify_signature, const AttestationVerifier& verify_attestations) {
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
      f.signature = verify_signature(reference, *policy.signed_by);
    } else {
      f.signature = MakeError(ErrorKind::kDenied, "no signature verifier");
    }
  }
  if (policy.attestations) {
    if (verify_attestations) {
      std::vector<AttestationFacts> each;
      for (const auto& r : *policy.attestations) each.push_back(verify_attestations(reference, r));
      f.attestations = std::move(each);
    } else {
      f.attestations = MakeError(ErrorKind::kDenied, "no attestation verifier");
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
