// The image's SBOM: an SPDX 2.3 JSON document naming the image and every package the
// build put in it (version, checksum, purl), written beside the output and stored in the
// layout as an OCI 1.1 artifact whose subject is the image manifest.
//
// Reproducible like everything else a build writes: `created` is SOURCE_DATE_EPOCH,
// the namespace and every SPDXID are derived from content (manifest digest; package
// kind, name and version), and the document is canonical JSON, so two builds from the
// same inputs write the same bytes. No host paths, no UUIDs, no clock.
//
// SPDXIDs are unique by construction (SPDX requires it): an image's carries its platform
// encoded injectively (linux/arm64/v8 -> SPDXRef-image-linux-arm64-v8, linux/arm64-v8 ->
// SPDXRef-image-linux-arm64.2Dv8: letters, digits as they are, '/' as '-', any other
// byte as '.' and two hex digits); a package's, a readable part and 8 hex digits of the
// sha256 of its exact kind, name, version (and platform), all 64 where two of a document
// would meet. Uniqueness is checked again before anything is written (kInternal).
//
// Not here: files inside packages (filesAnalyzed is false), licenses (NOASSERTION: the
// packages' own metadata is not trusted to state them), a base image's packages.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "builder/packages.h"
#include "layout/layout_writer.h"
#include "oci/manifest.h"
#include "oci/result.h"

namespace imgtool::build {

inline constexpr std::string_view kMediaTypeSpdxJson = "application/spdx+json";
inline constexpr std::string_view kMediaTypeOciEmpty = "application/vnd.oci.empty.v1+json";

struct SbomInput {
  std::string image_name;               // see SbomImageName
  oci::Descriptor manifest;             // the image manifest the SBOM describes
  int64_t epoch = 0;                    // SOURCE_DATE_EPOCH: the document's `created`
  std::string tool_version;             // IMGTOOL_VERSION ("0.1.0")
  std::vector<PackageRecord> packages;  // in any order: the document sorts them
};

// The image's name in the SBOM: the org.opencontainers.image.title label, else the output
// tag, else "image". Never the output folder: a host path would break reproducibility.
std::string SbomImageName(const std::map<std::string, std::string>& labels, const std::string& tag);

// Package URLs (purl-spec, ECMA-427). Components are percent-encoded except
// alphanumerics, ".-_~" and ':' (which the spec forbids encoding: "1:2.3-4" stays).
std::string PurlEncode(std::string_view component);
// pkg:deb/debian/<name>@<version>[?arch=<arch>]
std::string DebPurl(const std::string& name, const std::string& version, const std::string& arch);
// pkg:pypi/<PEP 503 name>@<version>
std::string PypiPurl(const std::string& name, const std::string& version);
// pkg:oci/<name>@sha256:<hex>
std::string OciPurl(const std::string& name, const oci::Digest& manifest);
// A record's purl; a deb's arch comes from its status stanza's Architecture field.
std::string PurlFor(const PackageRecord& record);

// The SPDX 2.3 document, canonical JSON plus a newline. Refuses two packages with the
// same kind, name and version (they would share an SPDXID).
Result<std::string> SpdxJson(const SbomInput& input);

// A multi-platform build's document: the index (DESCRIBES) CONTAINS each platform's image
// (purl pkg:oci/<name>@sha256:<hex>?arch=<arch>), which CONTAINS its packages; SPDXIDs of
// packages carry their platform. Each image also gets its own document (SpdxJson) stored
// beside it in the layout.
struct SbomPlatformImage {
  oci::Platform platform;
  oci::Descriptor manifest;
  std::vector<PackageRecord> packages;
};
struct SbomIndexInput {
  std::string image_name;
  oci::Descriptor index;
  int64_t epoch = 0;
  std::string tool_version;
  std::vector<SbomPlatformImage> images;
};
Result<std::string> SpdxIndexJson(const SbomIndexInput& input);

// Stores `spdx_json` in the OCI layout at `layout_dir` as an artifact manifest
// (artifactType application/spdx+json, the empty config, one layer, subject = `subject`)
// and tags it "sha256-<subject hex>.sbom" in index.json, replacing an entry with that
// tag, so a rerun leaves index.json byte-identical. The folder must already be a layout
// holding the subject's manifest blob. Returns the artifact manifest's descriptor.
Result<oci::Descriptor> WriteSbomArtifact(const std::string& layout_dir, const oci::Descriptor& subject,
                                          std::string_view spdx_json);

// The artifact manifest of WriteSbomArtifact and its blobs, written into `out` but not
// tagged: the builder stages it and hands it to the output's sink under SbomTag.
Result<oci::Descriptor> StageSbomArtifact(layout::LayoutWriter& out, const oci::Descriptor& subject,
                                          std::string_view spdx_json);

// "sha256-<hex>.sbom": cosign's tag convention, so tools that do not know the referrers
// API still find the SBOM.
std::string SbomTag(const oci::Digest& subject);

// Where the document goes beside the output: "<output path>.spdx.json", next to
// "<output path>.build.json".
std::string SbomPathFor(const std::string& output_path);

// What the builder calls: the document, written atomically to `file_path`, and stored
// in `layout_dir` (for oci-archive outputs, the layout before it is archived).
struct SbomOutputs {
  std::string path;
  oci::Descriptor document;  // the SPDX blob
  oci::Descriptor artifact;  // the artifact manifest
};
Result<SbomOutputs> WriteSbom(const SbomInput& input, const std::string& layout_dir, const std::string& file_path);

}  // namespace imgtool::build
