#include "cluster/store_request.h"

#include "cluster/store_auth.h"

namespace trainer {
namespace {

namespace sw = store_wire;
using sw::Read;

// Charged per key of a WAIT being read: its std::string in the vector, with room for the
// vector's doubling.
constexpr uint64_t kWaitKeyOverhead = 2 * sizeof(std::string);

// Reads one request under the limits. false: the peer closed (why stays empty), or broke
// a limit or the clock (why says which, for the log).
class RequestReader {
 public:
  RequestReader(int fd, const StoreLimits& limits, uint64_t held_limit, StoreRequest& r, std::string* why)
      : fd_(fd), limits_(limits), held_limit_(held_limit), r_(r), why_(why) {}

  // `first`: the deadline for the op byte (a new connection's first request); none
  // between requests.
  bool Next(sw::Deadline first, StoreGate gate) {
    Read got = sw::ReadExact(fd_, &r_.op, 1, first);
    if (got == Read::kLate) return Fail("sent no request within " + sw::Seconds(limits_.io_timeout) + " of connecting");
    if (got != Read::kOk) return false;
    if (gate == StoreGate::kHandshakeOnly && r_.op != sw::kHello && r_.op != sw::kClaim) {
      return Fail("sent " + sw::OpName(r_.op) + " before proving the job token (the store requires it)");
    }
    deadline_ = sw::Clock::now() + limits_.io_timeout;
    switch (r_.op) {
      case sw::kSet:
        return Key() && Field(kStoreMaxValueBytes, "a value", &r_.value);
      case sw::kGet:
      case sw::kCheck:
        return Key();
      case sw::kWait:
        return Wait();
      case sw::kHello:
        return true;
      case sw::kClaim:
        return Claim();
      default:
        return Fail("sent unknown op " + std::to_string(r_.op));
    }
  }

 private:
  bool Fail(const std::string& why) {
    *why_ = why;
    return false;
  }
  bool Ok(Read got) {
    switch (got) {
      case Read::kOk:
        return true;
      case Read::kClosed:
        return false;
      case Read::kLate:
        return Fail("a request still incomplete " + sw::Seconds(limits_.io_timeout) + " after its first byte");
      case Read::kRefused:
        break;
    }
    return Fail("its request would take the store past " + std::to_string(held_limit_) + " bytes held");
  }
  bool Length(uint32_t cap, const char* what, uint32_t* n) {
    if (!Ok(sw::ReadU32(fd_, n, deadline_))) return false;
    if (*n > cap) {
      return Fail("declared " + std::string(what) + " of " + std::to_string(*n) + " bytes (the limit is " +
                  std::to_string(cap) + ")");
    }
    return true;
  }
  bool Bytes(uint32_t n, std::string* out) {
    return Ok(sw::ReadGrowing(fd_, n, out, deadline_, [this](size_t more) { return r_.Charge(more); }));
  }
  bool Field(uint32_t cap, const char* what, std::string* out) {
    uint32_t n;
    return Length(cap, what, &n) && Bytes(n, out);
  }
  bool Key() {
    r_.keys.emplace_back();
    return Field(kStoreMaxKeyBytes, "a key", &r_.keys.back());
  }
  bool Wait() {
    uint32_t count;
    if (!Ok(sw::ReadU32(fd_, &count, deadline_))) return false;
    if (count > kStoreMaxWaitKeys) {
      return Fail("declared a WAIT for " + std::to_string(count) + " keys (the limit is " +
                  std::to_string(kStoreMaxWaitKeys) + ")");
    }
    uint64_t total = 0;
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t n;
      if (!Length(kStoreMaxKeyBytes, "a key", &n)) return false;
      total += n;
      if (total > kStoreMaxWaitKeyBytes) {
        return Fail("declared a WAIT naming more than " + std::to_string(kStoreMaxWaitKeyBytes) + " bytes of keys");
      }
      if (!r_.Charge(kWaitKeyOverhead)) return Ok(Read::kRefused);
      r_.keys.emplace_back();
      if (!Bytes(n, &r_.keys.back())) return false;
    }
    return Ok(sw::ReadU32(fd_, &r_.wait_ms, deadline_));
  }

  // rank, who, the client's nonce, the proof (empty without a token).
  bool Claim() {
    if (!Ok(sw::ReadU32(fd_, &r_.rank, deadline_))) return false;
    if (!Field(kStoreMaxWhoBytes, "a claimant's name", &r_.who)) return false;
    r_.nonce.resize(store_auth::kNonceBytes);
    if (!Ok(sw::ReadExact(fd_, r_.nonce.data(), r_.nonce.size(), deadline_))) return false;
    return Field(kStoreMaxProofBytes, "a proof", &r_.proof);
  }

  int fd_;
  const StoreLimits& limits_;
  uint64_t held_limit_;
  StoreRequest& r_;
  std::string* why_;
  sw::Deadline deadline_;
};

}  // namespace

bool ReadStoreRequest(int fd, const StoreLimits& limits, store_wire::Deadline first, StoreGate gate, StoreRequest* r,
                      std::string* why) {
  return RequestReader(fd, limits, r->budget.limit(), *r, why).Next(first, gate);
}

}  // namespace trainer
