// ByteBudget: a bound on the host memory that requests in flight may hold,
// counted in bytes (issue: large concurrent requests used to exhaust the
// host). A request reserves an estimate of its bytes at admission and keeps
// the reservation until its response has been written to the transport
// (for streams, until its queued response is written or dropped); the
// Reservation gives the bytes back when it is destroyed. Admission
// (admission.h) owns the server's budget and hands reservations out inside
// its Admitted values.
//
// Thread-safe. Reservations may outlive nothing but the budget.
#ifndef DMLSERVE_ENGINE_SCHED_BYTE_BUDGET_H_
#define DMLSERVE_ENGINE_SCHED_BYTE_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <memory>

namespace dmls::sched {

class ByteBudget {
 public:
  // `capacity` bytes in all; 0 means no limit.
  explicit ByteBudget(uint64_t capacity) : capacity_(capacity) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // Gives a reservation's bytes back; `bytes` is what it holds.
  struct GiveBack {
    uint64_t bytes = 0;
    void operator()(ByteBudget* budget) const { budget->used_.fetch_sub(bytes); }
  };
  // Holds its bytes until destroyed; a handle, not an allocation (the
  // budget is the pointee, the bytes ride in the deleter).
  using Reservation = std::unique_ptr<ByteBudget, GiveBack>;

  // `bytes` more, or null (nothing reserved) when they would exceed the
  // capacity.
  Reservation TryReserve(uint64_t bytes);

  uint64_t capacity() const { return capacity_; }
  uint64_t used() const { return used_.load(); }

 private:
  const uint64_t capacity_;
  std::atomic<uint64_t> used_{0};
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_BYTE_BUDGET_H_
