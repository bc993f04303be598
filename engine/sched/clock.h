// Clock: where the scheduler reads the time, so that batching policy
// (queue delay, deadlines) can be tested on a fake clock without sleeping.
//
// RealClock reads absl::Now(). FakeClock only moves when told to; waiting
// code that uses it must be woken explicitly (the Scheduler re-evaluates its
// policy on every Notify()). Both are thread-safe.
#ifndef DMLSERVE_ENGINE_SCHED_CLOCK_H_
#define DMLSERVE_ENGINE_SCHED_CLOCK_H_

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "engine/core/mutex.h"

namespace dmls::sched {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
  // Whether Now() follows real time (waits with a timeout make sense).
  virtual bool IsReal() const { return false; }
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  bool IsReal() const override { return true; }
  // The process-wide instance.
  static std::shared_ptr<Clock> Get();
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::UnixEpoch() + absl::Hours(1))
      : now_(start) {}
  absl::Time Now() const override {
    MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  mutable Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_CLOCK_H_
