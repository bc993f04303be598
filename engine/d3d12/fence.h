// Fence: one ID3D12Fence with rising values, the queue's clock. Every unit
// of GPU work is stamped with the value signalled after it; resources retire
// when that value completes (DESIGN.md §4).
//
// Ownership: owns the ID3D12Fence. Thread-safety: every method may be called
// from any thread. Signal calls are serialised (signal_mu_), so values reach
// the queue in rising order even when Wait signals from another thread.
#ifndef DMLSERVE_ENGINE_D3D12_FENCE_H_
#define DMLSERVE_ENGINE_D3D12_FENCE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/mutex.h"
#include "engine/d3d12/com_ptr.h"
#include "engine/d3d12/platform.h"

namespace dmls::d3d12 {

class Fence {
 public:
  static absl::StatusOr<std::unique_ptr<Fence>> Create(ID3D12Device* device);

  // Signals the next value on `queue` after all work submitted so far and
  // returns that value.
  absl::StatusOr<uint64_t> Signal(ID3D12CommandQueue* queue);
  // The highest value the GPU has completed.
  uint64_t completed() const;
  // The last value returned by Signal (0 before the first).
  uint64_t last_signaled() const { return last_signaled_.load(); }
  // Blocks until `value` has completed. No timeout: a hung device is the
  // driver's to report (device removal makes the fence complete with
  // UINT64_MAX). Besides the completion event it re-reads the completed
  // value every 5 ms, and when that value has not moved for 50 ms it
  // signals a new value on the last queue: vkd3d 1.2 on lavapipe was seen
  // to stop advancing the fence (completed 1935 while 1936-1939 had been
  // signalled and their work was done), which wedged the engine
  // (docs/perf/serving-local-2026-11-23/software-wedge.txt). Not const:
  // it may signal.
  absl::Status Wait(uint64_t value);
  // Waits that ended by that re-read rather than by their event.
  uint64_t lost_events() const { return lost_events_.load(); }
  // Extra signals Wait issued because the completed value stopped moving
  // (see fence.cc).
  uint64_t kicks() const { return kicks_.load(); }

  ID3D12Fence* d3d() const { return fence_.get(); }

  ~Fence();

  // The completion event (fence.cc); public for SignalFenceEvent.
  struct Event;

 private:
  Fence() = default;
  // Events handed to SetEventOnCompletion that vkd3d may still fire: freed
  // once fired or with the fence. Declared before fence_ so that they
  // outlive it.
  mutable Mutex abandoned_mu_;
  mutable std::vector<std::unique_ptr<Event>> abandoned_ ABSL_GUARDED_BY(abandoned_mu_);
  ComPtr<ID3D12Fence> fence_;
  std::atomic<uint64_t> last_signaled_{0};
  mutable std::atomic<uint64_t> lost_events_{0};
  mutable std::atomic<uint64_t> kicks_{0};
  // Serialises Signal; guards queue_ (the queue of the last Signal).
  mutable Mutex signal_mu_;
  ID3D12CommandQueue* queue_ ABSL_GUARDED_BY(signal_mu_) = nullptr;
};

#ifndef _WIN32
// vkd3d calls this (vkd3d_instance_create_info.pfn_signal_event) when a value
// passed to SetEventOnCompletion completes; `event` is the waiter's own
// event object (fence.cc), vkd3d has no kernel events of its own.
HRESULT SignalFenceEvent(HANDLE event);
#endif

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_FENCE_H_
