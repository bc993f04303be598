// UnsentTcpBytes: the bytes that this process's TCP sockets hold but have
// not sent yet (the sum of SIOCOUTQNSD over the sockets in /proc/self/fd),
// held back by the peers' receive windows. DmlServer's Shutdown waits for
// it to reach 0 before gRPC closes the connections: closing a socket that
// has unread input (a client's window updates) makes the kernel reset the
// connection and drop what it has not sent, the tail of a large response
// (docs/OPERATIONS.md, "Connection reset"). Bytes already sent arrive
// before the reset (unless one needs a retransmission). Not waiting for the
// acknowledgements (SIOCOUTQ) matters: a peer may delay them by 40 ms.
//
// gRPC does not hand out its sockets, so every TCP socket of the process
// counts (the listeners hold none). Linux only; elsewhere UNIMPLEMENTED.
//
// Thread-safety: thread-safe (reads kernel state only). A descriptor that
// is closed or reused while it is read counts whatever it is then.
#ifndef DMLSERVE_SERVER_RPC_SEND_QUEUES_H_
#define DMLSERVE_SERVER_RPC_SEND_QUEUES_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace dmls::server {

absl::StatusOr<uint64_t> UnsentTcpBytes();

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_SEND_QUEUES_H_
