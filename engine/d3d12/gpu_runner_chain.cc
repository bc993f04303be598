// GpuRunner, part 4: resident work (chains, transfers) on the runner's queue
// (gpu_runner_internal.h says how the files divide). The work is recorded
// by its caller (resident_executor.h) into a frame of the runner's; the
// fence, the frames in flight and the completion thread are the batches'.
#include "engine/d3d12/gpu_runner.h"

#include <utility>

#include "absl/time/clock.h"
#include "engine/d3d12/gpu_runner_internal.h"
#include "engine/d3d12/hresult.h"

namespace dmls::d3d12 {

absl::StatusOr<uint64_t> GpuRunner::PlaceList(
    absl::FunctionRef<absl::Status(ID3D12GraphicsCommandList*)> record,
    absl::AnyInvocable<void(absl::Status)> done) {
  if (lost()) return lost_status();
  Frame* frame = AcquireFrame();
  ID3D12GraphicsCommandList* list = frame->list.get();
  HRESULT hr = frame->allocator->Reset();
  if (SUCCEEDED(hr)) hr = list->Reset(frame->allocator.get(), nullptr);
  absl::Status status = SUCCEEDED(hr) ? absl::OkStatus() : HrToStatus(hr, "command list Reset");
  if (status.ok()) {
    status = record(list);
    // Closed even when recording failed: the frame's list is Reset next.
    hr = list->Close();
    if (status.ok() && FAILED(hr)) status = HrToStatus(hr, "command list Close");
  }
  absl::StatusOr<uint64_t> value = absl::UnknownError("not submitted");
  if (status.ok()) {
    ID3D12CommandList* lists[] = {list};
    queue_->ExecuteCommandLists(1, lists);
    value = fence_->Signal(queue_.get());
  } else {
    value = status;
  }
  if (!value.ok()) {
    if (const HRESULT removed = device_->d3d()->GetDeviceRemovedReason(); FAILED(removed)) {
      MarkLost(HrToStatus(removed, "device removed"));
    }
    ReleaseFrame(frame);
    return value.status();
  }
  {
    MutexLock lock(&stats_mu_);
    ++stats_.placed_lists;
  }
  {
    MutexLock lock(&flight_mu_);
    in_flight_.push_back({*value, absl::Now(), frame, {}, std::move(done)});
    ++batches_in_flight_;
  }
  flight_cv_.SignalAll();
  return *value;
}

absl::Status GpuRunner::WaitFence(uint64_t value) {
  absl::Status s = fence_->Wait(value);
  if (s.ok() && fence_->completed() == UINT64_MAX) {
    s = absl::UnavailableError("device removed (fence at UINT64_MAX)");
  }
  if (!s.ok()) {
    MarkLost(s);
    return lost_status();
  }
  return lost() ? lost_status() : absl::OkStatus();
}

}  // namespace dmls::d3d12
