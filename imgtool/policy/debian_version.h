// Debian version ordering (Debian Policy 5.6.12, as dpkg --compare-versions orders them):
// [epoch:]upstream[-revision], compared epoch numerically, then upstream, then revision,
// each by alternating non-digit runs (letters before non-letters, '~' before everything,
// even the end) and digit runs (numerically). What the attestations rule's versionBelow
// and versionAtLeast compare an SBOM's versionInfo with (policies/rules/attestations.md).
#pragma once

#include <string_view>

#include "oci/result.h"

namespace imgtool::policy {

// kInvalidInput naming what is wrong: empty, an epoch that is not a number, a character
// dpkg refuses, an upstream part that does not start with a digit.
Status CheckDebianVersion(std::string_view v);

// <0, 0, >0 as a is older than, the same as, newer than b. Both must pass CheckDebianVersion.
int CompareDebianVersions(std::string_view a, std::string_view b);

}  // namespace imgtool::policy
