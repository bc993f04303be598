// ShutdownServerSockets on a loopback listener with one accepted
// connection, on Linux and (cross-built, under Wine) on Windows.
#include "server/rpc/server_sockets.h"

#ifdef _WIN32
#include <winsock2.h>
#endif

#include "gtest/gtest.h"
#include "server/testing/loopback.h"

namespace dmls::server {
namespace {

using testing::CloseSocket;
using testing::ConnectLoopback;
using testing::ListenLoopback;
using testing::Socket;

class ServerSocketsTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef _WIN32
    WSADATA data;
    ASSERT_EQ(WSAStartup(MAKEWORD(2, 2), &data), 0);
#endif
  }
  void TearDown() override {
#ifdef _WIN32
    WSACleanup();
#endif
  }
};

TEST_F(ServerSocketsTest, ConnectionsOfThePortEndTheirStreamOthersStayOpen) {
  int port = 0;
  int other_port = 0;
  const Socket listener = ListenLoopback(&port);
  const Socket other_listener = ListenLoopback(&other_port);
  const Socket client = ConnectLoopback(port);
  const Socket other_client = ConnectLoopback(other_port);
  const Socket accepted = accept(listener, nullptr, nullptr);
  const Socket other_accepted = accept(other_listener, nullptr, nullptr);
  ASSERT_NE(port, other_port);

  // The server side sends a byte, then its connections on `port` are shut.
  ASSERT_EQ(send(accepted, "x", 1, 0), 1);
  absl::StatusOr<int> closed = ShutdownServerSockets(port);
  ASSERT_TRUE(closed.ok()) << closed.status();
#ifdef _WIN32
  EXPECT_EQ(*closed, 1);  // the accepted connection (no shutdown for listeners)
#else
  EXPECT_EQ(*closed, 2);  // the listener and the accepted connection
#endif

  // The client reads what was sent, then the end of the stream.
  char byte = 0;
  EXPECT_EQ(recv(client, &byte, 1, 0), 1);
  EXPECT_EQ(byte, 'x');
  EXPECT_EQ(recv(client, &byte, 1, 0), 0);

  // The connection on the other port still carries bytes both ways.
  ASSERT_EQ(send(other_accepted, "y", 1, 0), 1);
  EXPECT_EQ(recv(other_client, &byte, 1, 0), 1);
  EXPECT_EQ(byte, 'y');
  ASSERT_EQ(send(other_client, "z", 1, 0), 1);
  EXPECT_EQ(recv(other_accepted, &byte, 1, 0), 1);
  EXPECT_EQ(byte, 'z');

  for (Socket s : {listener, other_listener, client, other_client, accepted, other_accepted}) {
    CloseSocket(s);
  }
}

}  // namespace
}  // namespace dmls::server
