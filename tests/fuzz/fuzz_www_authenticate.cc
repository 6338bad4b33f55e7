// WWW-Authenticate (imgtool/remote/authorizer.h ParseChallenge): a registry's 401 names
// its auth scheme, realm, service and scope in a header we parse by hand (quoted
// strings, escapes, commas inside quotes).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "remote/authorizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool;
  (void)remote::ParseChallenge(std::string(fuzz::Bytes(data, size)));
  return 0;
}
