// The spec's "base": how it is written and how it is named elsewhere. Parsing only;
// opening the image is base_image.h.
//   "scratch"
//   "docker://HOST/REPO[:TAG]@sha256:..."   a registry image or index, kept in the download cache
//   "oci:DIR@sha256:...", "oci-archive:FILE@sha256:..."   local, paths relative to the spec
//   {"layout": DIR, "digest": "sha256:..."}   the older form of oci:DIR@sha256:...
// A digest is required: a tag can move, and a build must name the same bytes tomorrow.
// A tag beside the digest is kept for people (it names the base in the annotation and
// the lock) but the registry is asked by digest.
#pragma once

#include <string>

#include "builder/spec.h"
#include "oci/canonical_json.h"
#include "oci/result.h"

namespace imgtool::build {

// `j` is the spec's "base"; `dir` (absolute) is where relative paths resolve. Errors
// are kInvalidInput naming "$.base".
Result<BaseSpec> ParseBaseSpec(const oci::Json& j, const std::string& dir);

// The org.opencontainers.image.base.name annotation: HOST/REPO[:TAG] as distribution
// writes references; "" for scratch and local bases (a folder is not a name, and a host
// path in the manifest would make the digest depend on where the build ran).
std::string BaseName(const BaseSpec& base);

// Where the base comes from in the lock and the build record: docker://HOST/REPO[:TAG],
// without the digest (recorded beside it); "" for scratch and local bases.
std::string BaseSource(const BaseSpec& base);

}  // namespace imgtool::build
