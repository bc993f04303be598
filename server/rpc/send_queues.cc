#include "server/rpc/send_queues.h"

#include "absl/status/status.h"

#ifdef __linux__
#include <dirent.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#endif

namespace dmls::server {

#ifdef __linux__
namespace {

// The bytes `fd` has not sent yet when it is a TCP socket, else 0.
uint64_t UnsentBytes(int fd) {
  // One call tells a TCP socket (IPv4 or IPv6) from everything else: a
  // descriptor that is no socket fails with ENOTSOCK.
  int protocol = 0;
  socklen_t size = sizeof(protocol);
  if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &size) != 0 ||
      protocol != IPPROTO_TCP) {
    return 0;
  }
  int queued = 0;
  if (ioctl(fd, SIOCOUTQNSD, &queued) != 0 || queued < 0) return 0;
  return static_cast<uint64_t>(queued);
}

}  // namespace

absl::StatusOr<uint64_t> UnsentTcpBytes() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) {
    return absl::UnavailableError(
        std::string("cannot list /proc/self/fd: ") + std::strerror(errno));
  }
  const int own = dirfd(dir);
  uint64_t total = 0;
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    total += UnsentBytes(static_cast<int>(fd));
  }
  closedir(dir);
  return total;
}

#else

absl::StatusOr<uint64_t> UnsentTcpBytes() {
  return absl::UnimplementedError("send queues are only read on Linux");
}

#endif

}  // namespace dmls::server
