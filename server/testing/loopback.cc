#include "server/testing/loopback.h"

#ifdef _WIN32
#include <ws2tcpip.h>
#else
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>
#endif

#include <cstdint>

#include "gtest/gtest.h"

namespace dmls::server::testing {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  return address;
}

}  // namespace

Socket ListenLoopback(int* port, int receive_buffer) {
  const Socket s = socket(AF_INET, SOCK_STREAM, 0);
  if (receive_buffer != 0) {
    setsockopt(s, SOL_SOCKET, SO_RCVBUF, reinterpret_cast<const char*>(&receive_buffer),
               sizeof(receive_buffer));
  }
  sockaddr_in address = Loopback(0);
  socklen_t length = sizeof(address);
  EXPECT_EQ(bind(s, reinterpret_cast<sockaddr*>(&address), length), 0);
  EXPECT_EQ(listen(s, 4), 0);
  EXPECT_EQ(getsockname(s, reinterpret_cast<sockaddr*>(&address), &length), 0);
  *port = ntohs(address.sin_port);
  return s;
}

Socket ConnectLoopback(int port) {
  const Socket s = socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in address = Loopback(port);
  EXPECT_EQ(connect(s, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  return s;
}

void CloseSocket(Socket s) {
#ifdef _WIN32
  closesocket(s);
#else
  close(s);
#endif
}

}  // namespace dmls::server::testing
