// GpuRunner's private types and helpers, shared by its four source files:
// gpu_runner.cc (lifecycle, device loss, frames, staging in Prepare),
// gpu_runner_record.cc (placement, binding, recording and submission of a
// batch), gpu_runner_chain.cc (submission of resident work's lists) and
// gpu_runner_complete.cc (fence waits and delivery of results).
// Not part of the runtime's interface: include it from those files only.
#ifndef DMLSERVE_ENGINE_D3D12_GPU_RUNNER_INTERNAL_H_
#define DMLSERVE_ENGINE_D3D12_GPU_RUNNER_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "engine/d3d12/gpu_runner.h"

namespace dmls::d3d12 {
namespace runner_internal {

// Poisoned outputs are checked this far past their DWORD-rounded end.
inline constexpr uint64_t kGuardBytes = 256;
// Ranges inside arenas (and upload layouts) start at this alignment: a
// multiple of every view's texel size, so a range offset is a whole number
// of texels of any format.
inline constexpr uint64_t kRangeAlign = 256;
static_assert(kRangeAlign % 16 == 0, "ranges start at whole 16-byte texels");
inline constexpr uint8_t kPoison = 0xFF;

inline uint64_t RoundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

inline uint64_t Bytes(const std::optional<TensorDesc>& t) {
  return t ? t->total_tensor_size_in_bytes : 0;
}

// Level of each dispatch of a plan: the number of barriers at or before it.
// Dispatches of one level never depend on each other, so the levels of all
// requests of a batch are recorded together with one barrier between them.
inline std::vector<uint32_t> Levels(const gpu::DispatchPlan& plan) {
  std::vector<uint32_t> levels;
  uint32_t level = 0;
  for (const gpu::Dispatch& d : plan.dispatches) {
    if (d.barrier_before) ++level;
    levels.push_back(level);
  }
  return levels;
}

}  // namespace runner_internal

struct GpuRunner::Frame {
  ComPtr<ID3D12CommandAllocator> allocator;
  ComPtr<ID3D12GraphicsCommandList> list;
};

// One request's plan and staged upload (sched::JobState). The upload memory
// is given back when the job is destroyed: at once if it never ran, at its
// command list's fence value otherwise.
struct GpuRunner::Job : sched::JobState {
  GpuRunner* runner = nullptr;
  gpu::DispatchPlan plan;
  bool in_place = false;
  bool dedicated = false;  // too large for an arena
  uint64_t in_bytes = 0;
  uint64_t scale_bytes = 0;
  uint64_t bias_bytes = 0;
  uint64_t result_bytes = 0;    // bytes handed back
  uint64_t readback_bytes = 0;  // bytes copied back (result + guard)
  uint64_t guard_begin = 0;     // poison check range [guard_begin, readback_bytes)
  uint64_t out_alloc = 0;       // output buffer bytes
  // Upload layout: input | scale | bias | output poison.
  ArenaRange upload;
  PoolBuffer* upload_buffer = nullptr;
  uint64_t in_at = 0, scale_at = 0, bias_at = 0, poison_at = 0;
  uint64_t in_upload = 0;
  bool poison_output = false;
  uint64_t retire_fence = 0;

