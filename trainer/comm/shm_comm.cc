#include "comm/shm_comm.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

namespace trainer {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kMagic = 0x31636d6d6f636d73;  // "smcomm1", little end first
constexpr size_t kSlotBytes = 256 << 10;         // one W1 slice of 2 workers (392 x 128 floats) fits
constexpr int kSpinsBeforeSleep = 2000;          // ~a few µs of pause before a futex sleep
constexpr int kSpinsPerCheck = 1 << 14;          // spinning: look at the clock and the peers this often

// One spin of a wait loop: tells the core to yield its pipeline to the sibling thread and
// not to mis-speculate the loop exit (x86 PAUSE, arm64 YIELD).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// A counter alone on its cache line: ranks hammer these from different cores.
struct alignas(64) Counter {
  std::atomic<uint32_t> value;
};

struct alignas(64) Header {
  uint64_t magic;
  uint64_t size;
  uint64_t slot_bytes;
  uint64_t region_bytes;
  std::atomic<uint32_t> waiters;   // ranks asleep (or about to be) on a futex
  std::atomic<uint32_t> attached;  // non-chief ranks that mapped the segment
  std::atomic<uint32_t> ready;     // the chief unlinked the name: go
  Counter arrived;                 // SharedWork: rounds entered, summed over the ranks
  Counter claimed;                 // SharedWork: tasks claimed, over all rounds
  Counter done;                    // SharedWork: tasks done, over all rounds
};

// One cache line per rank, so a rank's stores do not evict its peers' lines.
struct alignas(64) RankLine {
  std::atomic<uint32_t> written;  // last operation whose bytes are in slot (op % 2)
  std::atomic<uint32_t> read;     // last operation this rank finished reading
  std::atomic<int32_t> pid;
};

// Wrap-safe "a is at or past b" for operation numbers.
bool AtOrPast(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) >= 0; }

size_t LinesOffset() { return (sizeof(Header) + 63) / 64 * 64; }
size_t SlotsOffset(int size) {
  return (LinesOffset() + sizeof(RankLine) * static_cast<size_t>(size) + 4095) / 4096 * 4096;
}
RankLine* LinesIn(void* base) { return reinterpret_cast<RankLine*>(static_cast<char*>(base) + LinesOffset()); }
// A buffer goes through the slots in this many operations (one even when empty, so every
// rank counts the same operations).
// memcpy with a length of 0 is still undefined for a null pointer, and an empty vector's
// data() may be one; a zero-byte operation still takes its one chunk, to keep the ranks'
// operation counters in step.
void CopyBytes(void* dst, const void* src, size_t n) {
  if (n > 0) std::memmove(dst, src, n);
}

size_t Chunks(size_t bytes) { return std::max<size_t>(1, (bytes + kSlotBytes - 1) / kSlotBytes); }
size_t RegionOffset(int size) { return SlotsOffset(size) + 2 * kSlotBytes * static_cast<size_t>(size); }
size_t SegmentBytes(int size, size_t region_bytes) { return RegionOffset(size) + (region_bytes + 4095) / 4096 * 4096; }

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  // Shared (not FUTEX_PRIVATE_FLAG): the waiter and the waker are different processes.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

