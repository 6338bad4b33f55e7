// The spine every verb reads through (go-containerregistry's v1.Layer, v1.Image and
// v1.ImageIndex): a backend implements BlobStore (three calls: its name, a manifest's
// bytes, a blob's stream), and this file builds the same read-only views over any of
// them: a layout on disk, an oci-archive, a registry, or memory. What a reference names
// is a Node: an image, an artifact (an image manifest with an artifactType or a config
// that is not an image config) or an index.
//
// Everything handed out is checked: a manifest or config against the digest and size it
// was named by, and every blob stream through a CheckedReader (oci/reader.h).
//
// Not here: resolving a reference to its top descriptor, or choosing a backend
// (transport/open.h), or writing (oci/sink.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oci/canonical_json.h"
#include "oci/digest.h"
#include "oci/manifest.h"
#include "oci/reader.h"
#include "oci/result.h"

namespace imgtool::oci {

inline constexpr uint64_t kMaxManifestBytes = 8 << 20;  // registries refuse more than 4 MiB
inline constexpr uint64_t kMaxConfigBytes = 64 << 20;

// How many indexes may nest, the top one counted: an index of indexes of images (a
// manifest list inside an index) is as deep as anyone nests. ImageIndex::Child, the one
// way down from an index, refuses a child index past this level, so no walk (copy,
// verify, --platform, build's base, sign --recursive, ...) goes deeper or can forget to
// stop; walkers of raw bytes (check::Verify) call CheckIndexDepth themselves.
inline constexpr int kMaxIndexDepth = 4;

// kInvalidInput "manifest sha256:ab12..: nested too deep (more than 4 index levels)" when
// an index at `level` (1: the top) is past kMaxIndexDepth.
Status CheckIndexDepth(const Digest& index, int level);

class BlobStore {
 public:
  virtual ~BlobStore() = default;
  // "oci:out/golden", "docker://HOST/REPO": the start of error messages.
  virtual std::string name() const = 0;
  // The blob's bytes as stored, not yet checked (Blob::Open checks them); kNotFound
  // naming the digest when the store does not hold it.
  virtual Result<std::unique_ptr<Reader>> OpenBlob(const Descriptor& d) const = 0;
  // A manifest's exact bytes (registries serve them apart from blobs), checked against
  // `d`; the default reads the blob.
  virtual Result<std::string> ReadManifest(const Descriptor& d) const;
};

// Reads a small blob whole (config, signature payload), checked against `d`.
Result<std::string> ReadBlob(const BlobStore& store, const Descriptor& d, uint64_t max_bytes);

// A blob named by a manifest: a config, a layer, an artifact's file.
class Blob {
 public:
  Blob(std::shared_ptr<const BlobStore> store, Descriptor desc, Digest diff_id = {});
  const Descriptor& descriptor() const { return desc_; }
  const Digest& digest() const { return desc_.digest; }
  int64_t size() const { return desc_.size; }
  const std::string& media_type() const { return desc_.media_type; }
  // An image layer's uncompressed digest from the config; empty for artifact blobs and
  // for layers that are not tar archives (signature payloads).
  const Digest& diff_id() const { return diff_id_; }
  // The bytes as stored, checked while they stream (CheckedReader).
  Result<std::unique_ptr<Reader>> Open() const;
  const std::shared_ptr<const BlobStore>& store() const { return store_; }

 private:
  std::shared_ptr<const BlobStore> store_;
  Descriptor desc_;
  Digest diff_id_;
};
using Layer = Blob;

class Image {
 public:
  const Descriptor& descriptor() const { return desc_; }  // the manifest's
  Digest digest() const { return desc_.digest; }
  const std::string& raw_manifest() const { return raw_manifest_; }
  const Manifest& manifest() const { return manifest_; }
  // The config's exact bytes, checked against its descriptor; else why they could not be
  // read (missing: kNotFound; another size or sha256: kIntegrity).
  const Result<std::string>& raw_config() const { return raw_config_; }
  // The image config, parsed (an empty object for an artifact); else why this image has
  // none to judge: its config could not be read, is not a JSON object, or its diff_ids
  // are malformed or do not match the layers. Opening never fails for these (digest,
  // raw bytes, verify and copy never need to understand a config): the verbs that judge
  // an image's contents (policy, diff, build's base, inspect's summary, --platform on an
  // image) take it from here and refuse with this error, which names the manifest.
  const Result<Json>& config() const { return config_; }
  // An OCI 1.1 artifact: an artifactType, or a config that is not an image config
  // (another media type, or no "rootfs": oci::ReadConfig).
  bool is_artifact() const { return !artifact_type_.empty(); }
  // The manifest's artifactType, else the config's media type; empty for images.
  const std::string& artifact_type() const { return artifact_type_; }
  std::shared_ptr<const Blob> config_blob() const { return config_blob_; }
  std::vector<std::shared_ptr<const Layer>> layers() const { return layers_; }
  const std::shared_ptr<const BlobStore>& store() const { return store_; }

