#include "engine/sched/clock.h"

namespace dmls::sched {

std::shared_ptr<Clock> RealClock::Get() {
  static const auto* clock = new std::shared_ptr<Clock>(new RealClock());
  return *clock;
}

}  // namespace dmls::sched
