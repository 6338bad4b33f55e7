// The whole GPU step (CudaStep) against the CPU step (TrainStep, through CpuStepRunner):
// the same initial weights and batches, loss and weights compared after the eager first
// step and after graph-replayed steps; two GPU runs (and graph against eager) give the
// same weights digest; CPU and GPU losses agree to 1e-4 over 100 steps of Fashion-MNIST.
// Without a GPU each test is skipped with the runtime's reason.
#include "cuda/step_cuda.h"

#include <gtest/gtest.h>

#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "comm/comm.h"
#include "core/sha256.h"
#include "core/thread_pool.h"
#include "cuda/cuda_test_util.h"
#include "data/dataset.h"
#include "model/mlp.h"
#include "train/step_runner.h"

namespace trainer::cuda {
namespace {

using testing::Compare;
using testing::Report;

constexpr uint64_t kSeed = 42;
constexpr StepShape kShape{64, 8};

// Images in [0, 1] with the data's mix of blank and inked pixels; labels 0..9.
Split Synthetic(int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  Split s;
  s.count = count;
  s.images.resize(static_cast<size_t>(count) * kImageSize);
  for (auto& x : s.images) x = u(rng) < 0.5f ? 0.0f : u(rng);
  s.labels.resize(static_cast<size_t>(count));
  for (auto& y : s.labels) y = static_cast<uint8_t>(rng() % kClasses);
  return s;
}

struct State {
  explicit State(uint64_t seed) : p(MlpLayout::kCount), m(MlpLayout::kCount, 0.0f), v(MlpLayout::kCount, 0.0f) {
    InitParams(p.data(), seed);
  }
  std::vector<float> p, m, v;
  std::string Digest() const { return "sha256:" + HexOf(Sha256(p.data(), p.size() * sizeof(float))); }
};

// Steps [from, to) of the run (step k is epoch k / steps_per_epoch), then Sync.
Status RunSteps(StepRunner& runner, State& s, const Split& train, int from, int to, std::vector<double>* losses) {
  const int per_epoch = train.count / kShape.global_batch;
  std::vector<int32_t> perm;
  int perm_epoch = -1;
  for (int k = from; k < to; ++k) {
    const int epoch = k / per_epoch, step = k % per_epoch;
    if (epoch != perm_epoch) {
      perm = EpochPermutation(kSeed, epoch, train.count);
      perm_epoch = epoch;
    }
    double loss = 0;
    TRAINER_TRY(runner.Run(s.p.data(), s.m.data(), s.v.data(), perm, epoch, step, k + 1, &loss));
    if (losses != nullptr) losses->push_back(loss);
  }
  return runner.Sync(s.p.data(), s.m.data(), s.v.data(), true);
}

std::unique_ptr<StepRunner> Gpu(const Split& train, Comm& comm, int device = 0, CudaStepOptions options = {}) {
  auto s = CudaStep::Create(train, kShape, kSeed, cpu::AdamConfig{}, comm, device, options);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? std::unique_ptr<StepRunner>(std::move(*s)) : nullptr;
}

TEST(CudaStepNoGpu, OwnsTheCpuStepsRows) {
  for (int world = 1; world <= 16; ++world) {
    for (int rank = 0; rank < world; ++rank) {
      RowSlice a = OwnedRows(rank, world), b = CudaStep::W1Rows(rank, world);
      EXPECT_EQ(a.begin, b.begin);
      EXPECT_EQ(a.end, b.end);
    }
  }
}

// One step, then four more replayed from the CUDA graph, against the CPU step.
TEST(CudaStep, MatchesTheCpuStep) {
  REQUIRE_GPU();
  const Split train = Synthetic(640, 7);
  auto comm = MakeLocalComm();
  ThreadPool pool(2);
  CpuStepRunner cpu_step(train, kShape, kSeed, cpu::AdamConfig{}, *comm, pool);
  auto gpu_step = Gpu(train, *comm);
  ASSERT_NE(gpu_step, nullptr);
  State cpu(kSeed), gpu(kSeed);
  std::vector<double> cpu_loss, gpu_loss;
  ASSERT_OK(RunSteps(cpu_step, cpu, train, 0, 1, &cpu_loss));
  ASSERT_OK(RunSteps(*gpu_step, gpu, train, 0, 1, &gpu_loss));
  Report("train step 1 (eager): loss", Compare(gpu_loss, cpu_loss), false);
  Report("train step 1 (eager): weights", Compare(gpu.p, cpu.p), false);
  Report("train step 1 (eager): adam m", Compare(gpu.m, cpu.m), false);
  Report("train step 1 (eager): adam v", Compare(gpu.v, cpu.v), false);
  ASSERT_OK(RunSteps(cpu_step, cpu, train, 1, 5, &cpu_loss));
  ASSERT_OK(RunSteps(*gpu_step, gpu, train, 1, 5, &gpu_loss));
  const auto& captured = static_cast<CudaStep&>(*gpu_step);
  EXPECT_TRUE(captured.graph_captured()) << captured.graph_error();
  Report("train steps 2-5 (graph): loss", Compare(gpu_loss, cpu_loss), false);
  Report("train steps 2-5 (graph): weights", Compare(gpu.p, cpu.p), false);
}

// Same weights digest from two GPU runs, and from a run without the CUDA graph.
TEST(CudaStep, TwoRunsGiveTheSameDigest) {
  REQUIRE_GPU();
  const Split train = Synthetic(640, 8);  // 10 steps per epoch: 30 steps cross two epoch ends
  auto comm = MakeLocalComm();
  State a(kSeed), b(kSeed), eager(kSeed);
  {
    auto r = Gpu(train, *comm);
    ASSERT_NE(r, nullptr);
    ASSERT_OK(RunSteps(*r, a, train, 0, 30, nullptr));
  }
  {
    auto r = Gpu(train, *comm);
    ASSERT_NE(r, nullptr);
    ASSERT_OK(RunSteps(*r, b, train, 0, 30, nullptr));
  }
  {
    auto r = Gpu(train, *comm, 0, CudaStepOptions{.graph = false});
    ASSERT_NE(r, nullptr);
    ASSERT_OK(RunSteps(*r, eager, train, 0, 30, nullptr));
    EXPECT_FALSE(static_cast<CudaStep&>(*r).graph_captured());
  }
  std::printf("DIGEST run 1 %s\nDIGEST run 2 %s\nDIGEST eager %s\n", a.Digest().c_str(), b.Digest().c_str(),
              eager.Digest().c_str());
  EXPECT_EQ(a.Digest(), b.Digest());
  EXPECT_EQ(a.Digest(), eager.Digest()) << "the CUDA graph must replay exactly the eager step";
  EXPECT_NE(a.Digest(), State(kSeed).Digest()) << "the weights did not move";
}

// 100 steps of Fashion-MNIST (synthetic data when it is not installed): every step's loss
// within 1e-4 of the CPU step's.
TEST(CudaStep, LossFollowsTheCpuFor100Steps) {
  REQUIRE_GPU();
  const char* dir = std::getenv("TRAINER_TEST_DATA");
  auto loaded = LoadFashionMnist(dir != nullptr ? dir : kDefaultDataDir, 6400, 100);
  const Split train = loaded.ok() ? loaded->train : Synthetic(6400, 9);
  std::printf("data: %s\n", loaded.ok() ? "Fashion-MNIST, first 6400 examples" : "synthetic (no Fashion-MNIST)");
  auto comm = MakeLocalComm();
  ThreadPool pool(2);
  CpuStepRunner cpu_step(train, kShape, kSeed, cpu::AdamConfig{}, *comm, pool);
  auto gpu_step = Gpu(train, *comm);
  ASSERT_NE(gpu_step, nullptr);
  State cpu(kSeed), gpu(kSeed);
  std::vector<double> cpu_loss, gpu_loss;
  ASSERT_OK(RunSteps(cpu_step, cpu, train, 0, 100, &cpu_loss));
  ASSERT_OK(RunSteps(*gpu_step, gpu, train, 0, 100, &gpu_loss));
  double worst = 0;
  int at = 0;
  for (size_t k = 0; k < cpu_loss.size(); ++k) {
    ASSERT_TRUE(std::isfinite(gpu_loss[k])) << "step " << k + 1;
    const double d = std::fabs(gpu_loss[k] - cpu_loss[k]);
    if (d > worst) {
      worst = d;
      at = static_cast<int>(k) + 1;
    }
  }
  std::printf("LOSS 100 steps: max |gpu - cpu| %.3e at step %d (loss %.6f cpu, %.6f gpu at step 100)\n", worst, at,
              cpu_loss.back(), gpu_loss.back());
  EXPECT_LT(worst, 1e-4);
}

// What a step costs once captured: the mean over 500 steps run back to back (no host
// sync in between), against the launch of a one-node graph (a 4-byte memset). The step is launch-bound;
// the graph should bring it close to one launch plus its kernels' own run time.
TEST(CudaStep, StepTime) {
  REQUIRE_GPU();
  const Split train = Synthetic(64 * 600, 11);
  auto comm = MakeLocalComm();
  auto r = Gpu(train, *comm);
  ASSERT_NE(r, nullptr);
  State s(kSeed);
  ASSERT_OK(RunSteps(*r, s, train, 0, 20, nullptr));  // warm-up: eager step, capture, replays
  const std::vector<int32_t> perm = EpochPermutation(kSeed, 0, train.count);
  const int steps = 500;
  auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < steps; ++k) {
    double loss = 0;
    ASSERT_OK(r->Run(s.p.data(), s.m.data(), s.v.data(), perm, 0, 20 + k, 21 + k, k + 1 == steps ? &loss : nullptr));
  }
  const double step_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / steps;
  auto& cs = static_cast<CudaStep&>(*r);
  // A one-node graph, launched and synchronized the same way.
  testing::Buf<float> word(1);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(word.get(), 0, sizeof(float), stream), cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int k = 0; k < 20; ++k) ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  auto e0 = std::chrono::steady_clock::now();
  for (int k = 0; k < steps; ++k) ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const double empty_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - e0).count() / steps;
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  std::printf("TIMING step %.2f us = %.0f samples/s (graph of %zu nodes); a one-node graph launch %.2f us\n", step_us,
              kShape.global_batch / step_us * 1e6, cs.graph_nodes(), empty_us);
  EXPECT_TRUE(cs.graph_captured()) << cs.graph_error();
}

