// The CUDA backend as the trainer binary sees it. It is a plugin, libtrainer_cuda.so,
// that main.cc loads (cuda/loader.h) for --backend cuda only, so the trainer binary
// itself needs no CUDA library to start: the CPU golden image has none, and a machine
// without a GPU still runs --backend cpu. The plugin and the binary come from one build
// (same compiler, same headers), so C++ types cross the boundary; kBackendAbi catches a
// stale plugin from another build.
#pragma once

#include <chrono>
#include <string>

#include "core/result.h"
#include "train/step_runner.h"

namespace trainer::cuda {

constexpr int kBackendAbi = 2;  // 2: step_factory takes the collective timeout

struct Backend {
  int abi = kBackendAbi;
  // The device rank `rank` would use, the libraries and the NCCL settings (one line), or
  // why there is none: "--backend cuda: no CUDA device (cudaGetDeviceCount: ...)".
  Result<std::string> (*probe)(int rank) = nullptr;
  // Train's step factory (train/step_runner.h): a CudaStep (cuda/step_cuda.h) per rank,
  // whose waits fail after `collective_timeout` (--collective-timeout) instead of hanging.
  StepFactory (*step_factory)(std::chrono::milliseconds collective_timeout) = nullptr;
};

}  // namespace trainer::cuda

// The plugin's one exported symbol.
extern "C" const trainer::cuda::Backend* trainer_cuda_backend();
