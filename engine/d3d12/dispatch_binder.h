// DispatchBinder: turns a DispatchPlan over concrete buffers into recorded
// compute work. Bind() writes each dispatch's constant block into an upload
// ring (root CBV b0) and its typed buffer views into a shader-visible
// descriptor heap ring (SRV table t0..t2, UAV table u0..u1); Record() emits
// the SetPipelineState / root arguments / Dispatch calls. Binding once and
// recording many times is what the benchmark does; the engine binds and
// records each request once.
//
// Both rings are recycled by fence value: the caller closes a batch's
// allocations with Retire(fence) and frees them with Reclaim(completed).
//
// Ownership: owns the descriptor heap and the constant upload buffer; does
// not own the PipelineCache or the bound resources. Thread-compatible: one
// thread (the submission thread) uses it.
#ifndef DMLSERVE_ENGINE_D3D12_DISPATCH_BINDER_H_
#define DMLSERVE_ENGINE_D3D12_DISPATCH_BINDER_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/core/mutex.h"
#include "engine/d3d12/com_ptr.h"
#include "engine/d3d12/fence_ring.h"
#include "engine/d3d12/pipeline_cache.h"
#include "engine/d3d12/platform.h"
#include "engine/d3d12/view_cache.h"
#include "engine/plan/plan.h"

namespace dmls::d3d12 {

inline constexpr size_t kSlotCount = 6;  // gpu::BufferSlot values
inline constexpr uint64_t kConstantBlockBytes = 256;
inline constexpr uint32_t kDescriptorsPerDispatch = kSrvSlots + kUavSlots;

// The GPU buffer behind each gpu::BufferSlot (null: not present).
struct SlotBuffers {
  std::array<ID3D12Resource*, kSlotCount> resource = {};
  std::array<uint64_t, kSlotCount> bytes = {};  // usable size of each buffer

  void Set(gpu::BufferSlot slot, ID3D12Resource* r, uint64_t size) {
    resource[static_cast<size_t>(slot)] = r;
    bytes[static_cast<size_t>(slot)] = size;
  }
};

struct BoundDispatch {
  ID3D12PipelineState* pso = nullptr;
  D3D12_GPU_VIRTUAL_ADDRESS cbv = 0;
  D3D12_GPU_DESCRIPTOR_HANDLE srv_table = {};
  D3D12_GPU_DESCRIPTOR_HANDLE uav_table = {};
  std::array<uint32_t, 3> groups = {1, 1, 1};
  // UAV barriers to issue first (resources earlier dispatches wrote).
  std::vector<ID3D12Resource*> barrier_before;
};

// Descriptor tables over whole buffers, created once: over one arena buffer
// (arena.h) in every position, or (CreateTables) over a buffer per
// position. Every kernel's views are one of these format sets
// (kernel_abi.h), so an arena request binds a table instead of creating
// views: srv[0] = t0 R32G32B32A32_UINT, srv[1] = t0 R32_UINT, with t1 and
// t2 R32_UINT in both, and srv[2] = t0, t1 and t2 R32G32B32A32_UINT (MVN's
// Scale/Bias texels); uav[0] = u0 R32G32B32A32_UINT, uav[1] = u0 R32_UINT,
// with u1 R32_FLOAT in both.
struct ArenaTables {
  D3D12_GPU_DESCRIPTOR_HANDLE srv[3] = {};
  D3D12_GPU_DESCRIPTOR_HANDLE uav[2] = {};
  // The arena buffer; null for tables over several buffers (UAV barriers
  // inside a plan are then global).
  ID3D12Resource* resource = nullptr;
};

struct DispatchBinderOptions {
  // Shader-visible CBV/SRV/UAV descriptors (5 per dispatch).
  uint32_t descriptor_capacity = 65536;
  // Descriptors kept for arena tables (13 per arena), beyond the ring: 157
  // arenas, more than fit in half an 80 GB adapter at 256 MiB each (the
  // default memory cap and arena size).
  uint32_t persistent_descriptors = 2048;
  // 256-byte constant blocks (1 per dispatch).
  uint32_t constant_blocks = 8192;
};

class DispatchBinder {
 public:
  // `device` and `pipelines` must outlive the binder.
  static absl::StatusOr<std::unique_ptr<DispatchBinder>> Create(
      ID3D12Device* device, PipelineCache* pipelines,
      DispatchBinderOptions options = {});

  // Binds every dispatch of `plan`. Checks the plan against the ABI limits
  // and the buffers' sizes (INTERNAL when a view or group count is out of
  // range: a planner bug must not become a GPU fault). RESOURCE_EXHAUSTED
  // with nothing allocated when a ring is full.
  absl::StatusOr<std::vector<BoundDispatch>> Bind(const gpu::DispatchPlan& plan,
                                                  const SlotBuffers& buffers);
  // As Bind, but each view is a copy of a cached whole-buffer view
  // (view_cache.h) with the view's first element as its view_base: no view
  // is created for buffers seen before. UNIMPLEMENTED when a buffer is
  // larger than one view or the cache is full (then use Bind).
  absl::StatusOr<std::vector<BoundDispatch>> BindCopied(const gpu::DispatchPlan& plan,
                                                        const SlotBuffers& buffers,
                                                        ViewCache& views);
  // Whether a plan of `dispatches` dispatches fits in the rings now.
  bool CanBind(size_t dispatches) const;

