// Helpers shared by the GPU tests: the skip when there is no device, device buffers that
// round-trip host vectors, and the parity check (one "PARITY" line per check, which
// tests/gpu/run.sh collects into its table).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cuda/device.h"

namespace trainer::cuda::testing {

// Why this machine cannot run GPU tests, "" when it can: ProbeDevice's message without
// "--backend cuda: ", e.g. "no CUDA device (cudaGetDeviceCount: ...)" or "unusable CUDA
// device: ...". `skip` says which: only "no device" may be a skip (cuda/device_check.h).
struct DeviceProblem {
  std::string why;
  bool skip = false;
};
inline const DeviceProblem& NoDevice() {
  static const DeviceProblem problem = [] {
    auto p = ProbeDevice(0);
    if (p.ok()) return DeviceProblem{};
    const std::string& m = p.error().message;
    const std::string prefix = "--backend cuda: ";
    return DeviceProblem{m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m,
                         p.error().kind == ErrorKind::kInvalidInput};
  }();
  return problem;
}

// Skips the test, naming the reason, when there is no device (ctest then counts it as
// skipped: SKIP_REGULAR_EXPRESSION in trainer/CMakeLists.txt); fails it when there is one
// this build cannot use (an old driver, an older GPU than the build's architecture).
#define REQUIRE_GPU()                                                    \
  do {                                                                   \
    const auto& require_gpu_p_ = ::trainer::cuda::testing::NoDevice();   \
    if (require_gpu_p_.skip) GTEST_SKIP() << require_gpu_p_.why;         \
    if (!require_gpu_p_.why.empty()) GTEST_FAIL() << require_gpu_p_.why; \
  } while (0)

#define ASSERT_OK(expr)                                             \
  do {                                                              \
    auto assert_ok_s_ = (expr);                                     \
    ASSERT_TRUE(assert_ok_s_.ok()) << assert_ok_s_.error().message; \
  } while (0)

// A device copy of a host vector (or n uninitialized values); Poison fills it with NaN.
template <typename T>
class Buf {
 public:
  explicit Buf(size_t n) {
    auto s = d_.Allocate(n);
    if (!s.ok()) ADD_FAILURE() << s.error().message;
  }
  explicit Buf(const std::vector<T>& h) : Buf(h.size()) { Put(h); }
  // Both wait for the device: the ops run on a non-blocking stream, which does not wait for
  // the legacy default stream these plain calls use.
  void Put(const std::vector<T>& h) {
    EXPECT_EQ(cudaMemcpy(d_.get(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  // All bits set: a NaN in every float and double, so an element an op forgot to write
  // can never pass a comparison.
  void Poison() {
    EXPECT_EQ(cudaMemset(d_.get(), 0xFF, d_.bytes()), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  std::vector<T> Get() const {
    std::vector<T> h(d_.size());
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // and surface a kernel fault here
    EXPECT_EQ(cudaMemcpy(h.data(), d_.get(), d_.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
  T* get() { return d_.get(); }

 private:
  DeviceArray<T> d_;
};

// A fresh seed per process, printed so that a failure can be replayed (TRAINER_TEST_SEED).
inline uint32_t TestSeed() {
  static const uint32_t seed = [] {
    const char* env = std::getenv("TRAINER_TEST_SEED");
    uint32_t s = env != nullptr ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10)) : std::random_device{}();
    std::printf("random inputs: TRAINER_TEST_SEED=%u\n", s);
    return s;
  }();
  return seed;
}

inline std::vector<float> Uniform(size_t n, std::mt19937& rng, float lo = -1, float hi = 1) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

struct Parity {
  double max_rel = 0;  // max |gpu - cpu| / max |cpu|; infinite when any value is NaN or inf
  size_t bad = 0;      // NaN or inf on either side
  size_t unequal = 0;  // elements whose bits differ (-0.0 and +0.0 too)
  size_t count = 0;
};

// Relative error in the max norm: an element near zero in a sum of mixed signs has no
// meaningful relative error of its own, so differences are measured against the largest
// reference value. NaN or inf anywhere, on either side, fails.
template <typename A, typename B>
Parity Compare(const std::vector<A>& gpu, const std::vector<B>& cpu) {
  Parity p;
  p.count = gpu.size();
  if (gpu.size() != cpu.size()) {
    p.bad = 1;
    p.max_rel = INFINITY;
    return p;
  }
  double ref = 0;
  for (const auto& c : cpu) ref = std::fmax(ref, std::fabs(static_cast<double>(c)));
  double worst = 0;
  for (size_t i = 0; i < gpu.size(); ++i) {
    const double g = static_cast<double>(gpu[i]), c = static_cast<double>(cpu[i]);
    if (!std::isfinite(g) || !std::isfinite(c)) {
      ++p.bad;
      continue;
    }
    // Bit patterns, not ==: cuDNN's -0.0 against the reference's +0.0 is a difference.
    // Widening to double is exact and keeps the sign, so the doubles' bits decide for floats too.
    if (std::bit_cast<uint64_t>(g) != std::bit_cast<uint64_t>(c)) ++p.unequal;
    worst = std::fmax(worst, std::fabs(g - c));
  }
  p.max_rel = p.bad > 0 ? INFINITY : (ref > 0 ? worst / ref : worst);
  return p;
}

constexpr double kTolerance = 1e-5;

// Prints "PARITY <op> <max rel err> <equal|close|-> <pass|FAIL>" and fails the test when
// the error reaches the tolerance, when anything is NaN, or (exact) when any value differs.
inline void Report(const std::string& op, const Parity& p, bool exact) {
  const bool pass = p.bad == 0 && p.max_rel < kTolerance && (!exact || p.unequal == 0);
  std::printf("PARITY %-34s %10.3e %-5s %s\n", op.c_str(), p.max_rel, p.unequal == 0 ? "equal" : "close",
              pass ? "pass" : "FAIL");
  std::fflush(stdout);
  EXPECT_TRUE(pass) << op << ": max rel err " << p.max_rel << ", " << p.bad << " NaN/inf, " << p.unequal << " of "
                    << p.count << " values differ" << (exact ? " (this op must give the reference's values)" : "");
}

}  // namespace trainer::cuda::testing