  ~Job() override {
    if (upload) runner->upload_arenas_->Free(upload, retire_fence);
    if (upload_buffer) runner->pool_->Release(upload_buffer, retire_fence);
  }
  ID3D12Resource* upload_resource() const {
    return upload ? upload.resource() : upload_buffer->resource.get();
  }
  uint64_t upload_base() const { return upload ? upload.offset : 0; }
  uint8_t* upload_mapped() const {
    return upload ? upload.mapped() : upload_buffer->mapped;
  }
};

// Readback memory shared by the completions of one placement; given back
// when the last of them has copied its output out.
struct Readback {
  ArenaSet* arenas = nullptr;
  ArenaRange range;
  BufferPool* pool = nullptr;
  PoolBuffer* buffer = nullptr;
  ~Readback() {
    if (range) arenas->Free(range, 0);
    if (buffer) pool->Release(buffer, 0);
  }
  // The start of the readback memory (the range's own start).
  const uint8_t* data() const { return range ? range.mapped() : buffer->mapped; }
};

struct GpuRunner::Completion {
  sched::JobCallback done;  // the job's, with its timing (job.h)
  // Kept until the result is out (payloads emptied by Prepare): when the
  // device is lost first, the request is made whole again from `state`'s
  // upload copy and handed back (engine.h, on_device_lost).
  ExecuteRequest request;
  std::unique_ptr<sched::JobState> state;
  std::shared_ptr<Readback> readback;
  uint64_t offset = 0;  // of the result within the readback memory
  uint64_t result_bytes = 0;
  uint64_t guard_begin = 0;
  uint64_t readback_bytes = 0;
  // The execution it is part of (ExecuteTiming): alone unless coalesced.
  uint32_t execution_requests = 1;
  bool counts_execution = true;
};

struct GpuRunner::Recording {
  struct Copy {
    ID3D12Resource* src;
    uint64_t src_offset;
    ID3D12Resource* dst;
    uint64_t dst_offset;
    uint64_t bytes;
  };
  std::vector<Copy> uploads;
  std::vector<std::vector<BoundDispatch>> levels;
  std::vector<ID3D12Resource*> read_resources;   // read by kernels only
  std::vector<ID3D12Resource*> write_resources;  // written by kernels
  std::vector<Copy> readbacks;
  std::vector<ArenaRange> device_ranges;      // retire with the fence
  std::vector<PoolBuffer*> device_buffers;    // retire with the fence
  std::vector<Completion> completions;
  uint64_t dispatches = 0;
  uint64_t coalesced_groups = 0;
  uint64_t coalesced_requests = 0;
  uint64_t dedicated = 0;

  bool empty() const { return completions.empty(); }
  // Moves `job`'s callback, request and state into a completion whose
  // result is the job's result_bytes at `offset` of `readback`, with the
  // poison guard [guard_begin, readback_bytes) after that offset.
  void AddCompletion(sched::Job& job, std::shared_ptr<Readback> readback,
                     uint64_t offset, uint64_t guard_begin,
                     uint64_t readback_bytes) {
    // Built in place (Run reserves the vector): a Completion carries a
    // whole request, and moving it again per request cost the dispatch
    // thread.
    Completion& c = completions.emplace_back();
    c.result_bytes = static_cast<const Job&>(*job.state).result_bytes;
    c.done = std::move(job.done);
    c.request = std::move(job.request);
    c.state = std::move(job.state);
    c.readback = std::move(readback);
    c.offset = offset;
    c.guard_begin = guard_begin;
    c.readback_bytes = readback_bytes;
  }
  void AddUpload(const Copy& c) {
    if (c.bytes == 0) return;
    if (!uploads.empty()) {
      Copy& last = uploads.back();
      if (last.src == c.src && last.dst == c.dst &&
          last.src_offset + last.bytes == c.src_offset &&
          last.dst_offset + last.bytes == c.dst_offset) {
        last.bytes += c.bytes;  // adjacent in both: one copy
        return;
      }
    }
    uploads.push_back(c);
  }
  static void AddUnique(std::vector<ID3D12Resource*>& v, ID3D12Resource* r) {
    if (std::find(v.begin(), v.end(), r) == v.end()) v.push_back(r);
  }
  void AddDispatches(const gpu::DispatchPlan& plan,
                     std::vector<BoundDispatch> bound) {
    const std::vector<uint32_t> level = runner_internal::Levels(plan);
    for (size_t i = 0; i < bound.size(); ++i) {
      if (levels.size() <= level[i]) levels.resize(level[i] + 1);
      bound[i].barrier_before.clear();  // barriers go between levels
      levels[level[i]].push_back(std::move(bound[i]));
    }
    dispatches += bound.size();
  }
};

struct GpuRunner::InFlight {
  uint64_t fence_value = 0;
  absl::Time submitted;
  Frame* frame = nullptr;
  std::vector<Completion> completions;
  // Resident work's list (PlaceList): called, when set, instead of
  // completions.
  absl::AnyInvocable<void(absl::Status)> chain_done;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_GPU_RUNNER_INTERNAL_H_