  // Creates the tables of an arena buffer of `bytes` bytes (at most
  // kMaxViewTexels R32 texels). Thread-safe with respect to itself.
  absl::StatusOr<ArenaTables> CreateArenaTables(ID3D12Resource* buffer,
                                                uint64_t bytes);
  // The same over a buffer per position: t0, t1, t2, u0, u1 (null: a null
  // descriptor), each of `bytes` (a multiple of 16, at most kMaxViewTexels
  // R32 texels; INVALID_ARGUMENT otherwise).
  absl::StatusOr<ArenaTables> CreateTables(const std::array<ID3D12Resource*, 5>& buffers,
                                           const std::array<uint64_t, 5>& bytes);
  // Gives an arena's table descriptors back for a later arena (the arena's
  // buffer is going away). Thread-safe with respect to CreateArenaTables.
  void ReleaseArenaTables(const ArenaTables& tables);
  // Binds `plan` over an arena: every view refers to the arena, and each
  // dispatch's view_base (set by the caller: the slot's range offset in
  // texels plus the view's first element) tells the kernel where its
  // tensors start. Creates no descriptor: only constant blocks are written.
  // UNIMPLEMENTED when a view's format is outside the tables (the caller
  // then binds per-request views with Bind); RESOURCE_EXHAUSTED when the
  // constant ring is full.
  absl::StatusOr<std::vector<BoundDispatch>> BindArena(
      const gpu::DispatchPlan& plan, const ArenaTables& tables);

  // Typed views created so far (Bind: one per used slot of each dispatch,
  // a null SRV or UAV once per format; arenas: 13 each).
  uint64_t views_created() const;

  // Sets the descriptor heap and root signature; once per command list,
  // before the first Record().
  void SetState(ID3D12GraphicsCommandList* list) const;
  // Records `dispatches`. `*current_pso` skips redundant SetPipelineState
  // calls across consecutive plans (start with nullptr per list).
  static void Record(ID3D12GraphicsCommandList* list,
                     absl::Span<const BoundDispatch> dispatches,
                     ID3D12PipelineState** current_pso);

  void Retire(uint64_t fence);
  void Reclaim(uint64_t completed_fence);

 private:
  DispatchBinder(ID3D12Device* device, PipelineCache* pipelines,
                 DispatchBinderOptions options);
  // A plan checked against the ABI limits and the buffers: each dispatch's
  // pipeline and, per slot, the descriptor to copy into the ring (ptr 0:
  // none, the binder creates the slot's view itself).
  struct CheckedPlan {
    std::vector<ID3D12PipelineState*> psos;
    std::vector<std::array<D3D12_CPU_DESCRIPTOR_HANDLE, kDescriptorsPerDispatch>> sources;
  };
  using SourceFn = absl::FunctionRef<absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE>(
      const gpu::View& view, bool uav)>;
  // Allocates nothing from the rings.
  absl::StatusOr<CheckedPlan> Check(const gpu::DispatchPlan& plan, const SlotBuffers& buffers,
                                    SourceFn source);
  // Writes `d`'s constant block (args, then view bases) into ring block
  // `block` and returns its GPU address.
  D3D12_GPU_VIRTUAL_ADDRESS WriteConstants(uint64_t block, const gpu::Dispatch& d);
  // The cached null view for an unused slot of `format`, copied into the
  // ring like any view: on vkd3d 1.2 a null buffer view is a VkBufferView,
  // and creating one per unused slot of every dispatch (then destroying it
  // when the ring slot is overwritten) was most of a resident chain step's
  // host time, serialised across devices by NVIDIA's driver.
  absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE> NullView(gpu::ViewFormat format, bool uav);

  ID3D12Device* const device_;
  PipelineCache* const pipelines_;
  ComPtr<ID3D12DescriptorHeap> heap_;
  UINT descriptor_size_ = 0;
  D3D12_CPU_DESCRIPTOR_HANDLE cpu_start_ = {};
  D3D12_GPU_DESCRIPTOR_HANDLE gpu_start_ = {};
  ComPtr<ID3D12Resource> constants_;
  uint8_t* constants_mapped_ = nullptr;
  D3D12_GPU_VIRTUAL_ADDRESS constants_va_ = 0;
  FenceRing descriptor_ring_;
  FenceRing constant_ring_;
  const uint32_t persistent_capacity_;
  Mutex persistent_mu_;
  uint32_t persistent_used_ ABSL_GUARDED_BY(persistent_mu_) = 0;
  // First descriptors of released 10-descriptor blocks.
  std::vector<uint32_t> persistent_free_ ABSL_GUARDED_BY(persistent_mu_);
  std::atomic<uint64_t> views_created_{0};
  std::unique_ptr<ViewCache> null_views_;  // one per (format, SRV or UAV)
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_DISPATCH_BINDER_H_
