#include "engine/sched/byte_budget.h"

namespace dmls::server {

std::shared_ptr<ByteBudget::Reservation> ByteBudget::TryReserve(uint64_t bytes) {
  uint64_t used = used_.load();
  do {
    if (capacity_ != 0 && (bytes > capacity_ || used > capacity_ - bytes)) {
      return nullptr;
    }
  } while (!used_.compare_exchange_weak(used, used + bytes));
  return std::make_shared<Reservation>(this, bytes);
}

}  // namespace dmls::server
