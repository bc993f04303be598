// Admission: the one place where a request is let in or refused before any
// engine work, whichever RPC brought it and whichever engine runs it.
// Admit(work) runs, in this order:
//   1. validation: every operator against the feature-level rules, and
//      for chains every source (missing, unexpected, resident tensors and
//      earlier steps that do not match the tensor they feed, forward
//      references) and every output tensor; a resident tensor's
//      descriptor against the tensor rules. INVALID_ARGUMENT, every
//      violation found, with field paths (ops/rule_status.h).
//   2. limits: chain length (CHAIN_TOO_LONG, checked before validation so
//      that a huge chain costs nothing), tensor bytes (TENSOR_BYTES_LIMIT),
//      the bytes one response may carry (MESSAGE_BYTES_LIMIT).
//      RESOURCE_EXHAUSTED, the first found.
//   3. sizes: inline payloads against their tensors (PAYLOAD_SIZE_MISMATCH,
//      INVALID_ARGUMENT).
//   4. amplification: an output range above output_ratio_floor_bytes may
//      be at most the ratio times the bytes the work brings in (inline,
//      resident and streamed); RESOURCE_EXHAUSTED (OUTPUT_AMPLIFICATION).
//   5. cancellation (CANCELLED) and 6. the deadline (DEADLINE_EXCEEDED).
//   7. an in-flight slot (IN_FLIGHT_LIMIT; resident tensors take none) and
//   8. host bytes from the byte budget (MEMORY_BUDGET): twice the bytes
//      the work holds (payloads in and their staged copies, outputs back
//      and their serialized responses; for chunked work one chunk each
//      way). RESOURCE_EXHAUSTED.
// What it admits comes back as an Admitted: the slot and the reservation,
// held by the caller until the engine is done (ReleaseSlot) and the
// response written (destruction).
//
// Thread-safe: any number of threads may call Admit at once; the in-flight
// count and the budget are atomics. Admitted values must not outlive the
// Admission that made them.
#ifndef DMLSERVE_ENGINE_SCHED_ADMISSION_H_
#define DMLSERVE_ENGINE_SCHED_ADMISSION_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/core/execute_request.h"
#include "engine/sched/byte_budget.h"
#include "engine/sched/clock.h"
#include "engine/sched/in_flight_slots.h"
#include "engine/sched/work.h"

namespace dmls::sched {

struct AdmissionOptions {
  // Largest TotalTensorSizeInBytes of any tensor.
  uint64_t max_tensor_bytes = uint64_t{1} << 30;
  // Most output bytes one response may carry (the server derives it from
  // its message limit). 0: no limit.
  uint64_t max_output_bytes = 0;
  // Amplification: the default ratio (0: no limit), the most a call may
  // ask for (Work::output_ratio), and the output range below which any
  // ratio passes (a 41-byte request with a stride-0 input can otherwise
  // ask for a 255 MiB output).
  uint64_t max_output_ratio = 0;
  uint64_t max_output_ratio_limit = 4096;
  uint64_t output_ratio_floor_bytes = uint64_t{1} << 20;
  // Most steps of one chain.
  uint32_t max_chain_steps = 64;
  // Work admitted and not yet released (Admitted::ReleaseSlot). 0: no
  // limit (and nothing counted).
  uint32_t max_in_flight = 0;
  // Host bytes the admitted work may hold together. 0: no limit.
  uint64_t memory_budget_bytes = 0;
};

// What Admit let in: an in-flight slot and a share of the byte budget.
// Move-only; gives back what it still holds when destroyed.
// Thread-compatible.
class Admitted {
 public:
  Admitted() = default;  // holds nothing
  ~Admitted() { ReleaseSlot(); }
  Admitted(Admitted&& other) noexcept
      : slots_(other.slots_), slot_(other.slot_), reservation_(std::move(other.reservation_)) {
    other.slots_ = nullptr;
  }
  Admitted& operator=(Admitted&& other) noexcept {
    if (this != &other) {
      ReleaseSlot();
      slots_ = other.slots_;
      slot_ = other.slot_;
      other.slots_ = nullptr;
      reservation_ = std::move(other.reservation_);
    }
    return *this;
  }
  Admitted(const Admitted&) = delete;
  Admitted& operator=(const Admitted&) = delete;

  // The engine is done with the work: the in-flight slot goes back; the
  // bytes stay reserved until this is destroyed (the response written).
  // Idempotent.
  void ReleaseSlot() {
    if (slots_ != nullptr) slots_->Release(slot_);
    slots_ = nullptr;
  }
  uint64_t bytes() const { return reservation_ ? reservation_.get_deleter().bytes : 0; }

 private:
  friend class Admission;
  InFlightSlots* slots_ = nullptr;  // not owned; null: no slot held
  uint64_t slot_ = 0;
  ByteBudget::Reservation reservation_;
};

class Admission {
 public:
  // `clock` tells deadlines (null: RealClock).
  explicit Admission(AdmissionOptions options, std::shared_ptr<Clock> clock = nullptr);
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // OK with what was admitted, or the first problem found (see above);
  // nothing is held on error.
  absl::StatusOr<Admitted> Admit(const Work& work);

  // `bytes` of the byte budget for host memory held outside admitted work
  // (a WriteTensor's chunk until the engine has copied it, a piece of an
  // overwritten tensor on its way through the host), or RESOURCE_EXHAUSTED
  // (MEMORY_BUDGET); nothing is held on error.
  absl::StatusOr<ByteBudget::Reservation> ReserveBytes(uint64_t bytes);

  // Work holding an in-flight slot now, abandoned work included (counted
  // only with max_in_flight).
  uint32_t in_flight() const { return slots_.in_flight(); }
  const ByteBudget& budget() const { return budget_; }
  const AdmissionOptions& options() const { return options_; }

 private:
  const AdmissionOptions options_;
  const std::shared_ptr<Clock> clock_;
  InFlightSlots slots_;
  ByteBudget budget_;
};

// The output range of a request (OutputRange of its operator).
uint64_t OutputRangeBytes(const ExecuteRequest& request);

// The bytes a request moves: payloads in plus its output range out.
uint64_t RequestBytes(const ExecuteRequest& request);

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_ADMISSION_H_
