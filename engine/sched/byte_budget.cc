#include "engine/sched/byte_budget.h"

namespace dmls::sched {

ByteBudget::Reservation ByteBudget::TryReserve(uint64_t bytes) {
  uint64_t used = used_.load();
  do {
    if (capacity_ != 0 && (bytes > capacity_ || used > capacity_ - bytes)) {
      return nullptr;
    }
  } while (!used_.compare_exchange_weak(used, used + bytes));
  return Reservation(this, GiveBack{bytes});
}

}  // namespace dmls::sched
