// ShutdownServerSockets on a loopback listener with one accepted
// connection, on Linux and (cross-built, under Wine) on Windows.
#include "server/rpc/server_sockets.h"

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

#include "gtest/gtest.h"

namespace dmls::server {
namespace {

#ifdef _WIN32
using Socket = SOCKET;
void CloseSocket(Socket s) { closesocket(s); }
using Length = int;
#else
using Socket = int;
void CloseSocket(Socket s) { close(s); }
using Length = socklen_t;
#endif

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

  // A loopback listener on a free port; its port in `*port`.
  static Socket Listen(int* port) {
    const Socket s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    Length length = sizeof(address);
    EXPECT_EQ(bind(s, reinterpret_cast<sockaddr*>(&address), length), 0);
    EXPECT_EQ(listen(s, 4), 0);
    EXPECT_EQ(getsockname(s, reinterpret_cast<sockaddr*>(&address), &length), 0);
    *port = ntohs(address.sin_port);
    return s;
  }

  static Socket Connect(int port) {
    const Socket s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port));
    EXPECT_EQ(connect(s, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    return s;
  }
};

TEST_F(ServerSocketsTest, ConnectionsOfThePortEndTheirStreamOthersStayOpen) {
  int port = 0;
  int other_port = 0;
  const Socket listener = Listen(&port);
  const Socket other_listener = Listen(&other_port);
  const Socket client = Connect(port);
  const Socket other_client = Connect(other_port);
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
