// The registry auth file (imgtool/remote/credentials.h ParseAuthFile): docker's
// config.json or containers' auth.json: auths (base64 USER:PASSWORD, identity tokens),
// credHelpers and credsStore, keys as host names or old URL forms. Read for a few hosts,
// Docker Hub's three names included; no helper is run (that is LookupCredentials').
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "oci/base64.h"
#include "remote/credentials.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool;
  std::string_view raw = fuzz::Bytes(data, size);
  for (const char* host : {"docker.io", "registry.test:5000", "localhost"}) {
    (void)remote::ParseAuthFile(raw, "config.json", host);
  }
  (void)oci::Base64Decode(raw, "auth");
  (void)remote::ParseCredsFlag(std::string(raw));
  return 0;
}
