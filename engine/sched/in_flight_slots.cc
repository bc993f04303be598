#include "engine/sched/in_flight_slots.h"

#include <utility>

namespace dmls::sched {

uint64_t InFlightSlots::TryAcquire(absl::Time deadline,
                                   std::shared_ptr<const std::atomic<bool>> cancelled,
                                   absl::Time now) {
  MutexLock lock(&mu_);
  if (calls_.size() >= max_) {
    // Full only if enough of them are still wanted: looked at only here,
    // at the limit, so the common path stays O(1).
    uint32_t wanted = 0;
    for (const auto& [slot, call] : calls_) {
      if (call.deadline > now && !(call.cancelled && call.cancelled->load())) ++wanted;
    }
    if (wanted >= max_) return 0;
  }
  const uint64_t slot = next_++;
  calls_.emplace(slot, Call{deadline, std::move(cancelled)});
  return slot;
}

void InFlightSlots::Release(uint64_t slot) {
  MutexLock lock(&mu_);
  calls_.erase(slot);
}

uint32_t InFlightSlots::in_flight() const {
  MutexLock lock(&mu_);
  return static_cast<uint32_t>(calls_.size());
}

}  // namespace dmls::sched
