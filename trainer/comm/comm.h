// Comm: the collectives the trainer needs, behind one small interface with one engine
// per transport: Local (one process), Gloo (CPU, TCP); NCCL, on device memory, in cuda/nccl_comm.h.
// The trainer only ever allgathers, never allreduces: it sums the gathered pieces itself
// in a fixed order, so results cannot depend on a collective's reduction algorithm.
#pragma once

#include <cstddef>
#include <memory>

#include "core/result.h"

namespace gloo {
class Context;
}

namespace trainer {

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // out (size, count) = every rank's in (count), in rank order. In place when in is
  // out + rank * count (the rank's own slot), which saves a copy.
  virtual Status AllGather(const float* in, float* out, size_t count) = 0;
  // Root's bytes to every rank.
  virtual Status Broadcast(void* data, size_t bytes, int root) = 0;
};

std::unique_ptr<Comm> MakeLocalComm();
// busy_poll: a waiting rank spins on its socket instead of sleeping in the kernel. It
// saves the wake-up on every exchange (2 workers: 1.25-1.40x -> 1.35-1.66x one worker's
// throughput on our 2-core machine) but burns the core, so it is only for ranks that each
// have a core of their own (see --busy-poll).
std::unique_ptr<Comm> MakeGlooComm(std::shared_ptr<gloo::Context> context, bool busy_poll = false);

}  // namespace trainer
