#include "fs/atomic_file.h"
#include "sigstore/public_good_root.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {

Result<TrustedRoot> LoadTrustedRoot(const std::string& path, RootUse use) {
  if (path.empty()) return ParseTrustedRoot(PublicGoodTrustedRoot(), "built-in public-good trusted root", use);
  auto text = fs::ReadSmallFile(path, kMaxTrustedRoot);
  if (!text.ok()) return text.error();
  return ParseTrustedRoot(*text, path, use);
}

}  // namespace imgtool::sigstore
