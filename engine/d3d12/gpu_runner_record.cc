// GpuRunner, part 2: a batch placed, bound, recorded into one command list
// and submitted (gpu_runner_internal.h says how the files divide).
#include "engine/d3d12/gpu_runner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/d3d12/gpu_runner_internal.h"
#include "engine/d3d12/hresult.h"
#include "engine/d3d12/state_tracker.h"

namespace dmls::d3d12 {

using runner_internal::kRangeAlign;
using runner_internal::RoundUp;

bool GpuRunner::RecordGroup(std::vector<sched::Job>& group, Recording& rec) {
  Job& first = static_cast<Job&>(*group.front().state);
  std::vector<uint64_t> at(group.size());
  uint64_t span = 0;
  for (size_t i = 0; i < group.size(); ++i) {
    at[i] = span;
    span += RoundUp(static_cast<Job&>(*group[i].state).in_bytes, kRangeAlign);
  }
  const bool in_place = first.in_place;
  std::vector<uint64_t> sizes = {span};
  if (!in_place) sizes.push_back(span);
  absl::StatusOr<std::vector<ArenaRange>> dev = device_arenas_->Allocate(sizes);
  if (!dev.ok()) return false;
  const ArenaRange in = (*dev)[0];
  const ArenaRange out = in_place ? in : (*dev)[1];
  absl::StatusOr<ArenaRange> rb = readback_arenas_->Allocate(span);
  auto free_device = [&] {
    for (const ArenaRange& r : *dev) device_arenas_->Free(r, 0);
  };
  if (!rb.ok()) {
    free_device();
    return false;
  }
  absl::StatusOr<gpu::DispatchPlan> plan = options_.coalescer.span(first.plan, span / 16);
  if (!plan.ok()) {
    log_->error("coalescing: {}", plan.status().ToString());
    free_device();
    readback_arenas_->Free(*rb, 0);
    return false;
  }
  for (gpu::Dispatch& d : plan->dispatches) {
    d.view_base[0] = static_cast<uint32_t>(in.offset / 16 + d.srv[0].first_element);
    d.view_base[3] = static_cast<uint32_t>(out.offset / 16 + d.uav[0].first_element);
  }
  absl::StatusOr<std::vector<BoundDispatch>> bound =
      binder_->BindArena(*plan, in.arena->tables);
  if (!bound.ok()) {
    free_device();
    readback_arenas_->Free(*rb, 0);
    return false;
  }
  rec.AddDispatches(*plan, std::move(*bound));
  Recording::AddUnique(rec.write_resources, in.resource());
  auto readback = std::make_shared<Readback>();
  readback->arenas = readback_arenas_.get();
  readback->range = *rb;
  rec.readbacks.push_back({out.resource(), out.offset, rb->resource(), rb->offset, span});
  for (const ArenaRange& r : *dev) rec.device_ranges.push_back(r);
  for (size_t i = 0; i < group.size(); ++i) {
    Job& j = static_cast<Job&>(*group[i].state);
    rec.AddUpload({j.upload_resource(), j.upload_base() + j.in_at, in.resource(),
                   in.offset + at[i], j.in_bytes});
    rec.AddCompletion(group[i], readback, at[i], j.result_bytes, j.result_bytes);
    // One dispatch for the group: one execution of group.size() requests.
    rec.completions.back().execution_requests = static_cast<uint32_t>(group.size());
    rec.completions.back().counts_execution = i == 0;
  }
  ++rec.coalesced_groups;
  rec.coalesced_requests += group.size();
  return true;
}

absl::Status GpuRunner::PlaceJob(sched::Job& job, Recording& rec) {
  Job& j = static_cast<Job&>(*job.state);
  if (j.dedicated) return PlaceDedicated(job, rec);
  const std::vector<uint64_t> sizes = {
      j.in_place ? j.out_alloc : RoundUp(j.in_bytes, 16),
      j.in_place ? 0 : j.out_alloc, RoundUp(j.scale_bytes, 16),
      RoundUp(j.bias_bytes, 16), j.plan.scratch_bytes};
  absl::StatusOr<std::vector<ArenaRange>> dev = device_arenas_->Allocate(sizes);
  if (!dev.ok()) return dev.status();
  absl::StatusOr<ArenaRange> rb = readback_arenas_->Allocate(j.readback_bytes);
  auto free_device = [&] {
    for (const ArenaRange& r : *dev) device_arenas_->Free(r, 0);
  };
  if (!rb.ok()) {
    free_device();
    return rb.status();
  }
  const ArenaRange& in = (*dev)[0];
  const ArenaRange& out = j.in_place ? in : (*dev)[1];
  auto offset_of = [&](gpu::BufferSlot slot) -> uint64_t {
    switch (slot) {
      case gpu::BufferSlot::kInput: return in.offset;
      case gpu::BufferSlot::kOutput: return out.offset;
      case gpu::BufferSlot::kScale: return (*dev)[2].offset;
      case gpu::BufferSlot::kBias: return (*dev)[3].offset;
      case gpu::BufferSlot::kScratch: return (*dev)[4].offset;
      case gpu::BufferSlot::kNone: break;
    }
    return 0;
  };
  for (gpu::Dispatch& d : j.plan.dispatches) {
    for (size_t s = 0; s < 3; ++s) {
      const gpu::View& v = d.srv[s];
      if (v.buffer == gpu::BufferSlot::kNone) continue;
      d.view_base[s] = static_cast<uint32_t>(offset_of(v.buffer) / TexelBytes(v.format) +
                                             v.first_element);
    }
    for (size_t u = 0; u < 2; ++u) {
      const gpu::View& v = d.uav[u];
      if (v.buffer == gpu::BufferSlot::kNone) continue;
      d.view_base[3 + u] = static_cast<uint32_t>(offset_of(v.buffer) / TexelBytes(v.format) +
                                                 v.first_element);
    }
  }
  absl::StatusOr<std::vector<BoundDispatch>> bound =
      binder_->BindArena(j.plan, in.arena->tables);
  if (!bound.ok()) {
    free_device();
    readback_arenas_->Free(*rb, 0);
    if (absl::IsUnimplemented(bound.status())) return PlaceDedicated(job, rec);
    return bound.status();
  }
  rec.AddDispatches(j.plan, std::move(*bound));
  Recording::AddUnique(rec.write_resources, in.resource());
  ID3D12Resource* src = j.upload_resource();
  const uint64_t base = j.upload_base();
  rec.AddUpload({src, base + j.in_at, in.resource(), in.offset, j.in_upload});
  if (j.scale_bytes) {
    rec.AddUpload({src, base + j.scale_at, in.resource(), (*dev)[2].offset, j.scale_bytes});
  }
  if (j.bias_bytes) {
    rec.AddUpload({src, base + j.bias_at, in.resource(), (*dev)[3].offset, j.bias_bytes});
  }
  if (j.poison_output) {
    rec.AddUpload({src, base + j.poison_at, in.resource(), out.offset, j.out_alloc});
  }
  for (const ArenaRange& r : *dev) {
    if (r) rec.device_ranges.push_back(r);
  }
  auto readback = std::make_shared<Readback>();
  readback->arenas = readback_arenas_.get();
  readback->range = *rb;
  rec.readbacks.push_back(
      {out.resource(), out.offset, rb->resource(), rb->offset, j.readback_bytes});
  rec.AddCompletion(job, std::move(readback), 0, j.guard_begin, j.readback_bytes);
  return absl::OkStatus();
}

absl::Status GpuRunner::PlaceDedicated(sched::Job& job, Recording& rec) {
  Job& j = static_cast<Job&>(*job.state);
  std::vector<PoolBuffer*> taken;
  absl::Status status;
  auto get = [&](HeapKind kind, uint64_t bytes) -> PoolBuffer* {
    if (!status.ok() || bytes == 0) return nullptr;
    absl::StatusOr<PoolBuffer*> b = pool_->Acquire(kind, bytes);
    if (!b.ok()) {
      status = b.status();
      return nullptr;
    }
    taken.push_back(*b);
    return *b;
  };
  PoolBuffer* input = get(HeapKind::kDefault, j.in_place ? j.out_alloc : RoundUp(j.in_bytes, 16));
  PoolBuffer* output = j.in_place ? input : get(HeapKind::kDefault, j.out_alloc);
  PoolBuffer* scale = get(HeapKind::kDefault, RoundUp(j.scale_bytes, 16));
  PoolBuffer* bias = get(HeapKind::kDefault, RoundUp(j.bias_bytes, 16));
  PoolBuffer* scratch = get(HeapKind::kDefault, j.plan.scratch_bytes);
  PoolBuffer* readback = get(HeapKind::kReadback, j.readback_bytes);
  auto give_back = [&] {
    for (PoolBuffer* b : taken) pool_->Release(b, 0);
    taken.clear();
  };
  if (absl::IsResourceExhausted(status) &&
      device_arenas_->ReleaseIdle() + readback_arenas_->ReleaseIdle() +
              upload_arenas_->ReleaseIdle() > 0) {
    // Idle arenas gave memory back under the cap: try once more.
    give_back();
    status = absl::OkStatus();
    return PlaceDedicated(job, rec);
  }
  if (!status.ok()) {
    give_back();
    return status;
  }
  SlotBuffers slots;
  slots.Set(gpu::BufferSlot::kInput, input->resource.get(), input->size);
  slots.Set(gpu::BufferSlot::kOutput, output->resource.get(), output->size);
  if (scale) slots.Set(gpu::BufferSlot::kScale, scale->resource.get(), scale->size);
  if (bias) slots.Set(gpu::BufferSlot::kBias, bias->resource.get(), bias->size);
  if (scratch) slots.Set(gpu::BufferSlot::kScratch, scratch->resource.get(), scratch->size);
  for (gpu::Dispatch& d : j.plan.dispatches) d.view_base = {};
  absl::StatusOr<std::vector<BoundDispatch>> bound = binder_->Bind(j.plan, slots);
  if (!bound.ok()) {
    give_back();
    return bound.status();
  }
  rec.AddDispatches(j.plan, std::move(*bound));
  ID3D12Resource* src = j.upload_resource();
  const uint64_t base = j.upload_base();
  rec.AddUpload({src, base + j.in_at, input->resource.get(), 0, j.in_upload});
  if (scale) rec.AddUpload({src, base + j.scale_at, scale->resource.get(), 0, j.scale_bytes});
  if (bias) rec.AddUpload({src, base + j.bias_at, bias->resource.get(), 0, j.bias_bytes});
  if (j.poison_output) {
    rec.AddUpload({src, base + j.poison_at, output->resource.get(), 0, j.out_alloc});
  }
  if (!j.in_place) Recording::AddUnique(rec.read_resources, input->resource.get());
  if (scale) Recording::AddUnique(rec.read_resources, scale->resource.get());
  if (bias) Recording::AddUnique(rec.read_resources, bias->resource.get());
  Recording::AddUnique(rec.write_resources, output->resource.get());
  if (scratch) Recording::AddUnique(rec.write_resources, scratch->resource.get());
  for (PoolBuffer* b : taken) {
    if (b != readback) rec.device_buffers.push_back(b);
  }
  auto rb = std::make_shared<Readback>();
  rb->pool = pool_.get();
  rb->buffer = readback;
  rec.readbacks.push_back(
      {output->resource.get(), 0, readback->resource.get(), 0, j.readback_bytes});
  rec.AddCompletion(job, std::move(rb), 0, j.guard_begin, j.readback_bytes);
  ++rec.dedicated;
  return absl::OkStatus();
}

void GpuRunner::RecordJob(sched::Job& job, Recording& rec, Frame*& frame) {
  absl::Status s = PlaceJob(job, rec);
  if (absl::IsResourceExhausted(s) && AnyInFlight()) {
    // Memory or ring space may be held by work in flight: let it finish.
    {
      MutexLock lock(&stats_mu_);
      ++stats_.drains;
    }
    WaitIdle();
    Reclaim();
    s = PlaceJob(job, rec);
  }
  if (absl::IsResourceExhausted(s) && !rec.empty()) {
    // Held by this very batch: submit what it has and start another.
    {
      MutexLock lock(&stats_mu_);
      ++stats_.drains;
    }
    Submit(frame, rec);
    rec = Recording{};
    frame = AcquireFrame();
    WaitIdle();
    Reclaim();
    s = PlaceJob(job, rec);
  }
  if (!s.ok()) {
    job.state.reset();
    job.done(s);
  }
}

void GpuRunner::Run(sched::Batch batch) {
  if (lost()) {
    for (std::vector<sched::Job>& group : batch.groups) {
      for (sched::Job& job : group) FailLost(job.request, job.state, job.done);
    }
    return;
  }
  Reclaim();
  Frame* frame = AcquireFrame();
  Recording rec;
  rec.completions.reserve(batch.size());
  for (std::vector<sched::Job>& group : batch.groups) {
    if (group.size() > 1 && !group.front().key.empty() &&
        RecordGroup(group, rec)) {
      continue;
    }
    for (sched::Job& job : group) RecordJob(job, rec, frame);
  }
  if (rec.empty()) {
    ReleaseFrame(frame);
    return;
  }
  Submit(frame, rec);
}

void GpuRunner::FailRecording(Frame* frame, Recording& rec,
                              const absl::Status& status) {
  log_->error("d3d12 engine: command list of {} requests failed: {}",
              rec.completions.size(), status.ToString());
  if (const HRESULT removed = device_->d3d()->GetDeviceRemovedReason();
      FAILED(removed)) {
    MarkLost(HrToStatus(removed, "device removed"));
  }
  const uint64_t fence = fence_->last_signaled();
  binder_->Retire(fence);
  for (const ArenaRange& r : rec.device_ranges) device_arenas_->Free(r, fence);
  for (PoolBuffer* b : rec.device_buffers) pool_->Release(b, fence);
  for (Completion& c : rec.completions) {
    c.readback.reset();
    if (lost()) {
      FailLost(c.request, c.state, c.done);
      continue;
    }
    c.state.reset();
    c.done(absl::InternalError(
        absl::StrCat("the GPU engine could not record the batch: ", status.message())));
  }
  rec = Recording{};
  ReleaseFrame(frame);
}

void GpuRunner::Submit(Frame* frame, Recording& rec) {
  HRESULT hr = frame->allocator->Reset();
  if (SUCCEEDED(hr)) hr = frame->list->Reset(frame->allocator.get(), nullptr);
  if (FAILED(hr)) return FailRecording(frame, rec, HrToStatus(hr, "command list Reset"));
  ID3D12GraphicsCommandList* list = frame->list.get();

  // Buffers decay to COMMON at the end of every ExecuteCommandLists, so each
  // list starts from COMMON and tracks states itself. Arenas hold inputs and
  // outputs in one resource: kernels read them through SRVs while the
  // resource is in UNORDERED_ACCESS (vkd3d derives barriers from states;
  // docs/WINDOWS.md notes what the Windows debug layer would say).
  StateTracker st(list);
  for (const Recording::Copy& c : rec.uploads) st.To(c.dst, D3D12_RESOURCE_STATE_COPY_DEST);
  st.Flush();
  for (const Recording::Copy& c : rec.uploads) {
    list->CopyBufferRegion(c.dst, c.dst_offset, c.src, c.src_offset, c.bytes);
  }
  for (ID3D12Resource* r : rec.read_resources) {
    st.To(r, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
  }
  for (ID3D12Resource* r : rec.write_resources) {
    st.To(r, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
  }
  st.Flush();
  binder_->SetState(list);
  ID3D12PipelineState* pso = nullptr;
  for (size_t level = 0; level < rec.levels.size(); ++level) {
    if (level > 0) {
      for (ID3D12Resource* r : rec.write_resources) st.Uav(r);
      st.Flush();
    }
    DispatchBinder::Record(list, rec.levels[level], &pso);
  }
  for (const Recording::Copy& c : rec.readbacks) {
    st.To(c.src, D3D12_RESOURCE_STATE_COPY_SOURCE);
  }
  st.Flush();
  for (const Recording::Copy& c : rec.readbacks) {
    list->CopyBufferRegion(c.dst, c.dst_offset, c.src, c.src_offset, c.bytes);
  }
  hr = list->Close();
  if (FAILED(hr)) return FailRecording(frame, rec, HrToStatus(hr, "command list Close"));
  ID3D12CommandList* lists[] = {list};
  queue_->ExecuteCommandLists(1, lists);
  absl::StatusOr<uint64_t> value = fence_->Signal(queue_.get());
  if (!value.ok()) return FailRecording(frame, rec, value.status());

  binder_->Retire(*value);
  for (const ArenaRange& r : rec.device_ranges) device_arenas_->Free(r, *value);
  for (PoolBuffer* b : rec.device_buffers) pool_->Release(b, *value);
  for (Completion& c : rec.completions) {
    static_cast<Job&>(*c.state).retire_fence = *value;
  }
  {
    MutexLock lock(&stats_mu_);
    ++stats_.batches;
    stats_.requests += rec.completions.size();
    stats_.dispatches += rec.dispatches;
    stats_.largest_batch = std::max<uint64_t>(stats_.largest_batch, rec.completions.size());
    stats_.coalesced_groups += rec.coalesced_groups;
    stats_.coalesced_requests += rec.coalesced_requests;
    stats_.dedicated_requests += rec.dedicated;
  }
  {
    MutexLock lock(&flight_mu_);
    in_flight_.push_back({*value, absl::Now(), frame, std::move(rec.completions), {}});
    ++batches_in_flight_;
  }
  flight_cv_.SignalAll();
  rec = Recording{};
}

}  // namespace dmls::d3d12
