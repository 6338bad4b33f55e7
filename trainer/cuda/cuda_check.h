// Error checks for the CUDA backend: each macro evaluates a CUDA runtime, cuBLAS, cuDNN or
// NCCL call and, on failure, returns (from the enclosing function, which returns Status or
// Result<T>) an Error naming the call, the library's message, file:line and a hint.
// Library code never prints or exits; the trainer's main maps the kind to an exit code.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nccl.h>

#include "core/result.h"

namespace trainer::cuda {

Error CudaFailure(cudaError_t e, const char* call, const char* file, int line);
Error CublasFailure(cublasStatus_t s, const char* call, const char* file, int line);
Error CudnnFailure(cudnnStatus_t s, const char* call, const char* file, int line);
Error NcclFailure(ncclResult_t r, ncclComm_t comm, const char* call, const char* file, int line);

}  // namespace trainer::cuda

#define CUDA_CHECK(call)                                                                                             \
  do {                                                                                                               \
    cudaError_t cuda_check_e_ = (call);                                                                              \
    if (cuda_check_e_ != cudaSuccess) return ::trainer::cuda::CudaFailure(cuda_check_e_, #call, __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(call)                                                               \
  do {                                                                                   \
    cublasStatus_t cublas_check_s_ = (call);                                             \
    if (cublas_check_s_ != CUBLAS_STATUS_SUCCESS)                                        \
      return ::trainer::cuda::CublasFailure(cublas_check_s_, #call, __FILE__, __LINE__); \
  } while (0)

#define CUDNN_CHECK(call)                                                              \
  do {                                                                                 \
    cudnnStatus_t cudnn_check_s_ = (call);                                             \
    if (cudnn_check_s_ != CUDNN_STATUS_SUCCESS)                                        \
      return ::trainer::cuda::CudnnFailure(cudnn_check_s_, #call, __FILE__, __LINE__); \
  } while (0)

// comm: the communicator the call used (its last error adds detail), or nullptr.
#define NCCL_CHECK(comm, call)                                                               \
  do {                                                                                       \
    ncclResult_t nccl_check_r_ = (call);                                                     \
    if (nccl_check_r_ != ncclSuccess)                                                        \
      return ::trainer::cuda::NcclFailure(nccl_check_r_, (comm), #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: a bad launch configuration shows up here, a fault in the kernel
// at the next synchronizing call.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
