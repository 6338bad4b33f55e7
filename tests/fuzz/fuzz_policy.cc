// Policy files (imgtool/policy/policy.h ParsePolicy): the rules an admission webhook or
// `imgtool policy check` enforces, strict JSON naming the path of any mistake. Key
// paths in signedBy are only resolved here, never read.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "policy/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool;
  auto p = policy::ParsePolicy(std::string(fuzz::Bytes(data, size)), "/fuzz", "policy.json");
  if (p.ok()) (void)p->RuleNames();
  return 0;
}
