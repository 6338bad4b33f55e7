// Copy(src, dst) = Write(Open(src), OpenSink(dst)), then the artifacts that travel with
// an image as cosign copy carries them: for the top manifest and every child of an
// index, the sibling tags sha256-<hex>.sig, .att and .sbom, when the source has them.
// "Blob already there" and cross-repository mounts happen inside the registry sink.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ref/reference.h"
#include "transport/open.h"
#include "transport/write.h"

namespace imgtool::transport {

struct CopyOptions {
  remote::RegistryOptions source;
  SinkOptions destination;
  WriteOptions write;
  bool artifacts = true;                  // --no-artifacts: the image alone
  std::optional<oci::Platform> platform;  // of an index: copy only this image (crane copy --platform)
};

struct CopyReport : WriteReport {
  std::vector<std::string> artifacts;  // sibling tags carried along
};

Result<CopyReport> Copy(const ref::Reference& src, const ref::Reference& dst, const CopyOptions& opts);

// The tags cosign gives what it knows about the manifest `d`: sha256-<hex>.sig, .att, .sbom,
// and sha256-<hex> itself, the OCI 1.1 referrers tag schema's index (Sigstore bundles and
// other artifacts whose subject is `d`, written there by registries without the API).
std::vector<std::string> ArtifactTags(const oci::Digest& d);

// Writes the sibling artifacts of every manifest of `node` found in `from` into `sink`
// (not committed); returns the tags written.
Result<std::vector<std::string>> WriteArtifacts(const oci::Node& node, const oci::Repository& from, oci::Sink& sink,
                                                const WriteOptions& opts, WriteReport& report);

}  // namespace imgtool::transport
