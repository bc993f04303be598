#include "server/send_queues.h"

#include "absl/status/status.h"

#ifdef __linux__
#include <dirent.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

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
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return 0;
  int value = 0;
  socklen_t size = sizeof(value);
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &size) != 0 || value != SOCK_STREAM) {
    return 0;
  }
  size = sizeof(value);
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &value, &size) != 0 ||
      (value != AF_INET && value != AF_INET6)) {
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
