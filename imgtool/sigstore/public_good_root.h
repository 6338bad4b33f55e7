// The Sigstore public-good trusted root that ships inside imgtool: verify-blob's default
// (--trusted-root overrides). Its text is public_good_trusted_root.json, embedded at
// configure time; update that file from a current Sigstore client (sigstore-python's
// sigstore/_store/prod/trusted_root.json, or `cosign trusted-root` output) to rotate.
#pragma once

#include <string_view>

namespace imgtool::sigstore {

std::string_view PublicGoodTrustedRoot();

}  // namespace imgtool::sigstore
