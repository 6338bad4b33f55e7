// ClassifyDevice with the CUDA runtime's answers faked: every case the GPU checks meet, on
// a machine without a GPU. Only "no GPU here" is exit 2 (tests/gpu/run.sh: a skip); a GPU
// this build cannot use is exit 70, naming the versions, what was found and what is needed.
#include "cuda/device_check.h"

#include <gtest/gtest.h>

#include <string>

namespace trainer::cuda {
namespace {

// An H200 with a CUDA 13.0 driver and runtime, kernels for sm_90: usable.
DeviceQuery H200() {
  DeviceQuery q;
  q.count = 1;
  q.driver_version = 13000;
  q.runtime_version = 13000;
  q.device_nodes = true;
  q.built_sm = 90;
  q.name = "NVIDIA H200";
  q.major = 9;
  q.minor = 0;
  return q;
}

// The count call failed: no device was opened.
DeviceQuery CountFailed(CudaCode code, const std::string& text, int driver, bool nodes) {
  DeviceQuery q;
  q.count_call = {code, text};
  q.driver_version = driver;
  q.runtime_version = 13000;
  q.device_nodes = nodes;
  q.built_sm = 90;
  return q;
}

int Exit(const Status& s) { return ExitCodeFor(s.error().kind); }

TEST(DeviceCheck, UsableH200) {
  Status s = ClassifyDevice(H200());
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(DeviceCheck, NoDeviceIsExit2) {
  Status s = ClassifyDevice(
      CountFailed(CudaCode::kNoDevice, "no CUDA-capable device is detected (cudaErrorNoDevice)", 13000, true));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Exit(s), 2);
  EXPECT_EQ(s.error().message,
            "--backend cuda: no CUDA device (cudaGetDeviceCount: no CUDA-capable device is detected "
            "(cudaErrorNoDevice)); run on a machine with an NVIDIA GPU and driver, or use --backend cpu");
}

TEST(DeviceCheck, ZeroDevicesIsExit2) {
  DeviceQuery q = H200();
  q.count = 0;
  Status s = ClassifyDevice(q);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Exit(s), 2);
  EXPECT_NE(s.error().message.find("no CUDA device (cudaGetDeviceCount: 0 devices)"), std::string::npos);
}

// This machine: the runtime says "insufficient driver" because libcuda.so.1 is absent, and
// no GPU is attached either.
TEST(DeviceCheck, NoDriverAndNoGpuIsExit2) {
  const std::string text = "CUDA driver version is insufficient for CUDA runtime version (cudaErrorInsufficientDriver)";
  Status s = ClassifyDevice(CountFailed(CudaCode::kInsufficientDriver, text, 0, false));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Exit(s), 2);
  EXPECT_EQ(s.error().message, "--backend cuda: no CUDA device (cudaGetDeviceCount: " + text +
                                   "; no NVIDIA driver and no /dev/nvidia*); run on a machine with an NVIDIA GPU and "
                                   "driver, or use --backend cpu");
}

TEST(DeviceCheck, OldDriverIsExit70) {
  const std::string text = "CUDA driver version is insufficient for CUDA runtime version (cudaErrorInsufficientDriver)";
  Status s = ClassifyDevice(CountFailed(CudaCode::kInsufficientDriver, text, 12040, true));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Exit(s), 70);
  EXPECT_EQ(s.error().message,
            "--backend cuda: unusable CUDA device: cudaGetDeviceCount: " + text +
                "; driver CUDA 12.4, runtime CUDA 13.0, compute capability unknown (no device opened), kernels built "
                "for sm_90; needs a driver for CUDA 13.0 or newer: upgrade the driver, or build with an older CUDA "
                "toolkit");
}

// A GPU is attached (/dev/nvidia*) but the driver library is missing: not a skip.
TEST(DeviceCheck, GpuWithoutDriverLibraryIsExit70) {
  Status s =
      ClassifyDevice(CountFailed(CudaCode::kInsufficientDriver, "insufficient (cudaErrorInsufficientDriver)", 0, true));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Exit(s), 70);
  EXPECT_NE(s.error().message.find("with /dev/nvidia* present; driver none installed, runtime CUDA 13.0"),
            std::string::npos)
      << s.error().message;
  EXPECT_NE(s.error().message.find("install the NVIDIA driver's libcuda.so.1"), std::string::npos);
}

TEST(DeviceCheck, OtherCountFailureIsExit70) {
  Status s = ClassifyDevice(CountFailed(CudaCode::kOther, "unknown error (cudaErrorUnknown)", 13000, true));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Exit(s), 70);
  EXPECT_EQ(s.error().message.rfind("--backend cuda: unusable CUDA device: cudaGetDeviceCount: unknown error", 0), 0u)
      << s.error().message;
}

TEST(DeviceCheck, AmpereUnderSm90BuildIsExit70) {
  DeviceQuery q = H200();
  q.name = "NVIDIA A100-SXM4-80GB";
  q.major = 8;
  q.minor = 0;
  // The kernel probe fails too; the compute capability gives the clearer message.
  q.kernel_call = {CudaCode::kNoKernelImage, "no kernel image is available (cudaErrorNoKernelImageForDevice)"};
  Status s = ClassifyDevice(q);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Exit(s), 70);
  EXPECT_EQ(s.error().message,
            "--backend cuda: unusable CUDA device: compute capability 8.0 is older than the sm_90 the kernels were "
            "built for; driver CUDA 13.0, runtime CUDA 13.0, device 0 NVIDIA A100-SXM4-80GB compute capability 8.0, "
            "kernels built for sm_90; needs compute capability 9.0 or newer; rebuild with "
            "-DCMAKE_CUDA_ARCHITECTURES=80 (tests/gpu/run.sh: CUDA_ARCH=80)");
}

// A newer GPU and a build without PTX for it (e.g. CMAKE_CUDA_ARCHITECTURES=90-real).
TEST(DeviceCheck, NoKernelImageIsExit70) {
  DeviceQuery q = H200();
  q.name = "NVIDIA B200";
  q.major = 10;
  q.minor = 0;
  q.kernel_call = {CudaCode::kNoKernelImage, "no kernel image is available (cudaErrorNoKernelImageForDevice)"};
  Status s = ClassifyDevice(q);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Exit(s), 70);
  EXPECT_EQ(s.error().message,
            "--backend cuda: unusable CUDA device: no kernel image for this GPU (cudaFuncGetAttributes: no kernel "
            "image is available (cudaErrorNoKernelImageForDevice)); driver CUDA 13.0, runtime CUDA 13.0, device 0 "
            "NVIDIA B200 compute capability 10.0, kernels built for sm_90; needs kernels for sm_100; rebuild with "
            "-DCMAKE_CUDA_ARCHITECTURES=100 (tests/gpu/run.sh: CUDA_ARCH=100)");
}

TEST(DeviceCheck, NewerGpuWithPtxIsUsable) {
  DeviceQuery q = H200();
  q.major = 10;  // sm_90 PTX is compiled for it by the driver: the kernel probe says so
  Status s = ClassifyDevice(q);
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(DeviceCheck, CudaVersionString) {
  EXPECT_EQ(CudaVersionString(13000), "13.0");
  EXPECT_EQ(CudaVersionString(12040), "12.4");
  EXPECT_EQ(CudaVersionString(0), "0.0");
}

}  // namespace
}  // namespace trainer::cuda
