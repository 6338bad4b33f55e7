// The body of a blob upload: the source's bytes handed to the sender in order while a
// worker thread reads them ahead into a few slots and hashes each byte the sender has
// taken from a slot. So the sending thread only copies, the sha256 runs beside it (a
// 1.83 GB push that hashed in curl's read callback took 1.3x the curl floor on 2 busy
// cores; hashed here, 1.07x), and what is hashed is exactly what was sent: both come
// from the one read of the source into a slot, never from two reads a concurrent
// writer could tell apart.
//
// Ranges sent again after a reset (offsets below the taken frontier) are read from the
// source directly and not hashed again. Check() is the gate of the committing PUT: every
// byte of [0, size) taken and hashed, none beyond, and the digest the descriptor's.
//
// Not here: HTTP, sessions (upload.h). Memory: slot_bytes * slots (4 MiB by default).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "oci/manifest.h"
#include "oci/reader.h"
#include "oci/result.h"

namespace imgtool::remote {

class HashingBody : public oci::Reader {
 public:
  // `inner` reads at offsets (CanReadAt); `size` is the descriptor's.
  HashingBody(oci::Reader& inner, uint64_t size, size_t slot_bytes = 1 << 20, size_t slots = 4);
  ~HashingBody() override;  // stops the worker and waits for it
  HashingBody(const HashingBody&) = delete;
  HashingBody& operator=(const HashingBody&) = delete;

  Result<size_t> Read(void*, size_t) override;  // kInternal: the body is read at offsets
  bool CanReadAt() const override { return true; }
  // At the taken frontier: the next bytes, from the slots (hashed once taken). Below it:
  // a range sent again, read from the source. Beyond it: the gap is taken first.
  Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n) override;
  // Takes and hashes [frontier, upto) without handing it out (the registry has it).
  Status CatchUp(uint64_t upto);
  // Ok when exactly [0, size) was taken and hashed, nothing lies beyond it, and it hashes
  // to `d`; `what` starts the error.
  Status Check(const oci::Descriptor& d, const std::string& what);

 private:
  struct Slot {
    std::vector<char> bytes;
    size_t len = 0;     // filled by the worker
    size_t taken = 0;   // handed out (or caught up) by the consumer
    size_t hashed = 0;  // hashed by the worker; the slot is free again at len
  };
  // Up to `n` bytes of the frontier slot into `buf` (null: taken without copying); waits
  // for the worker. 0 at the end of the source.
  Result<size_t> Take(char* buf, size_t n);
  void Work();       // the worker: fills free slots, hashes what was taken
  bool WorkReady();  // under mu_: the worker has something to do
  Result<size_t> Fill(Slot& s, uint64_t at);

  Result<size_t> SourceAt(uint64_t offset, char* buf, size_t n);  // inner_ under io_mu_
  void Stop();

  oci::Reader& inner_;
  std::mutex io_mu_;  // one call into inner_ at a time (readers need not be thread-safe)
  const uint64_t size_;
  const size_t slot_bytes_;
  std::vector<Slot> ring_;
  oci::Sha256 hash_;  // the worker's, until it has stopped
  std::thread worker_;

  std::mutex mu_;
  std::condition_variable cv_;
  // Slots filled, taken whole and hashed whole so far; a slot's place is its count modulo
  // the ring's size, and hash_slot_ <= take_slot_ <= filled_ <= hash_slot_ + ring size.
  uint64_t filled_ = 0;
  uint64_t take_slot_ = 0;
  uint64_t hash_slot_ = 0;
  uint64_t read_pos_ = 0;      // next source offset the worker reads
  uint64_t taken_ = 0;         // bytes handed out or caught up: the frontier (consumer's)
  uint64_t hashed_total_ = 0;  // bytes hashed
  bool eof_ = false;           // the source ended (or size_ reached)
  bool stop_ = false;
  std::optional<Error> error_;  // the worker's read failed
};

}  // namespace imgtool::remote
