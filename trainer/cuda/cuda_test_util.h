// Helpers shared by the GPU tests: the skip when there is no device, device buffers that
// round-trip host vectors, and the parity check (one "PARITY" line per check, which
// tests/gpu/run.sh collects into its table).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cuda/device.h"

namespace trainer::cuda::testing {

// Why this machine cannot run GPU tests ("no CUDA device (cudaGetDeviceCount: ...)"), or
// "" when it can.
inline const std::string& NoDevice() {
  static const std::string why = [] {
    auto p = ProbeDevice(0);
    if (p.ok()) return std::string();
    const std::string& m = p.error().message;
    const std::string prefix = "--backend cuda: ";
    return m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m;
  }();
  return why;
}

// Skips the test, naming the reason, when there is no device (ctest then counts it as
// skipped: SKIP_REGULAR_EXPRESSION in trainer/CMakeLists.txt).
#define REQUIRE_GPU()                                                                                        \
  do {                                                                                                       \
    if (!::trainer::cuda::testing::NoDevice().empty()) GTEST_SKIP() << ::trainer::cuda::testing::NoDevice(); \
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
  size_t unequal = 0;  // elements whose values differ at all
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
    if (g != c) ++p.unequal;
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
