// Multi-platform specs. A spec may name its platforms ("platforms": ["linux/amd64",
// "linux/arm64"]) and then restrict any layer, file, deb or wheel to some of them with the
// same key: per-platform inputs (the arm64 libc6 beside the amd64 one) live side by side in
// one layer, and a layer or entry without "platforms" is in every image. `imgtool build`
// resolves the spec once per platform (ForPlatform) and builds each resolved spec as a
// single-platform spec is built; the images go into one index.
#pragma once

#include <string>
#include <vector>

#include "builder/spec.h"
#include "oci/canonical_json.h"
#include "oci/manifest.h"
#include "oci/result.h"

namespace imgtool::build {

// ["linux/amd64", "linux/arm64/v8"]: a non-empty list of distinct OS/ARCH[/VARIANT]
// strings; errors name `where` ("$.layers[2].platforms[1]").
Result<std::vector<oci::Platform>> ParsePlatformList(const oci::Json& j, const std::string& where);

// Every "platforms" filter in the spec names platforms of $.platforms, and a spec with
// filters names its platforms.
Status CheckPlatformFilters(const Spec& spec);

// The platforms a build of `spec` writes images for: $.platforms, else the one $.platform.
std::vector<oci::Platform> SpecPlatforms(const Spec& spec);

// The single-platform spec of `platform`'s image: layers and entries filtered to it,
// `platform` set, `platforms` empty. A layer left without inputs there is an error
// naming it (give the layer a "platforms" filter instead). `platform` must be one of
// SpecPlatforms(spec): otherwise an error listing them.
Result<Spec> ForPlatform(const Spec& spec, const oci::Platform& platform);

}  // namespace imgtool::build
