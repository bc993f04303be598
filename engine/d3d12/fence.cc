#include "engine/d3d12/fence.h"

#include <condition_variable>
#include <mutex>

#include "engine/d3d12/hresult.h"

namespace dmls::d3d12 {

#ifndef _WIN32
namespace {

// A one-shot event vkd3d signals through SignalFenceEvent. It lives on the
// waiter's stack; the notify happens under the lock, so the waiter cannot
// return (and destroy it) before the signaller is done with it.
struct OneShotEvent {
  std::mutex mu;
  std::condition_variable cv;
  bool signaled = false;
};

}  // namespace

HRESULT SignalFenceEvent(HANDLE event) {
  auto* e = static_cast<OneShotEvent*>(event);
  std::lock_guard<std::mutex> lock(e->mu);
  e->signaled = true;
  e->cv.notify_all();
  return S_OK;
}
#endif

absl::StatusOr<std::unique_ptr<Fence>> Fence::Create(ID3D12Device* device) {
  std::unique_ptr<Fence> fence(new Fence());
  DMLS_RETURN_IF_FAILED(
      device->CreateFence(0, D3D12_FENCE_FLAG_NONE,
                          DMLS_IID_PPV(ID3D12Fence, fence->fence_.Put())),
      "ID3D12Device::CreateFence");
  return fence;
}

absl::StatusOr<uint64_t> Fence::Signal(ID3D12CommandQueue* queue) {
  const uint64_t value = last_signaled_.load() + 1;
  DMLS_RETURN_IF_FAILED(queue->Signal(fence_.get(), value),
                        "ID3D12CommandQueue::Signal");
  last_signaled_.store(value);
  return value;
}

uint64_t Fence::completed() const { return fence_->GetCompletedValue(); }

absl::Status Fence::Wait(uint64_t value) const {
  if (fence_->GetCompletedValue() >= value) return absl::OkStatus();
#ifdef _WIN32
  HANDLE event = CreateEventW(nullptr, FALSE, FALSE, nullptr);
  if (event == nullptr) return absl::InternalError("CreateEventW failed");
  HRESULT hr = fence_->SetEventOnCompletion(value, event);
  if (SUCCEEDED(hr)) WaitForSingleObject(event, INFINITE);
  CloseHandle(event);
  return HrToStatus(hr, "ID3D12Fence::SetEventOnCompletion");
#else
  OneShotEvent event;
  DMLS_RETURN_IF_FAILED(fence_->SetEventOnCompletion(value, &event),
                        "ID3D12Fence::SetEventOnCompletion");
  std::unique_lock<std::mutex> lock(event.mu);
  event.cv.wait(lock, [&] { return event.signaled; });
  return absl::OkStatus();
#endif
}

}  // namespace dmls::d3d12