std::string ReadFirstLine(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

std::string NamespaceOf(const char* ns) {
  char buf[128];
  ssize_t n = ::readlink((std::string("/proc/self/ns/") + ns).c_str(), buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("?");
}

std::string HostKey(int rank) { return "shm/host/" + std::to_string(rank); }

// A peer is gone when its pid is, or when it is a zombie its parent has not reaped yet.
bool Gone(int32_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::string stat = ReadFirstLine(("/proc/" + std::to_string(pid) + "/stat").c_str());
  size_t paren = stat.rfind(')');  // "pid (comm) S ...": comm may hold spaces and parens
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
}

class ShmComm : public Comm, public SharedWork {
 public:
  ShmComm(void* base, int rank, int size, const ShmCommOptions& o)
      : base_(static_cast<char*>(base)), rank_(rank), size_(size), options_(o) {}
  ~ShmComm() override { ::munmap(base_, SegmentBytes(size_, options_.shared_bytes)); }

  char* region() override { return base_ + RegionOffset(size_); }
  size_t region_bytes() const override { return options_.shared_bytes; }

  Status BeginRound(int count) override {
    ++rounds_;
    round_base_ = round_end_;
    round_end_ += static_cast<uint32_t>(count);
    Add(Head().arrived.value);
    return WaitFor(Head().arrived.value, rounds_ * static_cast<uint32_t>(size_), -1, "entering a round");
  }

  int Claim() override {
    auto& claimed = Head().claimed.value;
    uint32_t c = claimed.load(std::memory_order_relaxed);
    while (static_cast<int32_t>(round_end_ - c) > 0) {
      if (claimed.compare_exchange_weak(c, c + 1, std::memory_order_relaxed)) return static_cast<int>(c - round_base_);
    }
    return -1;
  }

  void Done() override { Add(Head().done.value); }

  Status EndRound() override { return WaitFor(Head().done.value, round_end_, -1, "a round of shared tasks"); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status AllGather(const float* in, float* out, size_t count) override {
    const size_t bytes = count * sizeof(float);
    const auto* src = reinterpret_cast<const char*>(in);
    auto* dst = reinterpret_cast<char*>(out);
    for (size_t c = 0, n = Chunks(bytes); c < n; ++c) {
      const size_t off = c * kSlotBytes, len = std::min(kSlotBytes, bytes - off);
      const uint32_t k = ++op_;
      TRAINER_TRY(WaitSlotFree(k, "allgather"));
      CopyBytes(Slot(rank_, k), src + off, len);
      Post(Line(rank_).written, k);
      for (int p = 0; p < size_; ++p) {
        if (p == rank_) continue;
        TRAINER_TRY(WaitFor(Line(p).written, k, p, "allgather"));
        CopyBytes(dst + static_cast<size_t>(p) * bytes + off, Slot(p, k), len);
      }
      Post(Line(rank_).read, k);
    }
    char* own = dst + static_cast<size_t>(rank_) * bytes;
    if (own != src) CopyBytes(own, src, bytes);
    return Status::Ok();
  }

  Status Broadcast(void* data, size_t bytes, int root) override {
    auto* buf = static_cast<char*>(data);
    for (size_t c = 0, n = Chunks(bytes); c < n; ++c) {
      const size_t off = c * kSlotBytes, len = std::min(kSlotBytes, bytes - off);
      const uint32_t k = ++op_;
      if (rank_ == root) {
        TRAINER_TRY(WaitSlotFree(k, "broadcast"));
        CopyBytes(Slot(rank_, k), buf + off, len);
        Post(Line(rank_).written, k);
      } else {
        TRAINER_TRY(WaitFor(Line(root).written, k, root, "broadcast"));
        CopyBytes(buf + off, Slot(root, k), len);
      }
      Post(Line(rank_).read, k);
    }
    return Status::Ok();
  }

 private:
  Header& Head() const { return *reinterpret_cast<Header*>(base_); }
  RankLine& Line(int r) const { return LinesIn(base_)[r]; }
  char* Slot(int r, uint32_t k) const {
    return base_ + SlotsOffset(size_) + (static_cast<size_t>(r) * 2 + (k & 1)) * kSlotBytes;
  }

  // This rank's slot for operation k was last used by k-2: every rank must be done with it.
  Status WaitSlotFree(uint32_t k, const char* op) {
    for (int p = 0; p < size_; ++p) {
      if (p != rank_) TRAINER_TRY(WaitFor(Line(p).read, k - 2, p, op));
    }
    return Status::Ok();
  }

  void Post(std::atomic<uint32_t>& word, uint32_t k) {
    word.store(k, std::memory_order_seq_cst);
    Wake(word);
  }
  void Add(std::atomic<uint32_t>& word) {
    word.fetch_add(1, std::memory_order_seq_cst);
    Wake(word);
  }
  void Wake(std::atomic<uint32_t>& word) {
    if (Head().waiters.load(std::memory_order_seq_cst) > 0) Futex(&word, FUTEX_WAKE, INT_MAX, nullptr);
  }

  Status WaitFor(std::atomic<uint32_t>& word, uint32_t k, int peer, const char* op) {
    if (AtOrPast(word.load(std::memory_order_acquire), k)) return Status::Ok();
    const auto deadline = Clock::now() + options_.collective_timeout;
    auto next_peer_check = Clock::now();
    for (;;) {
      const int spins = options_.spin ? kSpinsPerCheck : kSpinsBeforeSleep;
      for (int i = 0; i < spins; ++i) {
        if (AtOrPast(word.load(std::memory_order_acquire), k)) return Status::Ok();
        CpuRelax();
      }
      if (!options_.spin) {
        Head().waiters.fetch_add(1, std::memory_order_seq_cst);
        uint32_t seen = word.load(std::memory_order_seq_cst);
        if (!AtOrPast(seen, k)) {
          const timespec ms{0, 1000000};  // wake now and then to look at the clock and the peers
          Futex(&word, FUTEX_WAIT, seen, &ms);
        }
        Head().waiters.fetch_sub(1, std::memory_order_seq_cst);
        if (AtOrPast(word.load(std::memory_order_acquire), k)) return Status::Ok();
      }
      const auto now = Clock::now();
      if (now >= next_peer_check) {
        next_peer_check = now + std::chrono::milliseconds(10);
        for (int p = 0; p < size_; ++p) {
          const int32_t pid = Line(p).pid.load(std::memory_order_relaxed);
          if (p != rank_ && Gone(pid)) {
            return MakeError(ErrorKind::kTransport, std::string(op) + ": rank " + std::to_string(p) + " (pid " +
                                                        std::to_string(pid) +
                                                        ") exited; a peer failed or left the job (restart all "
                                                        "tasks to resume)");
          }
        }
      }
      if (now >= deadline) {
        return MakeError(ErrorKind::kTransport,
                         std::string(op) + ": " + (peer >= 0 ? "rank " + std::to_string(peer) : "a peer") +
                             " silent for " + std::to_string(options_.collective_timeout.count() / 1000) +
                             " s (--collective-timeout); a peer failed or left the job (restart all tasks to resume)");
      }
    }
  }

  char* base_;
  int rank_, size_;
  ShmCommOptions options_;
  uint32_t op_ = 0;
  uint32_t rounds_ = 0, round_base_ = 0, round_end_ = 0;  // SharedWork: this rank's view
};

Error Errno(const std::string& what) {
  return MakeError(ErrorKind::kTransport, "shared memory: " + what + ": " + std::strerror(errno));
}

// The chief's half of the set-up: the segment, or why there is none.
Result<std::string> CreateSegment(int size, size_t region_bytes, void** base) {
  std::random_device rd;
  const std::string name = "/imgtool-trainer-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("shm_open " + name);
  // Reserve the pages now: a full /dev/shm is an error here, not a SIGBUS mid-step.
  const size_t bytes = SegmentBytes(size, region_bytes);
  int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (rc != 0) {
    errno = rc;
    Error e = Errno("reserving " + std::to_string(bytes) + " bytes in /dev/shm");
    ::close(fd);
    ::shm_unlink(name.c_str());
    return e;
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    Error e = Errno("mmap");
    ::shm_unlink(name.c_str());
    return e;
  }
  auto* h = new (p) Header{};
  h->magic = kMagic;
  h->size = static_cast<uint64_t>(size);
  h->slot_bytes = kSlotBytes;
  h->region_bytes = region_bytes;
  RankLine* lines = LinesIn(p);
  for (int r = 0; r < size; ++r) new (&lines[r]) RankLine{};
  *base = p;
  return name;
}

Result<void*> AttachSegment(const std::string& name, int size, size_t region_bytes) {
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) return Errno("shm_open " + name);
  const size_t bytes = SegmentBytes(size, region_bytes);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
    ::close(fd);
    return MakeError(ErrorKind::kTransport, "shared memory: " + name + " is not the job's segment (size)");
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return Errno("mmap " + name);
  const auto* h = static_cast<const Header*>(p);
  if (h->magic != kMagic || h->size != static_cast<uint64_t>(size) || h->slot_bytes != kSlotBytes ||
      h->region_bytes != region_bytes) {
    ::munmap(p, bytes);
    return MakeError(ErrorKind::kTransport, "shared memory: " + name + " is not the job's segment (header)");
  }
  return p;
}

// Polls `done` until it holds or the set-up time is over.
template <typename F>
bool PollUntil(F done, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

}  // namespace

SharedWork* SharedWorkOf(Comm& comm) { return dynamic_cast<SharedWork*>(&comm); }

std::string ShmHostKey() {
  return "boot " + ReadFirstLine("/proc/sys/kernel/random/boot_id") + " ipc " + NamespaceOf("ipc") + " pid " +
         NamespaceOf("pid") + " mnt " + NamespaceOf("mnt");
}

Result<std::unique_ptr<Comm>> MakeShmComm(TcpStoreClient& store, int rank, int size, const ShmCommOptions& options,
                                          std::string* why_not) {
  const std::string mine = options.host_key.empty() ? ShmHostKey() : options.host_key;
  TRAINER_TRY(store.Set(HostKey(rank), mine));
  void* base = nullptr;
  if (rank == 0) {
    std::vector<std::string> keys;
    for (int r = 0; r < size; ++r) keys.push_back(HostKey(r));
    TRAINER_TRY(store.Wait(keys, options.setup_timeout));
    std::string verdict;
    for (int r = 1; r < size && verdict.empty(); ++r) {
      auto theirs = store.Get(HostKey(r));
      if (!theirs.ok()) return theirs.error();
      if (!*theirs || **theirs != mine) verdict = "-rank " + std::to_string(r) + " runs on another host or namespace";
    }
    if (verdict.empty()) {
      auto name = CreateSegment(size, options.shared_bytes, &base);
      verdict = name.ok() ? *name : "-" + name.error().message;
    }
    TRAINER_TRY(store.Set("shm/segment", verdict));
    if (verdict[0] == '-') {
      *why_not = verdict.substr(1);
      return std::unique_ptr<Comm>();
    }
    auto* h = static_cast<Header*>(base);
    LinesIn(base)[0].pid = ::getpid();
    bool all = PollUntil([&] { return h->attached.load() == static_cast<uint32_t>(size - 1); }, options.setup_timeout);
    ::shm_unlink(verdict.c_str());  // mapped by all (or never will be): the name is not needed again
    if (!all) {
      ::munmap(base, SegmentBytes(size, options.shared_bytes));
      return MakeError(ErrorKind::kTransport, "shared memory: not every rank mapped the segment in time");
    }
    h->ready.store(1, std::memory_order_release);
  } else {
    TRAINER_TRY(store.Wait({"shm/segment"}, options.setup_timeout));
    auto verdict = store.Get("shm/segment");
    if (!verdict.ok()) return verdict.error();
    if (!*verdict || (*verdict)->empty()) return MakeError(ErrorKind::kTransport, "shared memory: no verdict");
    if ((**verdict)[0] == '-') {
      *why_not = (**verdict).substr(1);
      return std::unique_ptr<Comm>();
    }
    auto p = AttachSegment(**verdict, size, options.shared_bytes);
    if (!p.ok()) return p.error();
    base = *p;
    auto* h = static_cast<Header*>(base);
    LinesIn(base)[rank].pid = ::getpid();
    h->attached.fetch_add(1);
    if (!PollUntil([&] { return h->ready.load(std::memory_order_acquire) == 1; }, options.setup_timeout)) {
      ::munmap(base, SegmentBytes(size, options.shared_bytes));
      return MakeError(ErrorKind::kTransport, "shared memory: the chief did not finish the set-up in time");
    }
  }
  return std::unique_ptr<Comm>(new ShmComm(base, rank, size, options));
}

}  // namespace trainer
