// Every exchange is bounded (NetTimeouts): a registry that accepts and then stalls, or
// trickles bytes below the low-speed limit, is given up within the configured time,
// once (a fresh connection that stalls is not asked again), with a message that names
// the bound and the variable that sets it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "remote/blob_reader.h"
#include "remote/fake_server.h"
#include "remote/registry.h"
#include "remote/upload.h"

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

// A blob that stalls half-way is not resumed: resuming would start the stall bound over
// (the documented 60 s once fired after 121 s). Counted, not timed: one GET.
TEST(Timeouts, BlobStalledMidWayIsNotResumed) {
  const std::string blob(4096, 'b');
  std::atomic<int> gets{0};
  FakeServer server([&](int fd, const std::string& line, const std::string&) {
    if (line == "GET /v2/") return AnswerPingThenStall(server, fd, line);
    ++gets;
    std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n" + blob.substr(0, 2048);
    (void)!::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    server.HoldUntilClientLeaves(fd);
  });
  auto reg = Registry::Connect(server.host(), Short(1, 60));
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  oci::Descriptor desc{"application/octet-stream", oci::Digest::Of(blob), 4096, {}, std::nullopt};
  RegistryBlobReader reader(*reg, "a/b", desc);
  char buf[8192];
  Result<size_t> got = size_t{0};
  size_t total = 0;
  while ((got = reader.Read(buf, sizeof buf)).ok() && *got > 0) total += *got;
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(total, 2048u);
  EXPECT_NE(got.error().message.find("stalled: less than 1024 bytes/s for 1 s ($IMGTOOL_STALL_TIMEOUT)"),
            std::string::npos)
      << got.error().message;
  EXPECT_EQ(gets.load(), 1) << "the stalled download was asked again";
}

// A chunk of a chunked upload that stalls ends the upload: no session query, no resend.
TEST(Timeouts, StalledUploadChunkIsNotSentAgain) {
  std::atomic<int> patches{0}, others{0};
  FakeServer server([&](int fd, const std::string& line, const std::string&) {
    std::string reply;
    if (line == "GET /v2/") {
      reply = Reply(200, "{}");
    } else if (line == "POST /v2/a/b/blobs/uploads/") {
      reply = Reply(202, "", "Location: /v2/a/b/blobs/uploads/u1\r\n");
    } else if (line.rfind("PATCH ", 0) == 0) {
      ++patches;
      return server.HoldUntilClientLeaves(fd);
    } else {
      ++others;
      reply = Reply(404, "{}");
    }
    (void)!::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
  });
  auto reg = Registry::Connect(server.host(), Short(1, 60));
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  const std::string blob(40, 'u');
  oci::Descriptor desc{"application/octet-stream", oci::Digest::Of(blob), 40, {}, std::nullopt};
  UploadOptions up;
  up.monolithic_max = 8;
  up.chunk_size = 64;
  oci::StringReader body(blob);
  auto out = UploadBlob(**reg, "a/b", desc, body, up, nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("stalled: less than 1024 bytes/s for 1 s"), std::string::npos)
      << out.error().message;
  EXPECT_EQ(patches.load(), 1) << "the stalled chunk was sent again";
  EXPECT_EQ(others.load(), 0) << "the registry was asked where a stalled upload stands";
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
