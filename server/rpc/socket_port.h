// The local port of a TCP socket, shared by the two platforms' server_sockets
// files. Header-only (one small function); thread-safe.
#ifndef DMLSERVE_SERVER_RPC_SOCKET_PORT_H_
#define DMLSERVE_SERVER_RPC_SOCKET_PORT_H_

#ifdef _WIN32
#include <winsock2.h>  // before any windows.h: it keeps winsock.h out
#include <ws2tcpip.h>
#else
#include <netinet/in.h>
#include <sys/socket.h>
#endif

namespace dmls::server {

// The port `socket` (an fd, or a Winsock SOCKET) is bound to, IPv4 or IPv6;
// -1 when it has no such address.
template <typename Socket>
int LocalPort(Socket socket) {
  sockaddr_storage address{};
  socklen_t size = sizeof(address);  // ws2tcpip.h defines it as int
  if (getsockname(socket, reinterpret_cast<sockaddr*>(&address), &size) != 0) return -1;
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  }
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  }
  return -1;
}

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_SOCKET_PORT_H_
