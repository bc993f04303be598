// Driver: sends requests of one kind (unary calls, or requests on
// ExecuteStream calls) for the runner, which decides when (load_runner.h).
// Every Send is answered by exactly one CompletionSink call.
//
// Ownership: a driver owns its stubs and calls and shares the channels.
// Thread-safety: Send may be called from any thread, including from inside
// the sink; Close from one thread, after the last Send.
#ifndef DMLSERVE_BENCH_LOAD_DRIVER_H_
#define DMLSERVE_BENCH_LOAD_DRIVER_H_

#include <cstdint>

#include "absl/time/time.h"

namespace dmls::load {

class Driver {
 public:
  virtual ~Driver() = default;

  // Sends one request that was due at `due_ns` (NowNs() clock).
  virtual void Send(int64_t due_ns) = 0;

  // Called once the runner has no request outstanding (or gave up waiting):
  // ends the driver's calls (half-closes streams) and waits up to `timeout`
  // for them to finish, cancelling what is left after it. Requests still
  // unanswered get their sink call here at the latest.
  virtual void Close(absl::Duration timeout) = 0;
};

}  // namespace dmls::load

#endif  // DMLSERVE_BENCH_LOAD_DRIVER_H_
