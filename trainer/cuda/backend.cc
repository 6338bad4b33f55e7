// The plugin's entry point (libtrainer_cuda.so): everything else in it is hidden.
#include "cuda/backend.h"

#include "cuda/device.h"
#include "cuda/step_cuda.h"

namespace trainer::cuda {
namespace {

Result<std::string> Probe(int rank) {
  auto info = ProbeDevice(rank);
  if (!info.ok()) return info.error();
  return info->description;
}

StepFactory Factory(std::chrono::milliseconds collective_timeout) {
  CudaStepOptions options;
  options.collective_timeout = collective_timeout;
  return MakeCudaStepFactory(options);
}

const Backend kBackend = {kBackendAbi, &Probe, &Factory};

}  // namespace
}  // namespace trainer::cuda

extern "C" __attribute__((visibility("default"))) const trainer::cuda::Backend* trainer_cuda_backend() {
  return &trainer::cuda::kBackend;
}
