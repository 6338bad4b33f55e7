// Every exchange is bounded (NetTimeouts): a registry that accepts and then stalls, or
// trickles bytes below the low-speed limit, is given up within the configured time,
// once (a fresh connection that stalls is not asked again), with a message that names
// the bound and the variable that sets it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <string>
#include <thread>

#include "remote/blob_reader.h"
#include "remote/fake_server.h"
#include "remote/registry.h"

namespace imgtool::remote {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

RegistryOptions Short(long stall_s, long request_s) {
  RegistryOptions o;
  o.backoff_seconds = 0.01;
  o.timeouts = NetTimeouts{5, stall_s, request_s};
  return o;
}

// Answers /v2/; accepts every other request and never says a word.
void AnswerPingThenStall(const FakeServer& server, int fd, const std::string& line) {
  if (line != "GET /v2/") return server.HoldUntilClientLeaves(fd);
  std::string ok = Reply(200, "{}");
  (void)!::send(fd, ok.data(), ok.size(), MSG_NOSIGNAL);
}

TEST(Timeouts, StalledManifestRequestEndsAtTheRequestBound) {
  FakeServer server(
      [&server](int fd, const std::string& line, const std::string&) { AnswerPingThenStall(server, fd, line); });
  auto reg = Registry::Connect(server.host(), Short(30, 1));
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  auto start = Clock::now();
  auto m = (*reg)->GetManifest("a/b", "latest");
  double took = Since(start);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, ErrorKind::kTransport);
  EXPECT_EQ(m.error().message,
            "fetching manifest " + server.host() + "/a/b:latest: GET http://" + server.host() +
                "/v2/a/b/manifests/latest: no complete answer within 1 s ($IMGTOOL_REQUEST_TIMEOUT)");
  EXPECT_GE(took, 0.9);
  EXPECT_LT(took, 3.0) << "asked again after a stall";
}

// A blob download has no whole bound (a layer may take hours), only the stall bound; a
// stall before the first byte is not resumed.
TEST(Timeouts, StalledBlobDownloadEndsAtTheStallBound) {
  FakeServer server(
      [&server](int fd, const std::string& line, const std::string&) { AnswerPingThenStall(server, fd, line); });
  auto reg = Registry::Connect(server.host(), Short(1, 60));
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  oci::Descriptor desc{"application/octet-stream", oci::Digest::Of("x"), 1, {}, std::nullopt};
  RegistryBlobReader blob(*reg, "a/b", desc);
  char buf[16];
  auto start = Clock::now();
  auto got = blob.Read(buf, sizeof buf);
  double took = Since(start);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().message, "pulling blob " + desc.digest.str() + ": GET http://" + server.host() +
                                     "/v2/a/b/blobs/" + desc.digest.str() +
                                     ": stalled: less than 1024 bytes/s for 1 s ($IMGTOOL_STALL_TIMEOUT)");
  EXPECT_LT(took, 3.0) << "resumed a download that never started";
}

// A server that sends a byte now and then keeps a connection alive without a stall of
// zero bytes; below 1024 bytes/s for the stall bound it is cut all the same.
TEST(Timeouts, TrickleBelowTheLowSpeedLimitIsCut) {
  FakeServer server([&server](int fd, const std::string& line, const std::string&) {
    std::string head = line == "GET /v2/" ? Reply(200, "{}") : "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n";
    (void)!::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    while (line != "GET /v2/" && !server.stopping() && ::send(fd, "0123456789", 10, MSG_NOSIGNAL) == 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // 100 bytes/s
    }
  });
  auto reg = Registry::Connect(server.host(), Short(2, 60));
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  HttpRequest req;
  req.url = (*reg)->base_url() + "/v2/a/b/manifests/latest";
  auto start = Clock::now();
  auto resp = (*reg)->Do(req, {}, "fetching");
  double took = Since(start);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.error().message,
            "fetching: GET " + req.url + ": stalled: less than 1024 bytes/s for 2 s ($IMGTOOL_STALL_TIMEOUT)");
  EXPECT_GE(took, 1.9);
  EXPECT_LT(took, 5.0);
}

TEST(Timeouts, FromTheEnvironment) {
  ::unsetenv("IMGTOOL_CONNECT_TIMEOUT");
  ::setenv("IMGTOOL_STALL_TIMEOUT", "7", 1);
  ::setenv("IMGTOOL_REQUEST_TIMEOUT", "", 1);
  auto t = NetTimeoutsFromEnv();
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->connect_s, 30);
  EXPECT_EQ(t->stall_s, 7);
  EXPECT_EQ(t->request_s, 120);
  for (const char* bad : {"abc", "0", "-3", "2.5", "86401"}) {
    ::setenv("IMGTOOL_STALL_TIMEOUT", bad, 1);
    auto e = NetTimeoutsFromEnv();
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.error().kind, ErrorKind::kInvalidInput);
    EXPECT_EQ(e.error().message, std::string("$IMGTOOL_STALL_TIMEOUT=") + bad + ": want whole seconds from 1 to 86400");
  }
  ::unsetenv("IMGTOOL_STALL_TIMEOUT");
  ::unsetenv("IMGTOOL_REQUEST_TIMEOUT");
  auto reg = Registry::Connect("127.0.0.1:1", RegistryOptions{});  // env read before any connection
  ::setenv("IMGTOOL_CONNECT_TIMEOUT", "x", 1);
  auto refused = Registry::Connect("127.0.0.1:1", RegistryOptions{});
  ::unsetenv("IMGTOOL_CONNECT_TIMEOUT");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "$IMGTOOL_CONNECT_TIMEOUT=x: want whole seconds from 1 to 86400");
  ASSERT_FALSE(reg.ok());
  EXPECT_EQ(reg.error().kind, ErrorKind::kTransport);  // port 1: refused, a transport error
}

}  // namespace
}  // namespace imgtool::remote
