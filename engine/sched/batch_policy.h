// BatchPolicy: how the dynamic batcher (batcher.h) turns queued requests into
// batches. Plain data; the server's flags fill it and GetCapabilities
// reports it.
//
// A batch is formed as soon as the runner can take one and any of these
// holds: the queue holds max_batch_requests requests, or max_batch_bytes
// bytes, or its oldest request has waited max_queue_delay. With the default
// delay of zero a request never waits for company: batches grow by
// themselves while the device is busy, which keeps latency low when the
// load is light and batches large when it is heavy.
#ifndef DMLSERVE_ENGINE_SCHED_BATCH_POLICY_H_
#define DMLSERVE_ENGINE_SCHED_BATCH_POLICY_H_

#include <cstdint>

#include "absl/time/time.h"

namespace dmls::sched {

struct BatchPolicy {
  // Most requests in one batch (one GPU command list). 1 turns batching and
  // coalescing off.
  uint32_t max_batch_requests = 256;
  // Most payload bytes (inputs plus outputs) in one batch; a single request
  // above it still runs, alone.
  uint64_t max_batch_bytes = uint64_t{256} << 20;
  // Longest a request waits for a fuller batch once the runner could take
  // it. Zero: never wait.
  absl::Duration max_queue_delay = absl::ZeroDuration();
  // Requests queued (admitted, not yet handed to the runner) beyond which
  // new ones get RESOURCE_EXHAUSTED (QUEUE_FULL).
  uint32_t max_queue_depth = 4096;
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_BATCH_POLICY_H_
