// HRESULT -> absl::Status: the one conversion point between COM error codes
// and the engine's status model. Stateless; thread-safe.
#ifndef DMLSERVE_ENGINE_D3D12_HRESULT_H_
#define DMLSERVE_ENGINE_D3D12_HRESULT_H_

#include <string_view>

#include "absl/status/status.h"
#include "engine/d3d12/platform.h"

namespace dmls::d3d12 {

// OK for success codes; otherwise a status whose message names `what` and
// the HRESULT in hex. E_OUTOFMEMORY maps to RESOURCE_EXHAUSTED (the device
// ran out of memory: the request fails, the server lives), E_INVALIDARG to
// INVALID_ARGUMENT (a bad kernel or view: our bug, but report it precisely),
// device removal to UNAVAILABLE, the rest to INTERNAL.
absl::Status HrToStatus(HRESULT hr, std::string_view what);

}  // namespace dmls::d3d12

// Evaluates a COM call once and returns its Status from the enclosing
// function when it failed.
#define DMLS_RETURN_IF_FAILED(expr, what)                        \
  do {                                                           \
    const HRESULT dmls_hr_ = (expr);                             \
    if (FAILED(dmls_hr_)) return ::dmls::d3d12::HrToStatus(dmls_hr_, what); \
  } while (0)

#endif  // DMLSERVE_ENGINE_D3D12_HRESULT_H_
