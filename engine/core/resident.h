// Resident tensors and operator chains at the engine level: storage that an
// engine keeps between calls (on its device where it has one), and a
// sequence of validated operators whose tensors come from inline bytes,
// resident buffers or earlier steps' outputs (engine/store/tensor_store.h keeps
// the handles, owners and quotas; this layer knows none of that).
//
// Ownership: a ResidentBuffer is shared (std::shared_ptr) by whoever uses it
// -- the tensor store, chains queued or running -- and its memory goes back
// when the last holder lets go. Thread-safety: the types are plain data; the
// engines' methods on them are thread-safe (engine.h).
#ifndef DMLSERVE_ENGINE_CORE_RESIDENT_H_
#define DMLSERVE_ENGINE_CORE_RESIDENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/core/operator_desc.h"
#include "engine/core/types.h"

namespace dmls {

class Engine;

// Bytes an engine keeps for a client. Created by Engine::AllocateResident;
// read and written only through the engine that made it (engine()).
class ResidentBuffer {
 public:
  virtual ~ResidentBuffer() = default;
  uint64_t size() const { return size_; }
  Engine* engine() const { return engine_; }
  // The device it lives on (DeviceInfo::name).
  const std::string& device() const { return device_; }

 protected:
  ResidentBuffer(Engine* engine, uint64_t size, std::string device)
      : engine_(engine), size_(size), device_(std::move(device)) {}

 private:
  Engine* const engine_;
  const uint64_t size_;
  const std::string device_;
};

// Where a chain step's tensor comes from.
struct ChainSource {
  enum class Kind : uint8_t { kNone, kInline, kResident, kStep };
  Kind kind = Kind::kNone;
  std::string bytes;                          // kInline
  std::shared_ptr<ResidentBuffer> resident;   // kResident
  uint32_t step = 0;                          // kStep: an earlier step's output range

  static ChainSource Inline(std::string b) {
    ChainSource s;
    s.kind = Kind::kInline;
    s.bytes = std::move(b);
    return s;
  }
  static ChainSource Resident(std::shared_ptr<ResidentBuffer> r) {
    ChainSource s;
    s.kind = Kind::kResident;
    s.resident = std::move(r);
    return s;
  }
  static ChainSource Step(uint32_t index) {
    ChainSource s;
    s.kind = Kind::kStep;
    s.step = index;
    return s;
  }
};

// One validated operator of a chain (the caller has checked the whole chain:
// sources present exactly where the operator has tensors, sizes equal,
// steps referring backwards, output buffers large enough).
struct ChainStep {
  OperatorDesc op;
  // The output is bound over the input (OPERATORS.md §10); with a resident
  // input that buffer is updated in place.
  bool in_place = false;
  ChainSource input, scale, bias;
  // Send the output range back (ChainResult::outputs[step]).
  bool return_output = false;
  // Also copy the output range here (its first bytes); may be null.
  std::shared_ptr<ResidentBuffer> output;
};

struct ChainRequest {
  std::vector<ChainStep> steps;
  FeatureLevel feature_level = kHighestFeatureLevel;
  // Not started by then: DEADLINE_EXCEEDED.
  absl::Time deadline = absl::InfiniteFuture();
  std::shared_ptr<const std::atomic<bool>> cancelled;
};

struct ChainResult {
  // One entry per step: its output range for steps with return_output,
  // empty for the others.
  std::vector<std::string> outputs;
};

using ChainCallback = absl::AnyInvocable<void(absl::StatusOr<ChainResult>)>;
using StatusCallback = absl::AnyInvocable<void(absl::Status)>;
using BytesCallback = absl::AnyInvocable<void(absl::StatusOr<std::string>)>;

// The output range of a step (OPERATORS.md §10: for in-place the larger of
// input and output).
uint64_t StepOutputBytes(const ChainStep& step);

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_RESIDENT_H_
