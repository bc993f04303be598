// Handles of resident tensors: "t-" and 32 hex digits: the server instance
// that made the tensor (8 digits, random per TensorStore, so per process
// and per restart), system randomness (20 digits, 80 bits: unguessable)
// and a check (4 digits) over the rest. A handle whose check holds but
// whose instance is not the answering server's was made by another replica
// or an earlier run of this one: its tensor is gone with that server (or
// the balancer sent the call elsewhere), which a client can tell from a
// mistyped or made-up handle (tensor_store.h, HANDLE_LOST).
//
// Thread-safety: thread-safe.
#ifndef DMLSERVE_ENGINE_STORE_TENSOR_HANDLE_H_
#define DMLSERVE_ENGINE_STORE_TENSOR_HANDLE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace dmls::store {

// A random instance id (system randomness).
uint32_t NewInstanceId();

// A fresh handle of `instance`.
std::string NewTensorHandle(uint32_t instance);

// The instance of a well-formed handle whose check holds, else nullopt.
std::optional<uint32_t> HandleInstance(absl::string_view handle);

}  // namespace dmls::store

#endif  // DMLSERVE_ENGINE_STORE_TENSOR_HANDLE_H_
