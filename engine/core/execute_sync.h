// ExecuteAsync / ExecuteSync: run one request on an engine and hand back a
// future of its result / wait for it. For tests and command-line tools (the
// server never blocks on an engine). Header-only; thread-safe as far as the
// engine is.
#ifndef DMLSERVE_ENGINE_CORE_EXECUTE_SYNC_H_
#define DMLSERVE_ENGINE_CORE_EXECUTE_SYNC_H_

#include <future>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"

namespace dmls {

// The future is ready once the engine has called the request's callback.
inline std::future<absl::StatusOr<ExecuteResult>> ExecuteAsync(Engine& engine,
                                                              ExecuteRequest request) {
  auto done = std::make_shared<std::promise<absl::StatusOr<ExecuteResult>>>();
  std::future<absl::StatusOr<ExecuteResult>> result = done->get_future();
  engine.Execute(std::move(request),
                 [done](absl::StatusOr<ExecuteResult> r) { done->set_value(std::move(r)); });
  return result;
}

inline absl::StatusOr<ExecuteResult> ExecuteSync(Engine& engine, ExecuteRequest request) {
  return ExecuteAsync(engine, std::move(request)).get();
}

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_EXECUTE_SYNC_H_
