// The TCP store's wire primitives, shared by its client and its server (the format is in
// tcp_store.h). Internal to trainer/cluster.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace trainer::store_wire {

enum Op : uint8_t { kSet = 1, kGet = 2, kCheck = 3, kWait = 4, kHello = 5, kClaim = 6 };

// The first byte of a SET's reply.
enum SetStatus : uint8_t { kStored = 0, kExists = 1, kDenied = 2 };
// HELLO's reply: whether the store requires the job token.
enum Mode : uint8_t { kOpen = 0, kTokenRequired = 1 };
// The first byte of a CLAIM's reply.
enum ClaimStatus : uint8_t { kGranted = 0, kRefused = 1 };

// "SET", "GET", ... ("op 9" for others): for messages.
std::string OpName(uint8_t op);

// Text from the other end made fit for a message or a log line: printable ASCII (anything
// else becomes '?'), at most `max` bytes ("..." when cut).
std::string Printable(const std::string& s, size_t max);

using Clock = std::chrono::steady_clock;
using Deadline = std::optional<Clock::time_point>;  // none: wait for ever

// kClosed: the peer closed, or the socket failed; kRefused: ReadGrowing's `grow` said no.
enum class Read { kOk, kClosed, kLate, kRefused };

void PutU32(std::string* s, uint32_t v);
uint32_t GetU32(const uint8_t* b);

// All of n bytes, or false: the peer is gone, or (errno EAGAIN) it stopped reading past
// the socket's send timeout.
bool WriteAll(int fd, const void* data, size_t n);

// Exactly n bytes before the deadline.
Read ReadExact(int fd, void* out, size_t n, Deadline deadline);
Read ReadU32(int fd, uint32_t* v, Deadline deadline);

// n bytes appended to *out as they arrive: the buffer grows with the data (at most
// doubling), never to a declared length before the bytes exist. `grow` is asked for each
// increase of capacity, in bytes, before it is made.
Read ReadGrowing(int fd, size_t n, std::string* out, Deadline deadline, const std::function<bool(size_t)>& grow);

// "2.5s"
std::string Seconds(std::chrono::milliseconds ms);

}  // namespace trainer::store_wire
