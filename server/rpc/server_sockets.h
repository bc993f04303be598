// The TCP sockets of this process, which gRPC does not hand out: read
// through /proc/self/fd on Linux (server_sockets.cc), through the process's
// handle values on Windows (server_sockets_win.cc, where listeners cannot be
// shut down: see there); elsewhere UNIMPLEMENTED.
//
// ShutdownServerSockets ends a server's listeners and connections under
// gRPC (shutdown(2); gRPC still owns and closes the descriptors): new
// connections are refused, and every connection sends its end after what
// was written to it (SHUT_WR), so that clients fail what is still
// unanswered on it as UNAVAILABLE and close it. DmlServer's Shutdown does that
// before gRPC's own Shutdown, when none of its calls is left (dml_server.h):
// gRPC's Shutdown cancels (CANCELLED) every call that reaches it on a
// connection still open, while a client whose connection closes sees
// UNAVAILABLE, which it may retry elsewhere.
//
// Thread-safety: thread-safe (kernel state only). A descriptor that is
// closed or reused while it is read counts as whatever it is then.
#ifndef DMLSERVE_SERVER_RPC_SERVER_SOCKETS_H_
#define DMLSERVE_SERVER_RPC_SERVER_SOCKETS_H_

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace dmls::server {

// Calls `visit` with every TCP socket (IPv4 or IPv6) of the process.
absl::Status ForEachTcpSocket(absl::FunctionRef<void(int fd)> visit);

// Shuts down every TCP socket of the process whose local port is `port`
// (the listeners and the connections they accepted); how many.
absl::StatusOr<int> ShutdownServerSockets(int port);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_SERVER_SOCKETS_H_
