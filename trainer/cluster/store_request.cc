#include "cluster/store_request.h"

#include "cluster/store_auth.h"

namespace trainer {
namespace {

namespace sw = store_wire;
using Step = StoreRequestParser::Step;

// Charged per key of a WAIT being read: its std::string in the request and its place in
// the parser (offset and length), with room for the vectors' doubling.
constexpr uint64_t kWaitKeyOverhead = 2 * sizeof(std::string) + 2 * sizeof(std::pair<size_t, uint32_t>);

// What the next field of a request is.
struct Field {
  enum Kind { kEnd, kU32, kBytes, kFixed } kind = kEnd;
  uint32_t cap = 0;       // kBytes: the most it may declare; kFixed: its size
  const char* what = "";  // kBytes: for the message ("a key")
  bool wait_key = false;  // kBytes: one of a WAIT's keys
};

Field FieldAt(uint8_t op, uint32_t i, uint32_t wait_count) {
  const Field key{Field::kBytes, kStoreMaxKeyBytes, "a key", false};
  switch (op) {
    case sw::kSet:
      if (i == 0) return key;
      if (i == 1) return {Field::kBytes, kStoreMaxValueBytes, "a value", false};
      return {};
    case sw::kGet:
    case sw::kCheck:
      return i == 0 ? key : Field{};
    case sw::kWait:
      if (i == 0 || i == wait_count + 1) return {Field::kU32};
      if (i <= wait_count) return {Field::kBytes, kStoreMaxKeyBytes, "a key", true};
      return {};
    case sw::kClaim:
      if (i == 0) return {Field::kU32};
      if (i == 1) return {Field::kBytes, kStoreMaxWhoBytes, "a claimant's name", false};
      if (i == 2) return {Field::kFixed, store_auth::kNonceBytes};
      if (i == 3) return {Field::kBytes, kStoreMaxProofBytes, "a proof", false};
      return {};
    default:  // HELLO
      return {};
  }
}

uint32_t U32At(const char* data, size_t at) { return sw::GetU32(reinterpret_cast<const uint8_t*>(data + at)); }

Step Bad(std::string* why, std::string text) {
  *why = std::move(text);
  return Step::kBad;
}

}  // namespace

Step StoreRequestParser::Parse(const char* data, size_t size, StoreGate gate, StoreRequest* req, std::string* why,
                               bool fill) {
  if (size == 0) return Step::kMore;
  const uint8_t op = static_cast<uint8_t>(data[0]);
  if (pos_ == 0) {
    if (gate == StoreGate::kHandshakeOnly && op != sw::kHello && op != sw::kClaim) {
      return Bad(why, "sent " + sw::OpName(op) + " before proving the job token (the store requires it)");
    }
    if (op < sw::kSet || op > sw::kClaim) return Bad(why, "sent unknown op " + std::to_string(op));
    pos_ = 1;
  }
  for (Field f = FieldAt(op, done_, wait_count_); f.kind != Field::kEnd; f = FieldAt(op, ++done_, wait_count_)) {
    if (f.kind == Field::kFixed) {
      if (size - pos_ < f.cap) return Step::kMore;
      spans_.emplace_back(pos_, f.cap);
      pos_ += f.cap;
      continue;
    }
    if (size - pos_ < 4) return Step::kMore;
    const uint32_t n = U32At(data, pos_);
    if (f.kind == Field::kU32) {
      spans_.emplace_back(pos_, 4);
      pos_ += 4;
      if (op == sw::kWait && done_ == 0) {
        if (n > kStoreMaxWaitKeys) {
          return Bad(why, "declared a WAIT for " + std::to_string(n) + " keys (the limit is " +
                              std::to_string(kStoreMaxWaitKeys) + ")");
        }
        wait_count_ = n;
      }
      continue;
    }
    if (n > f.cap) {
      return Bad(why, "declared " + std::string(f.what) + " of " + std::to_string(n) + " bytes (the limit is " +
                          std::to_string(f.cap) + ")");
    }
    if (f.wait_key && wait_key_bytes_ + n > kStoreMaxWaitKeyBytes) {
      return Bad(why, "declared a WAIT naming more than " + std::to_string(kStoreMaxWaitKeyBytes) + " bytes of keys");
    }
    if (size - pos_ - 4 < n) return Step::kMore;
    if (f.wait_key) {
      if (!req->Charge(kWaitKeyOverhead)) {
        return Bad(why, "its request would take the store past " + std::to_string(req->budget.limit()) + " bytes held");
      }
      wait_key_bytes_ += n;
    }
    spans_.emplace_back(pos_ + 4, n);
    pos_ += 4 + n;
  }
  if (!fill) return Step::kDone;
  // Whole: the fields out of the buffer, in their order.
  auto text = [&](size_t i) { return std::string(data + spans_[i].first, spans_[i].second); };
  req->op = op;
  switch (op) {
    case sw::kSet:
      req->keys = {text(0)};
      req->value = text(1);
      break;
    case sw::kGet:
    case sw::kCheck:
      req->keys = {text(0)};
      break;
    case sw::kWait:
      req->keys.reserve(wait_count_);
      for (uint32_t i = 1; i <= wait_count_; ++i) req->keys.push_back(text(i));
      req->wait_ms = U32At(data, spans_[wait_count_ + 1].first);
      break;
    case sw::kClaim:
      req->rank = U32At(data, spans_[0].first);
      req->who = text(1);
      req->nonce = text(2);
      req->proof = text(3);
      break;
    default:
      break;
  }
  return Step::kDone;
}

}  // namespace trainer
