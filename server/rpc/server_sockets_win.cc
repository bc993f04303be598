// server_sockets.h on Windows. Winsock sockets are kernel handles, and the
// process's handles have no directory like /proc/self/fd: ForEachTcpSocket
// walks the handle values (multiples of 4) and asks Winsock about each open
// one, until it has seen as many as GetProcessHandleCount reported (or a
// long run of unused values, where the count cannot be had or was outrun
// by handles opened meanwhile). A few thousand handles take milliseconds;
// this runs once per stop.
//
// Unlike Linux, Windows has no shutdown() for a listening socket (it fails
// with WSAENOTCONN) and the listener belongs to gRPC, so it cannot be
// closed under it: ShutdownServerSockets shuts down the accepted
// connections only (SD_SEND, as SHUT_WR on Linux). A client connecting
// during the last moments of a drain is accepted and has its calls refused
// by gRPC's own Shutdown.
#include "server/rpc/server_sockets.h"

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "server/rpc/socket_port.h"

namespace dmls::server {
namespace {

// Handle values to walk past the last open one before giving up: the
// handle table hands out the lowest free values, so open handles are dense
// near the start.
constexpr uintptr_t kGiveUpAfter = 1 << 16;
// No process of ours has handle values above this.
constexpr uintptr_t kLastHandleValue = 1 << 26;

// Whether `s` is a TCP socket bound to an IPv4 or IPv6 address: any other
// handle fails with WSAENOTSOCK.
bool IsTcpSocket(SOCKET s) {
  int type = 0;
  int size = sizeof(type);
  if (getsockopt(s, SOL_SOCKET, SO_TYPE, reinterpret_cast<char*>(&type), &size) != 0 ||
      type != SOCK_STREAM) {
    return false;
  }
  sockaddr_storage address{};
  int length = sizeof(address);
  return getsockname(s, reinterpret_cast<sockaddr*>(&address), &length) == 0 &&
         (address.ss_family == AF_INET || address.ss_family == AF_INET6);
}

bool IsListening(SOCKET s) {
  BOOL listening = FALSE;
  int size = sizeof(listening);
  return getsockopt(s, SOL_SOCKET, SO_ACCEPTCONN, reinterpret_cast<char*>(&listening),
                    &size) == 0 &&
         listening;
}

}  // namespace

absl::Status ForEachTcpSocket(absl::FunctionRef<void(int fd)> visit) {
  DWORD open = 0;
  if (!GetProcessHandleCount(GetCurrentProcess(), &open)) open = 0;  // walk to a gap
  DWORD seen = 0;
  uintptr_t last_open = 0;
  for (uintptr_t value = 4; value < kLastHandleValue; value += 4) {
    if (open != 0 && seen >= open) break;
    if (value - last_open > kGiveUpAfter) break;
    DWORD flags = 0;
    if (!GetHandleInformation(reinterpret_cast<HANDLE>(value), &flags)) continue;
    ++seen;
    last_open = value;
    // Kernel handle values have 32 significant bits (they are shared with
    // 32-bit processes), so an int holds them.
    if (IsTcpSocket(static_cast<SOCKET>(value))) visit(static_cast<int>(value));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> ShutdownServerSockets(int port) {
  int count = 0;
  absl::Status status = ForEachTcpSocket([&](int fd) {
    const SOCKET s = static_cast<SOCKET>(fd);
    if (LocalPort(s) != port || IsListening(s)) return;
    // The connection stops sending: the client reads everything written so
    // far, then the end of the stream, and fails its calls still unanswered
    // as UNAVAILABLE (see the file comment for the listener).
    if (shutdown(s, SD_SEND) == 0) ++count;
  });
  if (!status.ok()) return status;
  return count;
}

}  // namespace dmls::server
