// The one place that knows the transports: a reference (ref/reference.h) becomes a
// repository to read from (oci:, oci-archive:, docker://, docker-archive:: layout, remote
// and tarball backends) or a sink to write to. Every verb opens images through here and then works on the oci
// views, so none of them switches on the transport itself.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "oci/image.h"
#include "oci/repository.h"
#include "oci/sink.h"
#include "ref/reference.h"
#include "remote/registry.h"
#include "remote/upload.h"

namespace imgtool::transport {

// The layout, archive or registry repository the reference points into.
Result<std::shared_ptr<const oci::Repository>> OpenRepository(const ref::Reference& ref,
                                                              const remote::RegistryOptions& registry = {});

// The manifest name a reference gives inside its repository: its digest when pinned,
// else its tag; "latest" for a registry without either, "" (the only image) for a layout;
// "HOST/REPO:TAG", "@N" or "" for a docker-archive.
std::string NameIn(const ref::Reference& ref);

// An opened reference: what it names, and the repository it lives in (where its
// signatures and other artifacts are found by their sha256-<hex> tags).
struct Opened {
  oci::Node node;
  std::shared_ptr<const oci::Repository> repository;
};
Result<Opened> Open(const ref::Reference& ref, const remote::RegistryOptions& registry = {});
Result<Opened> Open(const std::string& text, const remote::RegistryOptions& registry = {});

// `node` itself for an image, or the child of an index for `platform` (opened). An index
// without a platform asked for stays the index.
Result<oci::Node> SelectPlatform(const oci::Node& node, const std::optional<oci::Platform>& platform);

struct SinkOptions {
  remote::RegistryOptions registry;
  remote::UploadOptions upload;
};
// A destination: a layout folder (created when missing), an oci-archive (rewritten on
// Commit with what it held plus what was written), a registry repository, or a
// docker-archive (one image, replacing the file on Commit).
Result<std::unique_ptr<oci::Sink>> OpenSink(const ref::Reference& ref, const SinkOptions& options = {});

// The tag the top manifest gets at `dst` (nullopt-free form of NameIn for writing): a
// registry without tag or digest gets "latest"; a pinned destination gets "" (written by
// digest, and the digest must match).
std::string TagAt(const ref::Reference& dst);

// The tag a newly built image gets at `dst`: the tag written, else "latest"; for a
// docker-archive its NAME:TAG ("" when it names none: the image goes untagged).
std::string TagOrLatest(const ref::Reference& dst);

// `dst` keeps images only: an oci-archive (`ctr images import` unpacks every tagged entry
// and fails on an artifact) and a docker-archive hold no SBOM or signature artifacts.
bool ImagesOnly(const ref::Reference& dst);

// Where files written beside an output go, as a path prefix ("PREFIX.build.json"): the
// layout folder or archive file itself; for a registry, the repository's last path
// component in the current folder (docker://HOST/team/app:v1 -> "app").
std::string BesidePath(const ref::Reference& dst);

}  // namespace imgtool::transport
