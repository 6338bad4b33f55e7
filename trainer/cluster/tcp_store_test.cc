#include "cluster/tcp_store.h"

#include <gtest/gtest.h>

#include <thread>

namespace trainer {

using std::chrono::milliseconds;

TEST(TcpStore, SetGetCheckWait) {
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok()) << server.error().message;
  int port = (*server)->port();
  auto a = TcpStoreClient::Connect("127.0.0.1", port, milliseconds(2000));
  auto b = TcpStoreClient::Connect("127.0.0.1", port, milliseconds(2000));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(*(*b)->Check("k"));
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(50));
    EXPECT_TRUE((*a)->Set("k", std::string("v\0x", 3)).ok());
  });
  EXPECT_TRUE((*b)->Wait({"k"}, milliseconds(5000)).ok());
  later.join();
  auto v = (*b)->Get("k");
  ASSERT_TRUE(v.ok() && v->has_value());
  EXPECT_EQ(**v, std::string("v\0x", 3));
  EXPECT_FALSE((*b)->Get("absent")->has_value());
}

TEST(TcpStore, WaitTimesOutNamingKeys) {
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  auto c = TcpStoreClient::Connect("127.0.0.1", (*server)->port(), milliseconds(2000));
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->Set("x", "1").ok());
  std::vector<std::string> missing;
  auto st = (*c)->Wait({"x", "y", "z"}, milliseconds(100), &missing);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(missing, (std::vector<std::string>{"y", "z"}));
  EXPECT_NE(st.error().message.find("timed out after 0.1s waiting for y, z"), std::string::npos);
}

TEST(TcpStore, ConnectGivesUpAfterTimeout) {
  // Find a port nobody listens on by opening and closing a server.
  int port;
  {
    auto s = TcpStoreServer::Start("127.0.0.1", 0);
    ASSERT_TRUE(s.ok());
    port = (*s)->port();
  }
  auto c = TcpStoreClient::Connect("127.0.0.1", port, milliseconds(200));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::kTransport);
  EXPECT_NE(c.error().message.find("cannot reach the rendezvous store at 127.0.0.1:"), std::string::npos);
}

}  // namespace trainer
