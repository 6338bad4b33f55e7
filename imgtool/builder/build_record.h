// The build record written beside the output: what went in (the spec's digest, the base
// as pinned and as resolved for each platform, every input file's digest and size), what
// came out (every blob's digest), the tool version
// and the epoch. It holds no host paths or times, so two reproducible builds write
// byte-identical records, and `diff` of two records shows which input moved.
#pragma once

#include <string>
#include <vector>

#include "builder/builder.h"
#include "builder/spec.h"
#include "oci/canonical_json.h"

namespace imgtool::build {

// A single-platform build: base, inputs and outputs (manifest, config, layers) at the top.
// A multi-platform build: outputs.index, and under "images" one object per platform with
// its platform, base, inputs and outputs.
Result<std::string> BuildRecordJson(const Spec& spec, const BuildResult& result, int64_t epoch,
                                    const std::string& compression);

}  // namespace imgtool::build
