// ShmComm: the trainer's collectives through one shared-memory segment, for a job whose
// ranks all run on one host (NCCL's SHM transport and Open MPI's shared-memory BTL do the
// same inside a node). An allgather is then a memcpy into this rank's slot, a release
// store of the operation number, and a memcpy out of each peer's slot: no sockets, no
// kernel copies, no wake-ups when every rank has a core (spin), a futex otherwise.
// Over TCP (Gloo) the two allgathers per step cost 2 workers about a quarter of their
// step time on our 2-core machine (trainer/README.md). The same segment carries
// SharedWork, on which the CPU step (train/shm_step.h) shares its state and its tasks.
//
// Like every Comm it only moves bytes, so the weights digest is the same as over Gloo.
//
// Segment: a header (magic, size, a futex-waiter count, and per rank a cache line with
// its pid, the last operation it wrote and the last it finished reading), then per rank
// two slots of kSlotBytes, used by alternate operations. A rank reuses a slot for
// operation k only when every rank has finished reading operation k-2, which used it
// last; larger buffers go through in slot-sized chunks, each its own operation.
//
// Set-up over the job's rendezvous store: each rank publishes where it runs (boot id,
// IPC and PID namespaces); only when all match does the chief create the segment
// (shm_open, 0600, a random name), and it unlinks the name once every rank has mapped
// it, so nothing outlives the job even after SIGKILL. A peer that dies is seen within
// milliseconds (its pid is gone) rather than after the collective timeout.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "cluster/tcp_store.h"
#include "comm/comm.h"
#include "core/result.h"

namespace trainer {

// Work that the ranks of one host share beyond allgathers (train/shm_step.h): a region
// of the segment that every rank maps, zeroed at creation, and rounds of tasks that any
// rank may claim, so a faster core simply does more of them. Every rank enters the same
// rounds in the same order; Claim and Done may be called from several threads of a rank.
class SharedWork {
 public:
  virtual ~SharedWork() = default;
  virtual char* region() = 0;
  virtual size_t region_bytes() const = 0;
  // Enters the next round, of `count` tasks; returns once every rank has entered it, so
  // what a rank read from the region after the previous round is no longer in use.
  virtual Status BeginRound(int count) = 0;
  // The next unclaimed task of this round (0 .. count-1), or -1 when all are claimed.
  virtual int Claim() = 0;
  // One claimed task is done; its writes to the region are visible to whoever sees it done.
  virtual void Done() = 0;
  // Waits until every task of this round is done.
  virtual Status EndRound() = 0;
};

struct ShmCommOptions {
  bool spin = false;  // wait by spinning (each rank has a core) instead of sleeping on a futex
  std::chrono::milliseconds setup_timeout{std::chrono::seconds(60)};
  std::chrono::milliseconds collective_timeout{std::chrono::seconds(120)};
  std::string host_key;     // where this rank says it runs; empty: ShmHostKey() (tests set it)
  size_t shared_bytes = 0;  // SharedWork's region; every rank must ask for the same size
};

// Where this process runs, as far as sharing memory goes: equal strings can share a
// segment and see each other's pids.
std::string ShmHostKey();

// The SharedWork of a Comm made by MakeShmComm; null for any other Comm.
SharedWork* SharedWorkOf(Comm& comm);

// Collective over the store (every rank calls it): a ShmComm when every rank published
// the same ShmHostKey and the chief could create the segment; otherwise null and, in
// *why_not, the reason (the caller then uses Gloo). Errors are store or mapping failures.
Result<std::unique_ptr<Comm>> MakeShmComm(TcpStoreClient& store, int rank, int size, const ShmCommOptions& options,
                                          std::string* why_not);

}  // namespace trainer
