#include "train/train.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "core/sha256.h"
#include "core/thread_pool.h"
#include "cpu/ops.h"
#include "log/event_writer.h"
#include "model/mlp.h"
#include "train/step.h"
#include "train/step_runner.h"

namespace trainer {
namespace {

using Clock = std::chrono::steady_clock;

// The digest is sha256 over the parameter buffer as little-endian IEEE-754 binary32.
static_assert(std::endian::native == std::endian::little, "hash a byte-swapped copy on big-endian hosts");

struct Eval {
  double accuracy = 0, loss = 0;
};

// Test-set accuracy and mean loss, in chunks spread over the pool.
Eval Evaluate(const float* params, const Split& test, ThreadPool& pool) {
  constexpr int kChunk = 100;
  const int chunks = (test.count + kChunk - 1) / kChunk;
  std::vector<int> correct(static_cast<size_t>(chunks));
  std::vector<double> loss(static_cast<size_t>(chunks));
  pool.ParallelFor(chunks, [&](int c) {
    const int first = c * kChunk, n = std::min(kChunk, test.count - first);
    MlpWorkspace<float> ws(n);
    std::vector<float> logits(static_cast<size_t>(n) * MlpLayout::kOut);  // (n, 10)
    Predict(params, &test.images[static_cast<size_t>(first) * MlpLayout::kIn], n, logits.data(), ws);
    for (int i = 0; i < n; ++i) {
      const float* z = &logits[static_cast<size_t>(i) * MlpLayout::kOut];
      int best = 0;
      for (int k = 1; k < MlpLayout::kOut; ++k) best = z[k] > z[best] ? k : best;
      correct[static_cast<size_t>(c)] += best == test.labels[static_cast<size_t>(first) + static_cast<size_t>(i)];
    }
    loss[static_cast<size_t>(c)] =
        cpu::softmax_xent(ws.dlogits.data(), logits.data(), &test.labels[first], n, MlpLayout::kOut, 0.0);
  });
  Eval e;
  for (int c = 0; c < chunks; ++c) {
    e.accuracy += correct[static_cast<size_t>(c)];
    e.loss += loss[static_cast<size_t>(c)];
  }
  e.accuracy /= test.count;
  e.loss /= test.count;
  return e;
}

// The chief restores (or not) and every rank receives the same state, and the chief's
// checkpoint interval (-1: it writes none): gathering the Adam moments for a checkpoint
// is a collective, so every rank must know when the chief writes one.
Status RestoreAndShare(const TrainConfig& cfg, const RunShape& shape, Comm& comm, TrainState* state,
                       TrainObserver& observer, int64_t* resumed_from, int64_t* checkpoint_every) {
  // found (1), failed (-1) or fresh (0); step; epoch; step_in_epoch; checkpoint interval
  int64_t header[5] = {0, 0, 0, 0, cfg.checkpoint_dir.empty() ? -1 : cfg.checkpoint_every};
  Error failure;
  if (comm.rank() == 0 && !cfg.checkpoint_dir.empty()) {
    auto r = RestoreLatest(cfg.checkpoint_dir, shape, cfg.seed);
    if (!r.ok()) {
      header[0] = -1;
      failure = r.error();
    } else {
      for (const auto& why : r->skipped) observer.OnNote("checkpoint unusable, trying an older one: " + why);
      if (!r->path.empty()) {
        *state = std::move(r->state);
        header[0] = 1;
        header[1] = state->step;
        header[2] = state->epoch;
        header[3] = state->step_in_epoch;
        observer.OnNote("resuming from " + r->path + " at step " + std::to_string(state->step));
      }
    }
  }
  TRAINER_TRY(comm.Broadcast(header, sizeof(header), 0));
  *checkpoint_every = header[4];
  if (header[0] == -1) {
    if (comm.rank() == 0) return failure;
    return MakeError(ErrorKind::kInvalidInput, "the chief could not restore its checkpoint (see its log)");
  }
  if (header[0] == 1) {
    state->step = header[1];
    state->epoch = static_cast<int32_t>(header[2]);
    state->step_in_epoch = static_cast<int32_t>(header[3]);
    for (auto* v : {&state->params, &state->adam_m, &state->adam_v}) {
      TRAINER_TRY(comm.Broadcast(v->data(), v->size() * sizeof(float), 0));
    }
    *resumed_from = state->step;
  }
  return Status::Ok();
}

}  // namespace

Result<TrainSummary> Train(const TrainConfig& cfg, const Dataset& data, Comm& comm, TrainObserver& observer,
                           const StepFactory& make_step) {
  const StepShape shape{cfg.global_batch, cfg.shards};
  TRAINER_TRY(ValidateStepShape(shape, comm.size()));
  const int steps_per_epoch = data.train.count / cfg.global_batch;  // the remainder is dropped
  if (steps_per_epoch == 0) {
    return MakeError(ErrorKind::kInvalidInput, "fewer training examples (" + std::to_string(data.train.count) +
                                                   ") than --global-batch " + std::to_string(cfg.global_batch));
  }
  int64_t total_steps = static_cast<int64_t>(cfg.epochs) * steps_per_epoch;
  if (cfg.max_steps > 0 && cfg.max_steps < total_steps) total_steps = cfg.max_steps;
  const bool chief = comm.rank() == 0;
  const RunShape run_shape{cfg.global_batch, cfg.shards, data.train.count, cfg.lr, MlpLayout::kCount};

  TrainState state;
  state.seed = cfg.seed;
  state.params.resize(MlpLayout::kCount);  // the one parameter buffer (101,770)
  state.adam_m.assign(MlpLayout::kCount, 0.0f);
  state.adam_v.assign(MlpLayout::kCount, 0.0f);
  InitParams(state.params.data(), cfg.seed);
  TrainSummary sum;
  int64_t checkpoint_every = -1;
  TRAINER_TRY(RestoreAndShare(cfg, run_shape, comm, &state, observer, &sum.resumed_from_step, &checkpoint_every));

  std::unique_ptr<EventWriter> events;
  if (chief && !cfg.logdir.empty()) {
    auto w = EventWriter::Open(cfg.logdir);
    if (!w.ok()) return w.error();
    events = std::move(*w);
  }
  ThreadPool pool(cfg.threads);
  cpu::AdamConfig adam;
  adam.lr = cfg.lr;
  std::unique_ptr<StepRunner> train_step;
  if (make_step) {
    auto made = make_step(data.train, shape, cfg.seed, adam, comm, pool);
    if (!made.ok()) return made.error();
    train_step = std::move(*made);
  } else {
    train_step = std::make_unique<CpuStepRunner>(data.train, shape, cfg.seed, adam, comm, pool);
  }

  std::vector<int32_t> perm;
  int perm_epoch = -1;
  double interval_seconds = 0, loss = 0;
  int interval_steps = 0;
  bool evaluated_last = false;
  auto checkpoint = [&]() -> Status {
    if (checkpoint_every < 0) return Status::Ok();
    // Each rank's W1 moments are current only on its own rows (train/step.h).
    TRAINER_TRY(train_step->Sync(state.params.data(), state.adam_m.data(), state.adam_v.data(), true));
    if (!chief) return Status::Ok();
    return WriteCheckpoint(cfg.checkpoint_dir, state, run_shape, cfg.checkpoint_keep);
  };
  auto evaluate = [&](int epoch) -> Status {
    TRAINER_TRY(train_step->Sync(state.params.data(), state.adam_m.data(), state.adam_v.data(), false));
    Eval e = Evaluate(state.params.data(), data.test, pool);
    sum.test_accuracy = e.accuracy;
    sum.test_loss = e.loss;
    observer.OnEpoch({epoch, e.accuracy, e.loss});
    if (events) {
      TRAINER_TRY(events->AddScalar("test/accuracy", epoch + 1, static_cast<float>(e.accuracy)));
      TRAINER_TRY(events->AddScalar("test/loss", epoch + 1, static_cast<float>(e.loss)));
    }
    return Status::Ok();
  };

  while (state.step < total_steps) {
    if (perm_epoch != state.epoch) {
      perm = EpochPermutation(cfg.seed, state.epoch, data.train.count);
      perm_epoch = state.epoch;
    }
    // The loss is read where it is logged and before anything that reads the weights (a
    // device step need not wait for the others, and the timing then includes the wait).
    const bool last = state.step + 1 == total_steps;
    const bool log_now = chief && cfg.log_every > 0 && ((state.step + 1) % cfg.log_every == 0 || last);
    const bool wait = log_now || last || state.step_in_epoch + 1 == steps_per_epoch ||
                      (checkpoint_every > 0 && (state.step + 1) % checkpoint_every == 0);
    auto t0 = Clock::now();
    TRAINER_TRY(train_step->Run(state.params.data(), state.adam_m.data(), state.adam_v.data(), perm, state.epoch,
                                state.step_in_epoch, state.step + 1, wait ? &loss : nullptr));
    double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    sum.train_seconds += dt;
    interval_seconds += dt;
    ++interval_steps;
    ++state.step;
    bool epoch_ended = ++state.step_in_epoch == steps_per_epoch;
    if (epoch_ended) {
      ++state.epoch;
      state.step_in_epoch = 0;
    }
    evaluated_last = false;

    if (log_now) {
      StepReport r{state.step, state.epoch - (epoch_ended ? 1 : 0), loss,
                   interval_steps * cfg.global_batch / interval_seconds};
      observer.OnStep(r);
      if (events) {
        TRAINER_TRY(events->AddScalar("train/loss", state.step, static_cast<float>(loss)));
        TRAINER_TRY(events->AddScalar("train/samples_per_sec", state.step, static_cast<float>(r.samples_per_sec)));
      }
      interval_seconds = 0;
      interval_steps = 0;
    }
    if (epoch_ended) {
      if (chief) TRAINER_TRY(evaluate(state.epoch - 1));
      evaluated_last = true;
      TRAINER_TRY(checkpoint());
    } else if (checkpoint_every > 0 && state.step % checkpoint_every == 0) {
      TRAINER_TRY(checkpoint());
    }
    if (cfg.throttle_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(cfg.throttle_ms));
  }
  TRAINER_TRY(train_step->Sync(state.params.data(), state.adam_m.data(), state.adam_v.data(), false));
  if (chief && !evaluated_last) {
    Eval e = Evaluate(state.params.data(), data.test, pool);  // stopped mid-epoch (--max-steps)
    sum.test_accuracy = e.accuracy;
    sum.test_loss = e.loss;
  }

  sum.phases = train_step->Phases();
  sum.digest = "sha256:" + HexOf(Sha256(state.params.data(), state.params.size() * sizeof(float)));
  sum.steps = state.step;
  sum.epochs_completed = state.epoch;
  sum.last_loss = loss;
  sum.samples_per_sec = sum.train_seconds > 0 ? (sum.steps - std::max<int64_t>(sum.resumed_from_step, 0)) *
                                                    cfg.global_batch / sum.train_seconds
                                              : 0;
  return sum;
}

}  // namespace trainer
