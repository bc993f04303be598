// SetThreadName: names the calling thread for the tools that list threads
// (top -H, ps -L, perf, gdb), so that a profile tells the engine's threads
// apart (dispatch, completion, pools) instead of listing them all under the
// process name. Linux keeps the first 15 bytes; elsewhere it does nothing
// (this MinGW-w64 has no SetThreadDescription). Thread-safe.
#ifndef DMLSERVE_ENGINE_CORE_THREAD_NAME_H_
#define DMLSERVE_ENGINE_CORE_THREAD_NAME_H_

#include "absl/strings/string_view.h"

namespace dmls {

void SetThreadName(absl::string_view name);

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_THREAD_NAME_H_
