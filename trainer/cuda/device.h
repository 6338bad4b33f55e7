// Which GPU a rank uses, and device memory with an owner. The probe only asks the CUDA
// runtime (cudaGetDeviceCount, the versions, the device's properties, whether the kernels
// have an image for it): it is how `--backend cuda` refuses to start, with the runtime's
// reason, on a machine without a usable GPU.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "core/result.h"
#include "cuda/cuda_check.h"

namespace trainer::cuda {

struct DeviceInfo {
  int device = 0;           // rank % visible devices
  int count = 0;            // visible devices
  std::string description;  // device, libraries, NCCL version and settings (one line)
};

// The device that rank `rank` uses (made current), or why none: kInvalidInput
// "--backend cuda: no CUDA device (cudaGetDeviceCount: <the runtime's reason>); ..." when
// no GPU is present, kInternal "--backend cuda: unusable CUDA device: ..." when one is but
// this build cannot use it (cuda/device_check.h, ClassifyDevice, decides).
Result<DeviceInfo> ProbeDevice(int rank);

// n values of T on the current device, freed on destruction. Contents start undefined.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~DeviceArray() {
    if (p_ != nullptr) cudaFree(p_);
  }

  Status Allocate(size_t n) {
    if (p_ != nullptr) cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
    void* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, (n > 0 ? n : 1) * sizeof(T)));
    p_ = static_cast<T*>(p);
    n_ = n;
    return Status::Ok();
  }
  T* get() const { return p_; }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace trainer::cuda
