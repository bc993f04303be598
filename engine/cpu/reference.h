// RunReference: the CPU engine's computation of one request, synchronous on
// the calling thread: plain loops over logical elements that reproduce
// oracle.py (OPERATORS.md §4-§7). CpuEngine runs it on pool threads (sched::PoolRunner);
// CpuEngine::Run exposes it to tests and oracles. Pure; thread-safe.
#ifndef DMLSERVE_ENGINE_CPU_REFERENCE_H_
#define DMLSERVE_ENGINE_CPU_REFERENCE_H_

#include "absl/status/statusor.h"
#include "engine/core/execute_request.h"
#include "engine/cpu/cpu_engine_options.h"

namespace dmls {

// No deadline or cancellation checks. The request must have passed
// ops::Validate; payload lengths that differ from TotalTensorSizeInBytes
// and other inconsistent descriptors give INVALID_ARGUMENT, never a crash.
absl::StatusOr<ExecuteResult> RunReference(const ExecuteRequest& request,
                                           const CpuEngineOptions& options = {});

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CPU_REFERENCE_H_
