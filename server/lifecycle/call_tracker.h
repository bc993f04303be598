// CallTracker: the calls a server has in flight, so that a graceful stop
// can refuse new calls itself and wait until its own calls are over before
// gRPC's Shutdown closes the connections (docs/OPERATIONS.md, "Connection
// reset": gRPC closes a connection as soon as its last stream ends after
// the final GOAWAY, and the kernel then resets it, dropping the tail of a
// large response that was still in the socket's send buffer).
//
// A handler calls Begin when it starts; the Ticket it gets ends the call's
// tracking when it is destroyed or End is called, which the reactors do in
// OnDone, that is, once gRPC has written the final status (every byte of
// the response has been handed to the kernel). Once the tracker is closed
// (Close, CloseWhenIdle or StopAll), Begin returns an empty Ticket and the
// handler answers UNAVAILABLE, kShuttingDownMessage (tracked_reactor.h).
// A call that does not end by itself (a stream that the client keeps open)
// passes a Stoppable, which StopAll asks to end.
//
// Thread-safety: all methods are thread-safe. The tracker must outlive
// every Ticket.
#ifndef DMLSERVE_SERVER_LIFECYCLE_CALL_TRACKER_H_
#define DMLSERVE_SERVER_LIFECYCLE_CALL_TRACKER_H_

#include <cstddef>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "engine/core/mutex.h"

namespace dmls::server {

// The status message of calls refused once the stop has begun.
inline constexpr char kShuttingDownMessage[] = "the server is shutting down";

class CallTracker {
 public:
  // A call that StopAll asks to end (ExecuteStream: stop reading, answer
  // what was read, finish UNAVAILABLE).
  class Stoppable {
   public:
    virtual ~Stoppable() = default;
    // Called with the tracker's lock held while the call is still tracked
    // (its Ticket has not ended, so the object is alive): keep the object
    // alive until Stop has run, e.g. take a reference. Must not block or
    // call into gRPC or the tracker.
    virtual void Retain() = 0;
    // Called once after Retain, without the tracker's lock: end the call
    // soon, then drop what Retain took.
    virtual void Stop() = 0;
  };

  // One tracked call; ends its tracking once (End or destruction). Movable;
  // a default-constructed or refused Ticket is empty (false).
  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& other) noexcept;
    Ticket& operator=(Ticket&& other) noexcept;
    ~Ticket() { End(); }

    explicit operator bool() const { return tracker_ != nullptr; }
    void End();

   private:
    friend class CallTracker;
    Ticket(CallTracker* tracker, Stoppable* stoppable)
        : tracker_(tracker), stoppable_(stoppable) {}

    CallTracker* tracker_ = nullptr;
    Stoppable* stoppable_ = nullptr;  // null: a call that ends by itself
  };

  CallTracker() = default;
  CallTracker(const CallTracker&) = delete;
  CallTracker& operator=(const CallTracker&) = delete;

  // Starts tracking a call, or returns an empty Ticket after Close.
  // `stoppable` (not owned, may be null) is asked to stop by StopAll; it
  // must stay valid until the Ticket ends.
  Ticket Begin(Stoppable* stoppable = nullptr);

  // Refuses new calls from now on. Idempotent.
  void Close();
  // Waits until no call is in flight and closes then, so that no call can
  // begin in between; or closes when `deadline` passes. True when it
  // closed with no call in flight.
  bool CloseWhenIdle(absl::Time deadline);
  // Close, and asks every Stoppable call in flight to stop (each once).
  // Idempotent.
  void StopAll();

  // Waits until no call is in flight or `deadline` passes; true when none
  // is.
  bool WaitIdle(absl::Time deadline);

  // Calls in flight now.
  size_t in_flight() const;
  // When the last call ended (InfinitePast when none has).
  absl::Time last_end() const;
  // Calls refused since the tracker closed.
  uint64_t refused() const;

 private:
  void End(Stoppable* stoppable);
  // Waits with mu_ held until no call is in flight or `deadline` passes;
  // true when none is.
  bool WaitIdleLocked(absl::Time deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  CondVar idle_cv_;  // signalled when in_flight_ drops to 0
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_end_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  uint64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
  // The Stoppable calls in flight.
  absl::flat_hash_set<Stoppable*> stoppable_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_LIFECYCLE_CALL_TRACKER_H_
