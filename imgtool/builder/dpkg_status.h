// /var/lib/dpkg/status for an image with .deb inputs: what dpkg-query and vulnerability
// scanners read to learn what is installed. It sits in the metadata layer because it
// spans every layer (and the base image).
#pragma once

#include <string>
#include <vector>

#include "builder/packages.h"
#include "oci/result.h"

namespace imgtool::build {

// The base image's stanzas first (in their order, minus any package a layer installs
// again), then every deb of the spec sorted by package name. Two debs with the same
// package name are an error naming both.
Result<std::string> DpkgStatus(const std::string& base_status, const std::vector<PackageRecord>& packages);

}  // namespace imgtool::build
