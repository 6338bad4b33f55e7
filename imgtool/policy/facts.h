// What policy evaluation knows about one image: plain data, gathered by gather.h (or
// written by hand in tests). Each fact that needs I/O is a Result: a fact that could not
// be read carries the error, and every rule that needs it fails with that error as the
// reason. A fact left ungathered says so, so a forgotten fact fails closed too.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "oci/result.h"

namespace imgtool::policy {

// What a signature verifier reports for one image.
struct SignatureFacts {
  bool verified = false;
  std::vector<std::string> reasons;  // why not, or which key verified it
};

// The seam to imgtool/sign: verifies the signatures of the image named by `reference`
// against the trusted public keys (PEM paths). Policy code never verifies by itself.
using SignatureVerifier =
    std::function<SignatureFacts(const std::string& reference, const std::vector<std::string>& trusted_key_paths)>;

struct SetuidFile {
  std::string layer;  // digest of the layer holding it
  std::string path;
  uint32_t mode = 0;
};

inline Error NotGathered(const std::string& what) {
  return MakeError(ErrorKind::kInternal, what + " was not gathered");
}

struct ImageFacts {
  std::string reference;                           // as the user gave it
  Status opened;                                   // failure: the image could not be opened; every rule fails
  std::string digest;                              // manifest digest the reference resolved to
  std::string user;                                // config.User ("10001:10001", "app", "" for root)
  std::map<std::string, std::string> labels;       // config labels
  std::map<std::string, std::string> annotations;  // manifest annotations
  uint64_t compressed_size = 0;                    // sum of the manifest's layer sizes

  Result<std::string> passwd = NotGathered("/etc/passwd");  // kNotFound: no layer has it
  Result<std::string> stack_json = NotGathered("/etc/imgtool/stack.json");
  Result<std::vector<SetuidFile>> setuid_files = NotGathered("the layer scan");
  Result<uint64_t> uncompressed_size = NotGathered("the uncompressed size");
  Result<SignatureFacts> signature = NotGathered("the signature check");
};

}  // namespace imgtool::policy
