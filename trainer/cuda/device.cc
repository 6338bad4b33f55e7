#include "cuda/device.h"

#include <cublas_v2.h>
#include <cudnn.h>
#include <nccl.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "cuda/device_check.h"
#include "cuda/ops.h"

namespace trainer::cuda {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : "<unset>";
}

// The runtime's answer, in the codes ClassifyDevice decides on.
CudaCall Call(cudaError_t e) {
  if (e == cudaSuccess) return {};
  CudaCode code = CudaCode::kOther;
  switch (e) {
    case cudaErrorNoDevice:
      code = CudaCode::kNoDevice;
      break;
    case cudaErrorInsufficientDriver:
      code = CudaCode::kInsufficientDriver;
      break;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction:
    case cudaErrorUnsupportedPtxVersion:
      code = CudaCode::kNoKernelImage;
      break;
    default:
      break;
  }
  return {code, std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")"};
}

std::string Libraries() {
  int rt = 0, drv = 0, blas[3] = {}, nccl = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  cublasGetProperty(MAJOR_VERSION, &blas[0]);
  cublasGetProperty(MINOR_VERSION, &blas[1]);
  cublasGetProperty(PATCH_LEVEL, &blas[2]);
  ncclGetVersion(&nccl);
  const size_t dnn = cudnnGetVersion();  // 91900 = 9.19.0
  return "CUDA runtime " + CudaVersionString(rt) + ", driver " + CudaVersionString(drv) + "; cuBLAS " +
         std::to_string(blas[0]) + "." + std::to_string(blas[1]) + "." + std::to_string(blas[2]) + "; cuDNN " +
         std::to_string(dnn / 10000) + "." + std::to_string(dnn % 10000 / 100) + "." + std::to_string(dnn % 100) +
         "; NCCL " + std::to_string(nccl / 10000) + "." + std::to_string(nccl % 10000 / 100) + "." +
         std::to_string(nccl % 100) + " (NCCL_ALGO=" + Env("NCCL_ALGO") + ", NCCL_PROTO=" + Env("NCCL_PROTO") +
         "; allgather only: the gradient sum is the trainer's fixed tree, whatever NCCL picks)";
}

}  // namespace

Result<DeviceInfo> ProbeDevice(int rank) {
  DeviceQuery q;
  q.count_call = Call(cudaGetDeviceCount(&q.count));
  cudaDriverGetVersion(&q.driver_version);
  cudaRuntimeGetVersion(&q.runtime_version);
  q.device_nodes = access("/dev/nvidiactl", F_OK) == 0 || access("/dev/nvidia0", F_OK) == 0;
  q.built_sm = BuiltSm();
  cudaDeviceProp p{};
  if (q.count_call.code == CudaCode::kOk && q.count > 0) {
    q.device = rank % q.count;
    CUDA_CHECK(cudaGetDeviceProperties(&p, q.device));
    q.name = p.name;
    q.major = p.major;
    q.minor = p.minor;
    CUDA_CHECK(cudaSetDevice(q.device));
    q.kernel_call = Call(ProbeKernelImage());
  }
  TRAINER_TRY(ClassifyDevice(q));
  DeviceInfo info;
  info.count = q.count;
  info.device = q.device;
  char gib[32];
  std::snprintf(gib, sizeof(gib), "%.0f GiB", static_cast<double>(p.totalGlobalMem) / (1 << 30));
  info.description = "device " + std::to_string(info.device) + " of " + std::to_string(q.count) + ": " + p.name +
                     " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
                     std::to_string(p.multiProcessorCount) + " SMs, " + gib + "); " + Libraries();
  return info;
}

}  // namespace trainer::cuda
