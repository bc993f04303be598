// InFlightSlots: Admission's bound on the work it has let through to the
// engine (--max_in_flight). A call holds its slot until the engine answers
// it, or until its deadline passes or its client cancels, whichever comes
// first: an abandoned call still waiting in the engine's queue (which
// drops it when its turn comes) no longer counts against the limit, so a
// client that gives up on its calls cannot fill the server with them
// (issue 24: 2,000 serial calls with 1 us deadlines got 372
// IN_FLIGHT_LIMIT on a fresh lavapipe server, its first call compiling).
//
// Thread-safety: thread-safe.
#ifndef DMLSERVE_ENGINE_SCHED_IN_FLIGHT_SLOTS_H_
#define DMLSERVE_ENGINE_SCHED_IN_FLIGHT_SLOTS_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "engine/core/mutex.h"

namespace dmls::sched {

class InFlightSlots {
 public:
  explicit InFlightSlots(uint32_t max) : max_(max) {}

  // A slot (never 0) for a call with `deadline` and `cancelled` (may be
  // null: never cancelled), or 0 when `max` calls that are still wanted at
  // `now` hold one.
  uint64_t TryAcquire(absl::Time deadline, std::shared_ptr<const std::atomic<bool>> cancelled,
                      absl::Time now);
  // The engine answered the call of `slot`. Once per slot.
  void Release(uint64_t slot);

  // Calls with the engine, abandoned ones included.
  uint32_t in_flight() const;

 private:
  struct Call {
    absl::Time deadline;
    std::shared_ptr<const std::atomic<bool>> cancelled;
  };

  const uint32_t max_;
  mutable Mutex mu_;
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint64_t, Call> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_IN_FLIGHT_SLOTS_H_
