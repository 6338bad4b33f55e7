// The stack pins (`"stack": {"cuda": ..., "cudnn": ..., "nccl": ..., "cublas": ...}`)
// checked against the packages that provide them, and /etc/imgtool/stack.json: each
// component, its version, the package that provides it and the sha256 of each of that
// package's shared libraries. The fleet preflight compares this file on every worker.
//
// Providers (wheel names PEP 503-normalized, debs by Package:):
//   cuda   nvidia-cuda-runtime[-cuN]  cuda-cudart-N-M
//   cublas nvidia-cublas[-cuN]        libcublas-N-M
//   cudnn  nvidia-cudnn-cuN           libcudnn9-cuda-N
//   nccl   nvidia-nccl-cuN            libnccl2
// A pin matches a package version when equal or a dotted prefix of its upstream part
// ("9.19.0" matches "9.19.0.56"; a deb's epoch and "-revision" are ignored). Every
// package providing a pinned component must match. A pin nothing provides is an error
// when the spec has packages; a spec of plain files keeps the pin as a label only.
// `driver` is never provided by a package.
#pragma once

#include <string>
#include <vector>

#include "builder/packages.h"
#include "builder/spec.h"
#include "oci/result.h"

namespace imgtool::build {

// True when `pin` equals `package_version`'s upstream version or is a dotted prefix of it.
bool PinMatches(const std::string& pin, const std::string& package_version);

// Checks the pins against `packages` (every package of the spec) and returns stack.json.
Result<std::string> StackJson(const Spec& spec, const std::vector<PackageRecord>& packages);

}  // namespace imgtool::build
