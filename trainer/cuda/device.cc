#include "cuda/device.h"

#include <cublas_v2.h>
#include <cudnn.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>

namespace trainer::cuda {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : "<unset>";
}

// 13000 -> "13.0"
std::string CudaVersion(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string Libraries() {
  int rt = 0, drv = 0, blas[3] = {}, nccl = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  cublasGetProperty(MAJOR_VERSION, &blas[0]);
  cublasGetProperty(MINOR_VERSION, &blas[1]);
  cublasGetProperty(PATCH_LEVEL, &blas[2]);
  ncclGetVersion(&nccl);
  const size_t dnn = cudnnGetVersion();  // 91900 = 9.19.0
  return "CUDA runtime " + CudaVersion(rt) + ", driver " + CudaVersion(drv) + "; cuBLAS " + std::to_string(blas[0]) +
         "." + std::to_string(blas[1]) + "." + std::to_string(blas[2]) + "; cuDNN " + std::to_string(dnn / 10000) +
         "." + std::to_string(dnn % 10000 / 100) + "." + std::to_string(dnn % 100) + "; NCCL " +
         std::to_string(nccl / 10000) + "." + std::to_string(nccl % 10000 / 100) + "." + std::to_string(nccl % 100) +
         " (NCCL_ALGO=" + Env("NCCL_ALGO") + ", NCCL_PROTO=" + Env("NCCL_PROTO") +
         "; allgather only: the gradient sum is the trainer's fixed tree, whatever NCCL picks)";
}

}  // namespace

Result<DeviceInfo> ProbeDevice(int rank) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::string why = e != cudaSuccess ? std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")"
                                       : std::string("0 devices");
    return MakeError(ErrorKind::kInvalidInput, "--backend cuda: no CUDA device (cudaGetDeviceCount: " + why +
                                                   "); run on a machine with an NVIDIA GPU and driver, or use "
                                                   "--backend cpu");
  }
  DeviceInfo info;
  info.count = count;
  info.device = rank % count;
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, info.device));
  char gib[32];
  std::snprintf(gib, sizeof(gib), "%.0f GiB", static_cast<double>(p.totalGlobalMem) / (1 << 30));
  info.description = "device " + std::to_string(info.device) + " of " + std::to_string(count) + ": " + p.name +
                     " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
                     std::to_string(p.multiProcessorCount) + " SMs, " + gib + "); " + Libraries();
  return info;
}

}  // namespace trainer::cuda
