// Peak single-precision FLOP/s of this machine, measured: independent multiply and add
// chains over 8-wide vectors (no FMA, as the trainer is built), one thread per core.
// Not part of the trainer; bench/trainer_cpu reports our fraction of this figure.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

typedef float v8 __attribute__((vector_size(32)));

// AVX2 on x86-64 (8 lanes in one register); elsewhere the baseline ISA (aarch64: NEON,
// two registers per vector).
#if defined(__x86_64__)
#define PEAK_TARGET __attribute__((target("avx2"), noinline))
#else
#define PEAK_TARGET __attribute__((noinline))
#endif

PEAK_TARGET double Kernel(long iters) {
  // 6 independent mul chains and 6 add chains: enough to hide latency on the FP ports,
  // few enough to stay in the 16 vector registers.
  v8 m[6], a[6];
  for (int i = 0; i < 6; ++i) {
    m[i] = v8{} + 1.0f;
    a[i] = v8{} + 0.0f;
  }
  const v8 k = v8{} + 0.9999999f, d = v8{} + 1e-7f;
  for (long it = 0; it < iters; ++it) {
    for (int i = 0; i < 6; ++i) {
      m[i] = m[i] * k;
      a[i] = a[i] + d;
    }
  }
  v8 s = v8{};
  for (int i = 0; i < 6; ++i) s += m[i] + a[i];
  double r = 0;
  for (int i = 0; i < 8; ++i) r += s[i];
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  const long iters = 200000000;
  std::vector<std::thread> pool;
  std::vector<double> sink(static_cast<size_t>(threads));
  auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sink[static_cast<size_t>(t)] = Kernel(iters); });
  for (auto& th : pool) th.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double flops = static_cast<double>(iters) * 12 * 8 * threads;  // 12 vector ops of 8 lanes per iteration
  std::printf("{\"threads\": %d, \"gflops\": %.1f, \"check\": %g}\n", threads, flops / s / 1e9, sink[0]);
  return 0;
}
