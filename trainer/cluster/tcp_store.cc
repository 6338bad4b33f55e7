// The store's client (the server is tcp_store_server.cc).
#include "cluster/tcp_store.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cluster/store_wire.h"

namespace trainer {
namespace {

namespace sw = store_wire;

// How long past a WAIT's own timeout a client waits for the reply before calling the
// server silent (a chief whose host vanished without closing the connection).
constexpr auto kWaitReplyGrace = std::chrono::seconds(10);

Error Transport(const std::string& msg) { return MakeError(ErrorKind::kTransport, msg); }

// Every client request starts with the op and the length-prefixed key.
std::string KeyRequest(sw::Op op, const std::string& key) {
  std::string req(1, static_cast<char>(op));
  sw::PutU32(&req, static_cast<uint32_t>(key.size()));
  req += key;
  return req;
}

// The protocol's limits, checked before sending: the server would drop us for them.
Status CheckKey(const std::string& key) {
  if (key.size() <= kStoreMaxKeyBytes) return Status::Ok();
  return MakeError(ErrorKind::kInvalidInput, "store: a key of " + std::to_string(key.size()) + " bytes (the limit is " +
                                                 std::to_string(kStoreMaxKeyBytes) + ")");
}

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list) freeaddrinfo(list);
  }
};

}  // namespace

Result<std::unique_ptr<TcpStoreClient>> TcpStoreClient::Connect(const std::string& host, int port,
                                                                std::chrono::milliseconds timeout) {
  std::string where = host + ":" + std::to_string(port);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last = "no attempt";
  for (;;) {
    AddrInfo ai;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &ai.list);
    if (rc != 0) {
      last = gai_strerror(rc);
    } else {
      int fd = ::socket(ai.list->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd >= 0 && ::connect(fd, ai.list->ai_addr, ai.list->ai_addrlen) == 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return std::unique_ptr<TcpStoreClient>(new TcpStoreClient(fd, where));
      }
      last = std::strerror(errno);
      if (fd >= 0) ::close(fd);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Transport("cannot reach the rendezvous store at " + where + " (the chief serves it) within " +
                       sw::Seconds(timeout) + ": " + last);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

TcpStoreClient::~TcpStoreClient() { ::close(fd_); }

Status TcpStoreClient::Send(const std::string& bytes) {
  if (!sw::WriteAll(fd_, bytes.data(), bytes.size())) return Transport("store " + where_ + ": connection lost");
  bytes_sent_ += bytes.size();
  return Status::Ok();
}

Status TcpStoreClient::Recv(void* out, size_t n, std::optional<std::chrono::steady_clock::time_point> deadline) {
  sw::Read got = sw::ReadExact(fd_, out, n, deadline);
  if (got == sw::Read::kLate) return Transport("store " + where_ + ": the server did not reply in time");
  if (got != sw::Read::kOk) return Transport("store " + where_ + ": connection lost");
  bytes_received_ += n;
  return Status::Ok();
}

Result<std::string> TcpStoreClient::RecvString() {
  uint8_t len[4];
  TRAINER_TRY(Recv(len, 4));
  const uint32_t n = sw::GetU32(len);
  if (n > kStoreMaxValueBytes) return Transport("store " + where_ + ": a reply of " + std::to_string(n) + " bytes");
  std::string value;
  if (sw::ReadGrowing(fd_, n, &value, std::nullopt, [](size_t) { return true; }) != sw::Read::kOk) {
    return Transport("store " + where_ + ": connection lost");
  }
  bytes_received_ += n;
  return value;
}

Status TcpStoreClient::Set(const std::string& key, const std::string& value) {
  TRAINER_TRY(CheckKey(key));
  if (value.size() > kStoreMaxValueBytes) {
    return MakeError(ErrorKind::kInvalidInput, "store: a value of " + std::to_string(value.size()) + " bytes for " +
                                                   key + " (the limit is " + std::to_string(kStoreMaxValueBytes) + ")");
  }
  std::string req = KeyRequest(sw::kSet, key);
  sw::PutU32(&req, static_cast<uint32_t>(value.size()));
  req += value;
  std::lock_guard<std::mutex> lock(mu_);
  TRAINER_TRY(Send(req));
  uint8_t ack;
  return Recv(&ack, 1);
}

Result<std::optional<std::string>> TcpStoreClient::Get(const std::string& key) {
  TRAINER_TRY(CheckKey(key));
  std::string req = KeyRequest(sw::kGet, key);
  std::lock_guard<std::mutex> lock(mu_);
  TRAINER_TRY(Send(req));
  uint8_t found;
  TRAINER_TRY(Recv(&found, 1));
  if (!found) return std::optional<std::string>();
  auto value = RecvString();
  if (!value.ok()) return value.error();
  return std::optional<std::string>(std::move(*value));
}

Result<bool> TcpStoreClient::Check(const std::string& key) {
  TRAINER_TRY(CheckKey(key));
  std::string req = KeyRequest(sw::kCheck, key);
  std::lock_guard<std::mutex> lock(mu_);
  TRAINER_TRY(Send(req));
  uint8_t found;
  TRAINER_TRY(Recv(&found, 1));
  return found != 0;
}

Status TcpStoreClient::Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout,
                            std::vector<std::string>* missing) {
  if (keys.empty()) return Status::Ok();
  if (keys.size() > kStoreMaxWaitKeys) {
    return MakeError(ErrorKind::kInvalidInput, "store: waiting for " + std::to_string(keys.size()) +
                                                   " keys (the limit is " + std::to_string(kStoreMaxWaitKeys) + ")");
  }
  auto ms = std::clamp<int64_t>(timeout.count(), 0, UINT32_MAX);
  std::string req(1, static_cast<char>(sw::kWait));
  sw::PutU32(&req, static_cast<uint32_t>(keys.size()));
  size_t key_bytes = 0;
  for (const auto& k : keys) {
    TRAINER_TRY(CheckKey(k));
    key_bytes += k.size();
    sw::PutU32(&req, static_cast<uint32_t>(k.size()));
    req += k;
  }
  if (key_bytes > kStoreMaxWaitKeyBytes) {
    return MakeError(ErrorKind::kInvalidInput, "store: waiting for " + std::to_string(key_bytes) +
                                                   " bytes of keys (the limit is " +
                                                   std::to_string(kStoreMaxWaitKeyBytes) + ")");
  }
  sw::PutU32(&req, static_cast<uint32_t>(ms));
  std::string found(keys.size(), '\0');
  {
    std::lock_guard<std::mutex> lock(mu_);
    TRAINER_TRY(Send(req));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms) + kWaitReplyGrace;
    TRAINER_TRY(Recv(found.data(), found.size(), deadline));
  }
  std::vector<std::string> absent;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!found[i]) absent.push_back(keys[i]);
  }
  if (absent.empty()) return Status::Ok();
  if (missing) *missing = absent;
  std::string list;
  for (const auto& k : absent) list += (list.empty() ? "" : ", ") + k;
  return MakeError(ErrorKind::kNotFound,
                   "store " + where_ + ": timed out after " + sw::Seconds(timeout) + " waiting for " + list);
}

}  // namespace trainer
