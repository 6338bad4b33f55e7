// The build record written beside the output: what went in (the spec's digest, the base
// as pinned and as resolved for the platform, every input file's digest and size), what came out (every blob's digest), the tool version
// and the epoch. It holds no host paths or times, so two reproducible builds write
// byte-identical records, and `diff` of two records shows which input moved.
#pragma once

#include <string>
#include <vector>

#include "build/builder.h"
#include "build/spec.h"
#include "oci/canonical_json.h"

namespace imgtool::build {

struct RecordInput {
  std::string layer;
  std::string path;  // relative to the layer root
  oci::Digest digest;
  uint64_t size = 0;
};

Result<std::string> BuildRecordJson(const Spec& spec, const BuildResult& result, const std::vector<RecordInput>& inputs,
                                    int64_t epoch, const std::string& compression);

}  // namespace imgtool::build
