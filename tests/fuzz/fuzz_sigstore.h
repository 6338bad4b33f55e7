// What the sigstore harnesses share: the public-good trusted root built into imgtool,
// parsed once (a harness cannot start without it).
#pragma once

#include <cstdlib>

#include "sigstore/public_good_root.h"
#include "sigstore/trusted_root.h"

namespace imgtool::fuzz {

inline const sigstore::TrustedRoot& PublicGoodRoot() {
  static const sigstore::TrustedRoot root = [] {
    auto r = sigstore::ParseTrustedRoot(sigstore::PublicGoodTrustedRoot(), "public-good");
    if (!r.ok()) std::abort();
    return *r;
  }();
  return root;
}

}  // namespace imgtool::fuzz