TEST(NcclComm, OneRankGathersInPlace) {
  REQUIRE_GPU();
  auto ctx = Context::Create(0);
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  auto host = MakeLocalComm();
  auto nccl = NcclComm::Create(*host, (*ctx)->stream());
  ASSERT_TRUE(nccl.ok()) << nccl.error().message;
  std::vector<float> data = {1, 2, 3, 4};
  testing::Buf<float> buf(data);
  ASSERT_OK((*nccl)->AllGather(buf.get(), buf.get(), data.size()));
  EXPECT_EQ(buf.Get(), data);
}

// W = 2 over NCCL when this machine has two GPUs: both ranks end with the same weights.
// (Equal to the one-GPU digest is reported, not required: cuBLAS may pick other kernels
// for the per-rank shapes.)
TEST(CudaStep, TwoGpusAgree) {
  REQUIRE_GPU();
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  if (devices < 2) GTEST_SKIP() << "needs 2 GPUs, this machine has " << devices;
  struct Group {
    std::barrier<> barrier{2};
    const void* root = nullptr;
  } group;
  class ThreadComm : public Comm {
   public:
    ThreadComm(Group& g, int rank) : g_(g), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return 2; }
    Status AllGather(const float*, float*, size_t) override {
      return MakeError(ErrorKind::kInternal, "not used by CudaStep");
    }
    Status Broadcast(void* data, size_t bytes, int root) override {
      if (rank_ == root) g_.root = data;
      g_.barrier.arrive_and_wait();
      if (rank_ != root) std::memcpy(data, g_.root, bytes);
      g_.barrier.arrive_and_wait();
      return Status::Ok();
    }

   private:
    Group& g_;
    int rank_;
  };
  const Split train = Synthetic(640, 10);
  std::vector<State> states(2, State(kSeed));
  std::vector<std::string> errors(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      ThreadComm comm(group, r);
      auto s = CudaStep::Create(train, kShape, kSeed, cpu::AdamConfig{}, comm, r);
      if (!s.ok()) {
        errors[static_cast<size_t>(r)] = s.error().message;
        return;
      }
      auto st = RunSteps(**s, states[static_cast<size_t>(r)], train, 0, 20, nullptr);
      if (!st.ok()) errors[static_cast<size_t>(r)] = st.error().message;
    });
  }
  for (auto& t : ranks) t.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  EXPECT_EQ(states[0].Digest(), states[1].Digest());
  auto comm = MakeLocalComm();
  State one(kSeed);
  auto r = Gpu(train, *comm);
  ASSERT_NE(r, nullptr);
  ASSERT_OK(RunSteps(*r, one, train, 0, 20, nullptr));
  std::printf("DIGEST 2 GPUs %s, 1 GPU %s (%s)\n", states[0].Digest().c_str(), one.Digest().c_str(),
              states[0].Digest() == one.Digest() ? "equal" : "different: cuBLAS kernels differ by shape");
}

}  // namespace
}  // namespace trainer::cuda
