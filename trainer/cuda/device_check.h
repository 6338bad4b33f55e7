// Whether the GPU that ProbeDevice found can run this build, decided apart from the CUDA
// calls that ask: device.cc gathers their return codes and versions into a DeviceQuery,
// ClassifyDevice decides. The split exists so that the cases no lent machine shows on
// demand (an old driver, a pre-Hopper GPU, a build without this GPU's kernels) are unit
// tested on any machine; this file includes no CUDA header.
//
// The rule (tests/gpu/run.sh relies on it): only "no GPU here" may be a skip. Anything
// else, a GPU the build cannot use, is an error that says what was found and what is needed.
#pragma once

#include <string>

#include "core/result.h"

namespace trainer::cuda {

// The CUDA runtime codes the decision needs (device.cc maps cudaError_t onto these).
enum class CudaCode {
  kOk,
  kNoDevice,            // cudaErrorNoDevice: the driver sees no GPU (or CUDA_VISIBLE_DEVICES hides them)
  kInsufficientDriver,  // cudaErrorInsufficientDriver: no libcuda.so.1, or one older than the runtime
  kNoKernelImage,       // cudaErrorNoKernelImageForDevice, cudaErrorInvalidDeviceFunction, ...UnsupportedPtxVersion
  kOther,
};

struct CudaCall {
  CudaCode code = CudaCode::kOk;
  std::string text;  // "<cudaGetErrorString> (<cudaGetErrorName>)"; empty when kOk
};

struct DeviceQuery {
  CudaCall count_call;        // cudaGetDeviceCount
  int count = 0;              // visible devices
  int driver_version = 0;     // cudaDriverGetVersion: 12040 = CUDA 12.4; 0 = no driver installed
  int runtime_version = 0;    // cudaRuntimeGetVersion: 13000 = CUDA 13.0
  bool device_nodes = false;  // /dev/nvidiactl or /dev/nvidia0 exists (a GPU is attached)
  int built_sm = 0;           // the lowest architecture the kernels were built for (90 = sm_90); 0: unknown
  // The device the rank uses; filled only when count_call is kOk and count > 0.
  int device = 0;
  std::string name;          // "NVIDIA H200"
  int major = 0, minor = 0;  // compute capability
  CudaCall kernel_call;      // cudaFuncGetAttributes on one of ops.cu's kernels
};

// Ok when the device in `q` can run this build. Otherwise:
//  - kInvalidInput (trainer exit 2) "--backend cuda: no CUDA device (cudaGetDeviceCount: <reason>); ...":
//    no GPU is present (count 0, cudaErrorNoDevice, or neither a driver nor /dev/nvidia*);
//  - kInternal (trainer exit 70) "--backend cuda: unusable CUDA device: <problem>; driver ..., runtime ...,
//    <device> compute capability M.m, kernels built for sm_NN; <fix>": any other failure.
Status ClassifyDevice(const DeviceQuery& q);

// 13000 -> "13.0"
std::string CudaVersionString(int version);

}  // namespace trainer::cuda
