#include "server/rpc/server_sockets.h"

#ifdef __linux__
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "server/rpc/socket_port.h"
#endif

namespace dmls::server {

#ifdef __linux__
namespace {

// Whether `fd` is a TCP socket: one call tells it from everything else (a
// descriptor that is no socket fails with ENOTSOCK).
bool IsTcpSocket(int fd) {
  int protocol = 0;
  socklen_t size = sizeof(protocol);
  return getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &size) == 0 &&
         protocol == IPPROTO_TCP;
}

// Whether `fd` is a listening socket.
bool IsListening(int fd) {
  int listening = 0;
  socklen_t size = sizeof(listening);
  return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0 && listening != 0;
}

}  // namespace

absl::Status ForEachTcpSocket(absl::FunctionRef<void(int fd)> visit) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) {
    return absl::UnavailableError(std::string("cannot list /proc/self/fd: ") +
                                  std::strerror(errno));
  }
  const int own = dirfd(dir);
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    if (IsTcpSocket(static_cast<int>(fd))) visit(static_cast<int>(fd));
  }
  closedir(dir);
  return absl::OkStatus();
}

absl::StatusOr<int> ShutdownServerSockets(int port) {
  int count = 0;
  absl::Status status = ForEachTcpSocket([&](int fd) {
    if (LocalPort(fd) != port) return;
    // A listener stops listening (its queue is reset: connections refused).
    // A connection only stops sending: the client reads everything written
    // so far, then the end of the stream, and fails its calls still
    // unanswered as UNAVAILABLE; reading on lets gRPC see the client close,
    // without the reset that closing over unread input would send.
    if (shutdown(fd, IsListening(fd) ? SHUT_RDWR : SHUT_WR) == 0) ++count;
  });
  if (!status.ok()) return status;
  return count;
}

#else

absl::Status ForEachTcpSocket(absl::FunctionRef<void(int fd)>) {
  return absl::UnimplementedError("sockets are only listed on Linux");
}

absl::StatusOr<int> ShutdownServerSockets(int) {
  return absl::UnimplementedError("sockets are only listed on Linux");
}

#endif

}  // namespace dmls::server
