// StateTracker: the resource states of one command list being recorded.
// Every buffer starts in COMMON (buffers decay to it after each
// ExecuteCommandLists, so a list cannot know better); To() records a
// transition only when the state changes, and barriers are batched until
// Flush(). Thread-compatible: one recording thread.
#ifndef DMLSERVE_ENGINE_D3D12_STATE_TRACKER_H_
#define DMLSERVE_ENGINE_D3D12_STATE_TRACKER_H_

#include <unordered_map>
#include <vector>

#include "engine/d3d12/objects.h"
#include "engine/d3d12/platform.h"

namespace dmls::d3d12 {

class StateTracker {
 public:
  explicit StateTracker(ID3D12GraphicsCommandList* list) : list_(list) {}

  void To(ID3D12Resource* r, D3D12_RESOURCE_STATES to) {
    auto [it, inserted] = state_.try_emplace(r, D3D12_RESOURCE_STATE_COMMON);
    if (it->second == to) return;
    pending_.push_back(TransitionBarrier(r, it->second, to));
    it->second = to;
  }
  // Orders UAV accesses of `r` (null: of every resource) before the barrier
  // with those after it.
  void Uav(ID3D12Resource* r) { pending_.push_back(UavBarrier(r)); }
  void Flush() {
    if (pending_.empty()) return;
    list_->ResourceBarrier(static_cast<UINT>(pending_.size()), pending_.data());
    pending_.clear();
  }

 private:
  ID3D12GraphicsCommandList* const list_;
  std::unordered_map<ID3D12Resource*, D3D12_RESOURCE_STATES> state_;
  std::vector<D3D12_RESOURCE_BARRIER> pending_;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_STATE_TRACKER_H_
