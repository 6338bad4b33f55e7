// The signing key of the harnesses that reach past a signature check (dsse, sig_payload):
// one P-256 key per process, trusted as "fuzz.pub", so a statement or payload the harness
// signs itself is verified like a real one. Only for harnesses linking imgtool_sign_core.
#pragma once

#include <cstdlib>
#include <vector>

#include "sign_core/keys.h"
#include "sign_core/verify.h"

namespace imgtool::fuzz {

inline const std::vector<sign::TrustedKey>& HarnessKeys() {
  static const std::vector<sign::TrustedKey> keys = [] {
    auto k = sign::GenerateP256Key();
    if (!k.ok()) std::abort();
    return std::vector<sign::TrustedKey>{{"fuzz.pub", *k}};
  }();
  return keys;
}

}  // namespace imgtool::fuzz
