// TF_CONFIG (trainer/cluster/cluster_config.h): the cluster a trainer or a fleet check
// joins, from the environment of a pod any job spec can set; and host:port alone.
// Inputs may be nesting recipes (fuzz_util.h, ExpandNesting).
#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/cluster_config.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text = imgtool::fuzz::NestedInput(data, size);
  (void)trainer::ParseTfConfig(text);
  (void)trainer::ParseHostPort(text);
  return 0;
}