 private:
  friend struct NodeBuilder;
  std::shared_ptr<const BlobStore> store_;
  Descriptor desc_;
  std::string raw_manifest_, artifact_type_;
  Manifest manifest_;
  Result<std::string> raw_config_ = std::string();
  Result<Json> config_ = Json::object();
  std::shared_ptr<const Blob> config_blob_;
  std::vector<std::shared_ptr<const Layer>> layers_;
};

class ImageIndex;

// What a reference or an index entry names: exactly one of image or index is set.
struct Node {
  Descriptor descriptor;
  std::shared_ptr<const Image> image;
  std::shared_ptr<const ImageIndex> index;
  bool is_index() const { return index != nullptr; }
};

class ImageIndex {
 public:
  const Descriptor& descriptor() const { return desc_; }
  Digest digest() const { return desc_.digest; }
  const std::string& raw_manifest() const { return raw_manifest_; }
  const Index& index() const { return index_; }
  const std::vector<Descriptor>& children() const { return index_.manifests; }
  // Opens one entry (its bytes checked against the entry's digest and size); an entry
  // that is an index one level past kMaxIndexDepth is refused (CheckIndexDepth).
  Result<Node> Child(const Descriptor& d) const;
  // 1 for an index opened by OpenNode, its children's indexes 2, and so on.
  int level() const { return level_; }
  // The entry for `p` (PlatformMatches); kNotFound listing the platforms there are.
  Result<Descriptor> ChildFor(const Platform& p) const;
  const std::shared_ptr<const BlobStore>& store() const { return store_; }

 private:
  friend struct NodeBuilder;
  std::shared_ptr<const BlobStore> store_;
  Descriptor desc_;
  std::string raw_manifest_;
  Index index_;
  int level_ = 1;
};

// Opens what `d` names in `store`: reads and checks the manifest, then (for an image)
// the config, whose problems are kept in the Image (Image::config), not returned. `raw`
// may carry the manifest's bytes when the caller already holds them (a registry
// answered a tag with them); they are checked against `d` all the same. The manifest is
// read as ManifestMediaType says. What it opens is a top node (an index at level 1):
// the way down from an index is ImageIndex::Child.
Result<Node> OpenNode(const std::shared_ptr<const BlobStore>& store, const Descriptor& d,
                      std::optional<std::string> raw = std::nullopt);

// "manifest", "index", "artifact" media types by their content when the descriptor's
// media type is missing (umoci writes manifests without one).
std::string SniffManifestMediaType(const std::string& bytes);

// The media type a manifest is read as, one rule for every verb. The descriptor that
// names it says what kind it is (an image manifest or an index: OCI or Docker, else
// kInvalidInput "unsupported manifest media type"); the bytes' own "mediaType" says
// which of that kind, as go-containerregistry and skopeo read it: a Docker schema 2
// manifest that index.json names as an OCI manifest is read as Docker's, with a warning
// (oci/warnings.h) naming both. A descriptor without a media type takes the bytes' (or
// SniffManifestMediaType's); bytes without one take the descriptor's. Bytes of another
// kind than named (an index named as a manifest) are kInvalidInput naming both.
// `where` starts the messages ("oci:out/x: manifest sha256:ab12..").
Result<std::string> ManifestMediaType(const Descriptor& named, const std::string& bytes, const std::string& where);

}  // namespace imgtool::oci
