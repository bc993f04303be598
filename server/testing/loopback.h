// Loopback TCP sockets for the socket tests, on Linux and on Windows
// (cross-built, under Wine; the test starts Winsock). Test-only.
#ifndef DMLSERVE_SERVER_TESTING_LOOPBACK_H_
#define DMLSERVE_SERVER_TESTING_LOOPBACK_H_

#ifdef _WIN32
#include <winsock2.h>
#else
#include <sys/socket.h>
#endif

namespace dmls::server::testing {

#ifdef _WIN32
using Socket = SOCKET;
#else
using Socket = int;
#endif

// A listener on 127.0.0.1 and a free port, its port in `*port`;
// `receive_buffer` (bytes, when not 0) is inherited by the sockets it
// accepts. Failures are EXPECTed.
Socket ListenLoopback(int* port, int receive_buffer = 0);
// A connection to 127.0.0.1:port.
Socket ConnectLoopback(int port);
void CloseSocket(Socket s);

}  // namespace dmls::server::testing

#endif  // DMLSERVE_SERVER_TESTING_LOOPBACK_H_
