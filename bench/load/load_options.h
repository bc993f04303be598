// LoadOptions: everything one dmls_load run is told: the target, the load
// shape (closed-loop concurrency or open-loop rate, unary calls or
// ExecuteStream, channels), its timing and the payload. load_main.cc fills
// it from flags; the tests fill it directly. Plain value types;
// thread-compatible.
#ifndef DMLSERVE_BENCH_LOAD_LOAD_OPTIONS_H_
#define DMLSERVE_BENCH_LOAD_LOAD_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace dmls::load {

enum class RpcKind { kUnary, kStream };

absl::StatusOr<RpcKind> ParseRpcKind(absl::string_view text);
const char* RpcKindName(RpcKind kind);

// What each request carries. Either generated (op, dtype, bytes) or read
// (op_json, optionally input_npy).
struct PayloadOptions {
  // Generated payloads: the OperatorDesc oneof member ("celu", "threshold",
  // "relu", "mvn1", ...). Element-wise operators get a packed 1-D tensor of
  // `bytes`; mvn1 gets [bytes / (cols * size), cols] normalised over axis 1.
  std::string op = "celu";
  // "float32" or "float16".
  std::string dtype = "float32";
  // Input tensor bytes; a multiple of the element size.
  uint64_t bytes = 1024;
  // mvn1 row length in elements (capped at the element count).
  uint64_t mvn_cols = 1024;

  // Read payloads: protobuf JSON of dmlserve.v1.OperatorDesc (as dmlctl
  // reads it). With input_npy the input tensor gets the array (descriptor
  // fields it lacks are filled, packed) and the output copies the input's
  // shape; without, every tensor of the descriptor must be complete and
  // gets random data.
  std::string op_json;
  std::string input_npy;

  // Seed of the random data.
  uint64_t seed = 1;
};

struct LoadOptions {
  // gRPC target, "host:port".
  std::string target = "127.0.0.1:50051";
  RpcKind rpc = RpcKind::kUnary;

  // Closed loop (rate == 0): `concurrency` calls outstanding at all times;
  // each completion sends the next request at once.
  uint32_t concurrency = 16;
  // Open loop (rate > 0): requests are due at fixed intervals of 1/rate s
  // whatever the answers do; latency counts from the due time, so a slow
  // server is not hidden (no coordinated omission). A request due while
  // `max_outstanding` are outstanding is skipped and counted.
  double rate = 0;
  uint32_t max_outstanding = 1024;

  // Distinct gRPC channels (each its own TCP connection); unary calls go
  // round-robin over them.
  uint32_t connections = 1;
  // --rpc=stream: ExecuteStream calls carrying the load, spread over the
  // channels; each request goes to the stream with the fewest outstanding.
  uint32_t streams = 1;

  // Requests completing in [warmup, warmup + duration) after the start are
  // counted; the load runs for warmup + duration, then drains.
  absl::Duration duration = absl::Seconds(8);
  absl::Duration warmup = absl::Seconds(1);
  // Deadline of each unary call, and how long the drain may take.
  absl::Duration timeout = absl::Seconds(30);
  // How long each channel may take to connect before the run fails.
  absl::Duration connect_timeout = absl::Seconds(10);

  // Validate the first `check_count` successful responses (output size,
  // request id).
  bool check = false;
  uint32_t check_count = 16;

  PayloadOptions payload;
};

// INVALID_ARGUMENT naming the first unusable field.
absl::Status ValidateLoadOptions(const LoadOptions& options);

}  // namespace dmls::load

#endif  // DMLSERVE_BENCH_LOAD_LOAD_OPTIONS_H_
