// ExecuteRequest: one operator execution handed to an Engine (engine.h),
// bytes in and bytes out, with its result and callback types and the
// device-lost marking engines use to hand a request back. Plain data.
#ifndef DMLSERVE_ENGINE_CORE_EXECUTE_REQUEST_H_
#define DMLSERVE_ENGINE_CORE_EXECUTE_REQUEST_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/core/operator_desc.h"
#include "engine/core/payload.h"
#include "engine/core/types.h"

namespace dmls {

// One operator execution. The engine takes ownership of the payloads.
struct ExecuteRequest {
  // Must have passed ops::Validate at `feature_level` (Execute does not
  // re-validate; it may CHECK-fail or return INTERNAL on an invalid desc).
  OperatorDesc op;
  FeatureLevel feature_level = kHighestFeatureLevel;
  // The output is bound over the input buffer (OPERATORS.md §10).
  bool in_place = false;
  // Raw little-endian buffer bytes; each is exactly the tensor's
  // TotalTensorSizeInBytes long. scale/bias are empty when absent. They may
  // borrow the received message's memory (payload.h): engines read them
  // once, with CopyTo or Flatten, into where they need the bytes.
  Payload input;
  Payload scale;
  Payload bias;
  // Work not started by then fails with DEADLINE_EXCEEDED.
  absl::Time deadline = absl::InfiniteFuture();
  // Set by the caller to abandon the request; checked before work starts.
  std::shared_ptr<const std::atomic<bool>> cancelled;
  // Optional: where an engine hands the request back when its device is
  // lost before the request's result exists (MultiEngine sets it to run the
  // request on another device). The engine calls it at most once, with the
  // request whole again (payloads restored, on_device_lost cleared), on the
  // thread and right before it calls `done` with a DeviceLost status
  // (IsDeviceLost below). `done` is still called exactly once. Engines that
  // cannot restore the payloads never call it.
  std::function<void(ExecuteRequest)> on_device_lost;
};

// UNAVAILABLE marked as "the engine's device is lost" (absl status
// payload), so that callers can tell a dead device from other UNAVAILABLE
// answers (e.g. shutting down).
absl::Status DeviceLostError(absl::string_view message);
bool IsDeviceLost(const absl::Status& status);
// Hands `request` to its on_device_lost hook when it has one (clearing the
// hook first). For engines, on their device-lost path.
void HandBackRequest(ExecuteRequest& request);

// Where one request's time went inside the engine, for per-request
// statistics (KServe ModelStatistics). Filled by the engine's scheduler
// (queued, run, the execution) and its runner (input, output); zero where
// the engine cannot tell (a chain, an engine without a scheduler).
struct ExecuteTiming {
  // Preparing it for the device before it is queued (Runner::Prepare:
  // planning and the GPU runner's copy into upload memory); near zero
  // where the runner reads the request's bytes directly (the CPU engine).
  absl::Duration input;
  // In the scheduler's queue: from admission into the queue until the
  // batch holding it was handed to the runner.
  absl::Duration queued;
  // From the hand-over to the runner until the result existed (recording,
  // device work, the output copy).
  absl::Duration run;
  // The part of `run` spent copying the output out of device-visible
  // memory into `output` (the GPU runner's readback copy); zero where the
  // result is written in place (the CPU engine).
  absl::Duration output;
  // Requests that ran as one execution with this one (one coalesced
  // dispatch; 1: alone; 0: the engine does not say). Exactly one request
  // of each execution has `counts_execution` set, so that executions can
  // be counted from per-request results.
  uint32_t execution_requests = 0;
  bool counts_execution = false;
};

struct ExecuteResult {
  // The output buffer range: output.TotalTensorSizeInBytes bytes, or for
  // in-place max(input, output) TotalTensorSizeInBytes bytes holding the
  // aliased buffer after execution. Bytes that belong to no output element
  // (padding, the DWORD round-up tail) are unspecified, as in DirectML
  // (OPERATORS.md §2.3): compare elements, not whole buffers.
  std::string output;
  ExecuteTiming timing;
};

using ExecuteCallback = absl::AnyInvocable<void(absl::StatusOr<ExecuteResult>)>;

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_EXECUTE_REQUEST_H_
