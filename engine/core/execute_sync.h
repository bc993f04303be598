// ExecuteSync: runs one request on an engine and waits for its callback.
// For tests and command-line tools (the server never blocks on an engine).
// Header-only; thread-safe as far as the engine is.
#ifndef DMLSERVE_ENGINE_CORE_EXECUTE_SYNC_H_
#define DMLSERVE_ENGINE_CORE_EXECUTE_SYNC_H_

#include <future>
#include <utility>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"

namespace dmls {

inline absl::StatusOr<ExecuteResult> ExecuteSync(Engine& engine, ExecuteRequest request) {
  std::promise<absl::StatusOr<ExecuteResult>> done;
  std::future<absl::StatusOr<ExecuteResult>> result = done.get_future();
  engine.Execute(std::move(request),
                 [&done](absl::StatusOr<ExecuteResult> r) { done.set_value(std::move(r)); });
  return result.get();
}

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_EXECUTE_SYNC_H_
