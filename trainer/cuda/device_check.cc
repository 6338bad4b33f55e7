#include "cuda/device_check.h"

namespace trainer::cuda {
namespace {

Error NoDevice(const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, "--backend cuda: no CUDA device (cudaGetDeviceCount: " + why +
                                                 "); run on a machine with an NVIDIA GPU and driver, or use "
                                                 "--backend cpu");
}

std::string Sm(int major, int minor) { return std::to_string(major * 10 + minor); }

// What was found, for every "unusable" message: the issue is usually a mismatch of two of these.
std::string Facts(const DeviceQuery& q) {
  std::string driver = q.driver_version > 0 ? "CUDA " + CudaVersionString(q.driver_version) : "none installed";
  std::string device = q.major > 0 ? "device " + std::to_string(q.device) + " " + q.name + " compute capability " +
                                         std::to_string(q.major) + "." + std::to_string(q.minor)
                                   : "compute capability unknown (no device opened)";
  std::string built = q.built_sm > 0 ? "sm_" + std::to_string(q.built_sm) : "unknown";
  return "driver " + driver + ", runtime CUDA " + CudaVersionString(q.runtime_version) + ", " + device +
         ", kernels built for " + built;
}

Error Unusable(const DeviceQuery& q, const std::string& problem, const std::string& fix) {
  return MakeError(ErrorKind::kInternal,
                   "--backend cuda: unusable CUDA device: " + problem + "; " + Facts(q) + "; " + fix);
}

std::string Rebuild(const DeviceQuery& q) {
  const std::string sm = Sm(q.major, q.minor);
  return "rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + sm + " (tests/gpu/run.sh: CUDA_ARCH=" + sm + ")";
}

Status ClassifyCount(const DeviceQuery& q) {
  const CudaCall& c = q.count_call;
  if (c.code == CudaCode::kOk) return q.count > 0 ? Status::Ok() : Status(NoDevice("0 devices"));
  if (c.code == CudaCode::kNoDevice) return NoDevice(c.text);
  // The runtime reports a missing libcuda.so.1 as an insufficient driver too: that is "no
  // GPU here" only when no GPU is attached either.
  if (c.code == CudaCode::kInsufficientDriver && q.driver_version == 0 && !q.device_nodes) {
    return NoDevice(c.text + "; no NVIDIA driver and no /dev/nvidia*");
  }
  if (c.code == CudaCode::kInsufficientDriver && q.driver_version == 0) {
    return Unusable(q, "cudaGetDeviceCount: " + c.text + " with /dev/nvidia* present",
                    "install the NVIDIA driver's libcuda.so.1 (or mount it into the container)");
  }
  if (c.code == CudaCode::kInsufficientDriver) {
    return Unusable(q, "cudaGetDeviceCount: " + c.text,
                    "needs a driver for CUDA " + CudaVersionString(q.runtime_version) +
                        " or newer: upgrade the driver, or build with an older CUDA toolkit");
  }
  return Unusable(q, "cudaGetDeviceCount: " + c.text, "check nvidia-smi, the driver and /dev/nvidia*");
}

}  // namespace

std::string CudaVersionString(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

Status ClassifyDevice(const DeviceQuery& q) {
  TRAINER_TRY(ClassifyCount(q));
  // Before the kernel probe: an older GPU gets the clearer message (the probe fails too).
  if (q.built_sm > 0 && q.major * 10 + q.minor < q.built_sm) {
    return Unusable(q,
                    "compute capability " + std::to_string(q.major) + "." + std::to_string(q.minor) +
                        " is older than the sm_" + std::to_string(q.built_sm) + " the kernels were built for",
                    "needs compute capability " + std::to_string(q.built_sm / 10) + "." +
                        std::to_string(q.built_sm % 10) + " or newer; " + Rebuild(q));
  }
  if (q.kernel_call.code == CudaCode::kNoKernelImage) {
    return Unusable(q, "no kernel image for this GPU (cudaFuncGetAttributes: " + q.kernel_call.text + ")",
                    "needs kernels for sm_" + Sm(q.major, q.minor) + "; " + Rebuild(q));
  }
  if (q.kernel_call.code != CudaCode::kOk) {
    return Unusable(q, "cudaFuncGetAttributes: " + q.kernel_call.text, "check nvidia-smi and the driver's log (dmesg)");
  }
  return Status::Ok();
}

}  // namespace trainer::cuda
