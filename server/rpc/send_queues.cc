#include "server/rpc/send_queues.h"

#include "absl/status/status.h"
#include "server/rpc/server_sockets.h"

#ifdef __linux__
#include <linux/sockios.h>
#include <sys/ioctl.h>
#endif

namespace dmls::server {

#ifdef __linux__

absl::StatusOr<uint64_t> UnsentTcpBytes() {
  uint64_t total = 0;
  absl::Status status = ForEachTcpSocket([&total](int fd) {
    int queued = 0;
    if (ioctl(fd, SIOCOUTQNSD, &queued) == 0 && queued > 0) {
      total += static_cast<uint64_t>(queued);
    }
  });
  if (!status.ok()) return status;
  return total;
}

#else

absl::StatusOr<uint64_t> UnsentTcpBytes() {
  return absl::UnimplementedError("send queues are only read on Linux");
}

#endif

}  // namespace dmls::server
