#include "cuda/cuda_check.h"

#include <cstring>
#include <string>

namespace trainer::cuda {
namespace {

// "trainer/cuda/ops.cu:42" rather than the build machine's absolute path.
std::string Where(const char* file, int line) {
  const char* at = std::strstr(file, "trainer/");
  return std::string(at != nullptr ? at : file) + ":" + std::to_string(line);
}

const char* CudaHint(cudaError_t e) {
  switch (e) {
    case cudaErrorInsufficientDriver:
      return "the NVIDIA driver (libcuda.so.1) is missing or older than this CUDA runtime";
    case cudaErrorNoDevice:
      return "no GPU is visible to this process (check nvidia-smi and CUDA_VISIBLE_DEVICES)";
    case cudaErrorMemoryAllocation:
      return "the GPU is out of memory";
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return "the kernels were built for another GPU architecture (rebuild with -DCMAKE_CUDA_ARCHITECTURES=<sm>)";
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorStreamCaptureImplicit:
      return "an operation that CUDA graph capture does not allow ran inside the captured step";
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
      return "a kernel faulted (an index error); rerun with compute-sanitizer to find it";
    default:
      return "see the CUDA runtime documentation for this error";
  }
}

}  // namespace

Error CudaFailure(cudaError_t e, const char* call, const char* file, int line) {
  return MakeError(ErrorKind::kInternal, std::string(call) + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) +
                                             ") at " + Where(file, line) + "; " + CudaHint(e));
}

Error CublasFailure(cublasStatus_t s, const char* call, const char* file, int line) {
  const char* hint = s == CUBLAS_STATUS_NOT_INITIALIZED ? "cuBLAS could not start (driver or GPU missing?)"
                     : s == CUBLAS_STATUS_ALLOC_FAILED  ? "the GPU is out of memory"
                     : s == CUBLAS_STATUS_INVALID_VALUE ? "a bad GEMM shape or leading dimension (a bug)"
                                                        : "see the cuBLAS documentation for this status";
  return MakeError(ErrorKind::kInternal, std::string(call) + ": " + cublasGetStatusString(s) + " (" +
                                             cublasGetStatusName(s) + ") at " + Where(file, line) + "; " + hint);
}

Error CudnnFailure(cudnnStatus_t s, const char* call, const char* file, int line) {
  char detail[256] = {};
  cudnnGetLastErrorString(detail, sizeof(detail));
  return MakeError(ErrorKind::kInternal, std::string(call) + ": " + cudnnGetErrorString(s) +
                                             (detail[0] != '\0' ? std::string(" (") + detail + ")" : "") + " at " +
                                             Where(file, line) + "; check that cuDNN matches this CUDA runtime");
}

Error NcclFailure(ncclResult_t r, ncclComm_t comm, const char* call, const char* file, int line) {
  const char* last = ncclGetLastError(comm);
  // A peer that went away or a network problem is a transport error, as with Gloo.
  const ErrorKind kind = r == ncclRemoteError || r == ncclSystemError ? ErrorKind::kTransport : ErrorKind::kInternal;
  return MakeError(kind, std::string(call) + ": " + ncclGetErrorString(r) +
                             (last != nullptr && last[0] != '\0' ? std::string(" (") + last + ")" : "") + " at " +
                             Where(file, line) + "; rerun with NCCL_DEBUG=INFO for NCCL's own log");
}

}  // namespace trainer::cuda
