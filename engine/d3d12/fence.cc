#include "engine/d3d12/fence.h"

#include <algorithm>

#include "absl/time/time.h"
#include "engine/d3d12/hresult.h"

namespace dmls::d3d12 {

// A one-shot event vkd3d signals through SignalFenceEvent (on Windows a
// kernel event is used instead). Heap-allocated: a wait that ends by
// re-reading the fence leaves it with the fence until vkd3d fires it.
struct Fence::Event {
  Mutex mu;
  CondVar cv;
  bool signaled ABSL_GUARDED_BY(mu) = false;
};

#ifndef _WIN32
HRESULT SignalFenceEvent(HANDLE event) {
  auto* e = static_cast<Fence::Event*>(event);
  MutexLock lock(&e->mu);
  e->signaled = true;
  e->cv.SignalAll();
  return S_OK;
}
#endif

Fence::~Fence() {
  fence_.Reset();  // no event fires after this
  MutexLock lock(&abandoned_mu_);
  abandoned_.clear();
}

absl::StatusOr<std::unique_ptr<Fence>> Fence::Create(ID3D12Device* device) {
  std::unique_ptr<Fence> fence(new Fence());
  DMLS_RETURN_IF_FAILED(
      device->CreateFence(0, D3D12_FENCE_FLAG_NONE,
                          DMLS_IID_PPV(ID3D12Fence, fence->fence_.Put())),
      "ID3D12Device::CreateFence");
  return fence;
}

absl::StatusOr<uint64_t> Fence::Signal(ID3D12CommandQueue* queue) {
  // Serialised so that values reach the queue in rising order even when
  // Wait kicks the queue from another thread.
  MutexLock lock(&signal_mu_);
  const uint64_t value = last_signaled_.load() + 1;
  DMLS_RETURN_IF_FAILED(queue->Signal(fence_.get(), value),
                        "ID3D12CommandQueue::Signal");
  last_signaled_.store(value);
  queue_ = queue;
  return value;
}

uint64_t Fence::completed() const { return fence_->GetCompletedValue(); }

absl::Status Fence::Wait(uint64_t value) {
  if (fence_->GetCompletedValue() >= value) return absl::OkStatus();
#ifdef _WIN32
  HANDLE event = CreateEventW(nullptr, FALSE, FALSE, nullptr);
  if (event == nullptr) return absl::InternalError("CreateEventW failed");
  HRESULT hr = fence_->SetEventOnCompletion(value, event);
  if (SUCCEEDED(hr)) WaitForSingleObject(event, INFINITE);
  CloseHandle(event);
  return HrToStatus(hr, "ID3D12Fence::SetEventOnCompletion");
#else
  constexpr absl::Duration kRecheck = absl::Milliseconds(5);
  constexpr uint64_t kKickAfterRechecks = 10;  // 50 ms without progress
  auto event = std::make_unique<Event>();
  DMLS_RETURN_IF_FAILED(fence_->SetEventOnCompletion(value, event.get()),
                        "ID3D12Fence::SetEventOnCompletion");
  bool fired = false;
  uint64_t stalled = 0;
  uint64_t seen = fence_->GetCompletedValue();
  for (;;) {
    {
      MutexLock lock(&event->mu);
      while (!event->signaled && !event->cv.WaitFor(&event->mu, kRecheck)) {
      }
      fired = event->signaled;
    }
    const uint64_t completed = fence_->GetCompletedValue();
    if (fired || completed >= value) break;
    // vkd3d 1.2's fence worker was seen (on lavapipe) to stop noticing
    // signalled values: the completed value froze below values whose work
    // had long finished. A new, higher signal on the same queue completes
    // only after everything before it, and wakes the worker; so when the
    // value has not moved for a while, kick.
    stalled = completed == seen ? stalled + 1 : 0;
    seen = completed;
    if (stalled >= kKickAfterRechecks) {
      stalled = 0;
      ID3D12CommandQueue* queue = nullptr;
      {
        MutexLock lock(&signal_mu_);
        queue = queue_;
      }
      if (queue != nullptr && Signal(queue).ok()) kicks_.fetch_add(1);
    }
  }
  MutexLock lock(&abandoned_mu_);
  // Events of earlier waits that have fired since can go now.
  abandoned_.erase(std::remove_if(abandoned_.begin(), abandoned_.end(),
                                  [](const std::unique_ptr<Event>& e) {
                                    MutexLock l(&e->mu);
                                    return e->signaled;
                                  }),
                   abandoned_.end());
  if (!fired) {
    lost_events_.fetch_add(1);
    abandoned_.push_back(std::move(event));
  }
  return absl::OkStatus();
#endif
}

}  // namespace dmls::d3d12
