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

#include "cluster/store_auth.h"
#include "cluster/store_wire.h"

namespace trainer {
namespace {

namespace sw = store_wire;

// GetMany's window: requests sent before their replies are read. Its replies (digests of
// ~80 bytes each in the fleet check) fit the socket buffers, so neither side blocks.
constexpr size_t kGetWindow = 256;

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

// How a claimant describes itself to the store, which adds its address: the pid and host
// name are what an operator needs to find a duplicate process.
std::string Who() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return "pid " + std::to_string(::getpid()) + " on " + (host[0] ? host : "an unnamed host");
}

}  // namespace

Result<std::unique_ptr<TcpStoreClient>> TcpStoreClient::Connect(const std::string& host, int port,
                                                                std::chrono::milliseconds timeout,
                                                                const StoreClaim& claim) {
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
        std::unique_ptr<TcpStoreClient> client(new TcpStoreClient(fd, where));
        if (claim.rank < 0 && !claim.token) return client;
        TRAINER_TRY(client->Handshake(claim, timeout));
        return client;
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

Status TcpStoreClient::Handshake(const StoreClaim& claim, std::chrono::milliseconds timeout) {
  auto denied = [this](const std::string& why) {
    return MakeError(ErrorKind::kDenied, "store " + where_ + ": " + why);
  };
  if (claim.rank < 0) return denied("a job token, but no rank to claim with it");
  // A server that accepts but never answers (not a store) must not hang us.
  const auto deadline =
      std::chrono::steady_clock::now() + std::max<std::chrono::milliseconds>(timeout, kWaitReplyGrace);
  std::lock_guard<std::mutex> lock(mu_);
  TRAINER_TRY(Send(std::string(1, static_cast<char>(sw::kHello))));
  uint8_t mode;
  store_auth::Nonce server, client;
  TRAINER_TRY(Recv(&mode, 1, deadline));
  TRAINER_TRY(Recv(server.data(), server.size(), deadline));
  // The mode is about the job's token; rank 0 proves the server's own key (ChiefClaim).
  if (claim.rank != 0 && mode == sw::kTokenRequired && !claim.token) {
    return denied("it requires the job token, and this process has none (set " + std::string(kJobTokenVariable) +
                  " to the job's token, as for every process of the job)");
  }
  if (claim.rank != 0 && mode != sw::kTokenRequired && claim.token) {
    return denied("this process holds a job token (" + claim.token->source() +
                  ") but the store asks for none: the chief runs without it, or something else serves its port");
  }
  if (!store_auth::FreshNonce(&client)) {
    return MakeError(ErrorKind::kInternal, "store: OpenSSL's random generator failed");
  }
  const uint32_t rank = static_cast<uint32_t>(claim.rank);
  const std::string who = Who();
  std::string req(1, static_cast<char>(sw::kClaim));
  sw::PutU32(&req, rank);
  sw::PutU32(&req, static_cast<uint32_t>(who.size()));
  req += who;
  req.append(reinterpret_cast<const char*>(client.data()), client.size());
  Mac proof{};
  if (claim.token) proof = claim.token->Sign(store_auth::ClaimMessage(server, client, rank, who));
  sw::PutU32(&req, claim.token ? static_cast<uint32_t>(proof.size()) : 0);
  if (claim.token) req.append(reinterpret_cast<const char*>(proof.data()), proof.size());
  TRAINER_TRY(Send(req));
  uint8_t status;
  TRAINER_TRY(Recv(&status, 1, deadline));
  auto answer = RecvString(kStoreMaxMessageBytes, deadline);
  if (!answer.ok()) return answer.error();
  if (status != sw::kGranted) {
    return denied("refused the claim of rank " + std::to_string(rank) + ": " +
                  sw::Printable(*answer, kStoreMaxMessageBytes));
  }
  if (claim.token && !claim.token->Verify(store_auth::ChiefMessage(server, client, rank),
                                          reinterpret_cast<const uint8_t*>(answer->data()), answer->size())) {
    return denied("it did not prove that it holds the job token (" + claim.token->source() +
                  "): it is not this job's chief, or the chief holds another token");
  }
  return Status::Ok();
}

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

Result<std::string> TcpStoreClient::RecvString(uint32_t max_bytes,
                                               std::optional<std::chrono::steady_clock::time_point> deadline) {
  uint8_t len[4];
  TRAINER_TRY(Recv(len, 4, deadline));
  const uint32_t n = sw::GetU32(len);
  if (n > max_bytes) return Transport("store " + where_ + ": a reply of " + std::to_string(n) + " bytes");
  std::string value;
  sw::Read got = sw::ReadGrowing(fd_, n, &value, deadline, [](size_t) { return true; });
  if (got == sw::Read::kLate) return Transport("store " + where_ + ": the server did not reply in time");
  if (got != sw::Read::kOk) return Transport("store " + where_ + ": connection lost");
  bytes_received_ += n;
  return value;
}

Result<bool> TcpStoreClient::Add(const std::string& key, const std::string& value) {
  return Store(key, value, nullptr);
}

Result<bool> TcpStoreClient::Store(const std::string& key, const std::string& value, std::string* exists) {
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
  uint8_t status;
  TRAINER_TRY(Recv(&status, 1));
  if (status == sw::kStored) return true;
  auto why = RecvString(kStoreMaxMessageBytes);
  if (!why.ok()) return why.error();
  if (status == sw::kExists) {
    if (exists) *exists = sw::Printable(*why, kStoreMaxMessageBytes);
    return false;
  }
  return MakeError(ErrorKind::kDenied,
                   "store " + where_ + ": refused to store " + key + ": " + sw::Printable(*why, kStoreMaxMessageBytes));
}

Status TcpStoreClient::Set(const std::string& key, const std::string& value) {
  std::string exists;
  auto stored = Store(key, value, &exists);
  if (!stored.ok()) return stored.error();
  if (!*stored) return MakeError(ErrorKind::kDenied, "store " + where_ + ": refused to store " + key + ": " + exists);
  return Status::Ok();
}

Status TcpStoreClient::Publish(const std::string& key, const std::string& value) {
  TRAINER_TRY(Set(key, value));
  auto held = Get(key);
  if (!held.ok()) return held.error();
  if (!held->has_value() || **held != value) {
    return MakeError(ErrorKind::kIntegrity, "store " + where_ + ": " + key +
                                                " does not hold what this process stored there (something else "
                                                "answers on the store's port?)");
  }
  return Status::Ok();
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

Result<std::vector<std::optional<std::string>>> TcpStoreClient::GetMany(const std::vector<std::string>& keys) {
  std::vector<std::optional<std::string>> values;
  values.reserve(keys.size());
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t start = 0; start < keys.size(); start += kGetWindow) {
    const size_t end = std::min(keys.size(), start + kGetWindow);
    std::string req;
    for (size_t i = start; i < end; ++i) {
      TRAINER_TRY(CheckKey(keys[i]));
      req += KeyRequest(sw::kGet, keys[i]);
    }
    TRAINER_TRY(Send(req));
    for (size_t i = start; i < end; ++i) {
      uint8_t found;
      TRAINER_TRY(Recv(&found, 1));
      if (!found) {
        values.emplace_back();
        continue;
      }
      auto value = RecvString();
      if (!value.ok()) return value.error();
      values.emplace_back(std::move(*value));
    }
  }
  return values;
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
