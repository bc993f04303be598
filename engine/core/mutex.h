// Mutex, MutexLock and CondVar: the project's lock types, annotated so that
// clang's -Wthread-safety analysis checks the ABSL_GUARDED_BY and
// ABSL_EXCLUSIVE_LOCKS_REQUIRED contracts written next to the data
// (deploy/check-thread-safety.sh runs it; GCC ignores the annotations).
//
// Why not std::mutex or absl::Mutex directly: clang only checks locking
// through a type marked as a capability, which std::mutex is not; and
// Debian's abseil is built without ThreadSanitizer instrumentation, so TSan
// does not see absl::Mutex lock and unlock (the same holds for anything
// built on it, absl::Notification included). Mutex is a std::mutex (a
// pthread mutex, which TSan intercepts) with the annotations on top, and
// costs nothing more.
//
// Contract:
//  - Mutex is exclusive and not recursive: Lock() on a Mutex the calling
//    thread holds deadlocks; Unlock() must come from the thread that
//    locked it. It has a constexpr constructor, so a static Mutex is
//    constant-initialised and safe to use from static initialisers
//    (DMLS_MUTEX_CONSTEXPR; not with MinGW, whose winpthreads std::mutex
//    is initialised at run time: there a namespace-scope static Mutex is
//    dynamically initialised, function-local ones remain safe).
//  - AssertHeld() tells the analysis that the caller holds the lock (for
//    code it cannot follow, such as callbacks); it checks nothing at run
//    time.
//  - MutexLock holds a Mutex for its scope. Where code must unlock in the
//    middle of a scope, call Lock()/Unlock() on the Mutex itself; the
//    analysis follows those too.
//  - CondVar is a std::condition_variable that waits on a Mutex. Every
//    Wait* is called with that Mutex held, releases it while blocked and
//    holds it again on return; threads waiting on one CondVar at the same
//    time must use the same Mutex. Wakeups may be spurious, so wait in a
//    loop on the condition:
//        MutexLock lock(&mu_);
//        while (queue_.empty() && !stopping_) cv_.Wait(&mu_);
//    The loop, not a predicate lambda, is the house style: the analysis
//    does not know that a lambda runs with the lock held, and would flag
//    every guarded member it reads.
//  - WaitFor(timeout) measures the timeout on the steady clock;
//    WaitUntil(deadline) compares the deadline with the system clock
//    (absl::Time is wall time). Both return true when they returned
//    because the time ran out, false when woken (possibly spuriously). An
//    infinite timeout or deadline waits as Wait() does.
//  - Signal()/SignalAll() may be called with or without the Mutex held.
//
// Thread-safety: all three types are thread-safe in the sense above; none
// is copyable or movable.
#ifndef DMLSERVE_ENGINE_CORE_MUTEX_H_
#define DMLSERVE_ENGINE_CORE_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

#if defined(__MINGW32__)
#define DMLS_MUTEX_CONSTEXPR
#else
#define DMLS_MUTEX_CONSTEXPR constexpr
#endif

namespace dmls {

class CondVar;

class ABSL_LOCKABLE Mutex {
 public:
  DMLS_MUTEX_CONSTEXPR Mutex() noexcept = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  // For the analysis only (see above).
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    // Borrows the caller's lock for the wait and leaves it held.
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  bool WaitFor(Mutex* mu, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (timeout == absl::InfiniteDuration()) {
      Wait(mu);
      return false;
    }
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const std::cv_status s =
        cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout));
    lock.release();
    return s == std::cv_status::timeout;
  }
  bool WaitUntil(Mutex* mu, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (deadline == absl::InfiniteFuture()) {
      Wait(mu);
      return false;
    }
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const std::cv_status s = cv_.wait_until(lock, absl::ToChronoTime(deadline));
    lock.release();
    return s == std::cv_status::timeout;
  }

  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_MUTEX_H_
