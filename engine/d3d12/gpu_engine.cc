#include "engine/d3d12/gpu_engine.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/d3d12/hresult.h"
#include "spdlog/spdlog.h"

namespace dmls::d3d12 {
namespace {

// Poisoned outputs are checked this far past their DWORD-rounded end.
constexpr uint64_t kGuardBytes = 256;
constexpr uint64_t kUploadAlign = 256;
constexpr uint8_t kPoison = 0xFF;

uint64_t RoundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

struct GpuEngine::Frame {
  ComPtr<ID3D12CommandAllocator> allocator;
  ComPtr<ID3D12GraphicsCommandList> list;
};

struct GpuEngine::Pending {
  ExecuteRequest request;
  ExecuteCallback done;
};

struct GpuEngine::Prepared {
  struct Copy {
    ID3D12Resource* src;
    uint64_t src_offset;
    ID3D12Resource* dst;
    uint64_t dst_offset;
    uint64_t bytes;
  };
  ExecuteCallback done;
  std::vector<Copy> uploads;
  std::vector<ID3D12Resource*> srv_buffers;  // read by kernels
  std::vector<ID3D12Resource*> uav_buffers;  // written by kernels
  std::vector<BoundDispatch> dispatches;
  ID3D12Resource* output = nullptr;
  PoolBuffer* readback = nullptr;
  uint64_t result_bytes = 0;    // bytes handed back
  uint64_t readback_bytes = 0;  // bytes copied back (result + guard)
  uint64_t guard_begin = 0;     // poison check range [guard_begin, readback_bytes)
  // Upload and DEFAULT buffers; they retire with the batch's fence value.
  std::vector<PoolBuffer*> buffers;
};

struct GpuEngine::InFlight {
  uint64_t fence_value = 0;
  Frame* frame = nullptr;
  std::vector<Prepared> requests;
};

GpuEngine::GpuEngine(GpuEngineOptions options) : options_(std::move(options)) {
  log_ = options_.logger ? options_.logger : spdlog::default_logger();
}

absl::StatusOr<std::unique_ptr<GpuEngine>> GpuEngine::Create(
    GpuEngineOptions options) {
  if (!options.kernel_source || !options.planner) {
    return absl::InvalidArgumentError(
        "GpuEngineOptions needs a kernel_source and a planner");
  }
  std::unique_ptr<GpuEngine> engine(new GpuEngine(std::move(options)));
  if (absl::Status s = engine->Init(); !s.ok()) return s;
  return engine;
}

absl::Status GpuEngine::Init() {
  absl::StatusOr<std::unique_ptr<Device>> device = Device::Create(options_.device);
  if (!device.ok()) return device.status();
  device_ = std::move(*device);
  ID3D12Device* d = device_->d3d();

  D3D12_COMMAND_QUEUE_DESC qd = {};
  qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
  DMLS_RETURN_IF_FAILED(
      d->CreateCommandQueue(&qd, DMLS_IID_PPV(ID3D12CommandQueue, queue_.Put())),
      "CreateCommandQueue");
  absl::StatusOr<std::unique_ptr<Fence>> fence = Fence::Create(d);
  if (!fence.ok()) return fence.status();
  fence_ = std::move(*fence);

  BufferPoolOptions po;
  po.memory_cap_bytes = options_.memory_cap_bytes;
  if (po.memory_cap_bytes == 0) po.memory_cap_bytes = device_->adapter().memory_bytes / 2;
  pool_ = std::make_unique<BufferPool>(d, po);

  absl::StatusOr<std::unique_ptr<PipelineCache>> pipelines =
      PipelineCache::Create(d, options_.kernel_source);
  if (!pipelines.ok()) return pipelines.status();
  pipelines_ = std::move(*pipelines);
  absl::StatusOr<std::unique_ptr<DispatchBinder>> binder =
      DispatchBinder::Create(d, pipelines_.get(), options_.binder);
  if (!binder.ok()) return binder.status();
  binder_ = std::move(*binder);

  for (uint32_t i = 0; i < std::max<uint32_t>(1, options_.frames_in_flight); ++i) {
    auto f = std::make_unique<Frame>();
    DMLS_RETURN_IF_FAILED(
        d->CreateCommandAllocator(
            D3D12_COMMAND_LIST_TYPE_DIRECT,
            DMLS_IID_PPV(ID3D12CommandAllocator, f->allocator.Put())),
        "CreateCommandAllocator");
    DMLS_RETURN_IF_FAILED(
        d->CreateCommandList(0, D3D12_COMMAND_LIST_TYPE_DIRECT,
                             f->allocator.get(), nullptr,
                             DMLS_IID_PPV(ID3D12GraphicsCommandList, f->list.Put())),
        "CreateCommandList");
    DMLS_RETURN_IF_FAILED(f->list->Close(), "ID3D12GraphicsCommandList::Close");
    free_frames_.push_back(f.get());
    frames_.push_back(std::move(f));
  }

  const AdapterInfo& a = device_->adapter();
  log_->info("d3d12 engine: adapter #{} '{}' ({}), {} MiB device memory, "
             "memory cap {} MiB, backend {}",
             a.index, a.name, a.kind, a.memory_bytes >> 20,
             pool_->memory_cap_bytes() >> 20, device_->device_info().backend);

  submission_thread_ = std::thread([this] { SubmissionLoop(); });
  completion_thread_ = std::thread([this] { CompletionLoop(); });
  return absl::OkStatus();
}

GpuEngine::~GpuEngine() { Shutdown(); }

void GpuEngine::Shutdown() {
  std::lock_guard<std::mutex> once(shutdown_mu_);
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (submission_thread_.joinable()) submission_thread_.join();
  {
    std::lock_guard<std::mutex> lock(flight_mu_);
    completion_stopping_ = true;
  }
  flight_cv_.notify_all();
  if (completion_thread_.joinable()) completion_thread_.join();
}

void GpuEngine::Execute(ExecuteRequest request, ExecuteCallback done) {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (!stopping_) {
      pending_.push_back({std::move(request), std::move(done)});
      queue_cv_.notify_one();
      return;
    }
  }
  done(absl::UnavailableError("the GPU engine is shut down"));
}

GpuEngineStats GpuEngine::stats() const {
  GpuEngineStats s;
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    s = stats_;
  }
  // Buffers of completed batches count as free, not as retired.
  pool_->Reclaim(fence_->completed());
  s.pool = pool_->stats();
  s.pipelines = pipelines_->size();
  return s;
}

void GpuEngine::Reclaim() {
  const uint64_t completed = fence_->completed();
  pool_->Reclaim(completed);
  binder_->Reclaim(completed);
}

void GpuEngine::WaitIdle() {
  std::unique_lock<std::mutex> lock(flight_mu_);
  flight_cv_.wait(lock, [&] { return batches_in_flight_ == 0; });
}

absl::StatusOr<GpuEngine::Prepared> GpuEngine::Prepare(
    const ExecuteRequest& r) {
  const OperatorDesc& op = r.op;
  if (!op.input || !op.output) {
    return absl::InvalidArgumentError("operator has no input or output tensor");
  }
  const uint64_t in_bytes = op.input->total_tensor_size_in_bytes;
  const uint64_t out_bytes = op.output->total_tensor_size_in_bytes;
  const uint64_t scale_bytes = op.scale ? op.scale->total_tensor_size_in_bytes : 0;
  const uint64_t bias_bytes = op.bias ? op.bias->total_tensor_size_in_bytes : 0;
  if (r.input.size() != in_bytes || r.scale.size() != scale_bytes ||
      r.bias.size() != bias_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "payload sizes (", r.input.size(), ", ", r.scale.size(), ", ",
        r.bias.size(), ") differ from the tensors' TotalTensorSizeInBytes (",
        in_bytes, ", ", scale_bytes, ", ", bias_bytes, ")"));
  }
  absl::StatusOr<gpu::DispatchPlan> plan = options_.planner(op, r.in_place);
  if (!plan.ok()) return plan.status();

  const bool poison = options_.poison_outputs;
  Prepared p;
  p.result_bytes = r.in_place ? std::max(in_bytes, out_bytes) : out_bytes;
  p.guard_begin = RoundUp(p.result_bytes, 4);
  p.readback_bytes = poison ? p.guard_begin + kGuardBytes : p.result_bytes;
  // Views may round a tensor up to whole 16-byte texels.
  const uint64_t out_alloc = RoundUp(p.readback_bytes, 16);

  // Upload layout: input | scale | bias | output poison, 256-byte aligned.
  const bool poison_output = poison && !r.in_place;
  const uint64_t in_upload = r.in_place && poison ? out_alloc : in_bytes;
  uint64_t upload_size = 0;
  const uint64_t in_at = upload_size;
  upload_size = RoundUp(upload_size + in_upload, kUploadAlign);
  const uint64_t scale_at = upload_size;
  upload_size = RoundUp(upload_size + scale_bytes, kUploadAlign);
  const uint64_t bias_at = upload_size;
  upload_size = RoundUp(upload_size + bias_bytes, kUploadAlign);
  const uint64_t poison_at = upload_size;
  if (poison_output) upload_size += out_alloc;

  // Acquire everything; on any failure give back what was taken.
  std::vector<PoolBuffer*> taken;
  auto give_back = [&] {
    for (PoolBuffer* b : taken) pool_->Release(b, 0);
  };
  SlotBuffers slots;
  PoolBuffer* upload = nullptr;
  PoolBuffer* input = nullptr;
  PoolBuffer* output = nullptr;
  PoolBuffer* readback = nullptr;
  PoolBuffer* scale = nullptr;
  PoolBuffer* bias = nullptr;
  PoolBuffer* scratch = nullptr;
  absl::Status status;
  auto get = [&](PoolBuffer** out, HeapKind kind, uint64_t bytes) {
    if (!status.ok()) return;
    absl::StatusOr<PoolBuffer*> b = pool_->Acquire(kind, bytes);
    if (!b.ok()) {
      status = b.status();
      return;
    }
    taken.push_back(*b);
    *out = *b;
  };
  get(&upload, HeapKind::kUpload, upload_size);
  get(&input, HeapKind::kDefault, r.in_place ? out_alloc : RoundUp(in_bytes, 16));
  if (r.in_place) {
    output = input;
  } else {
    get(&output, HeapKind::kDefault, out_alloc);
  }
  get(&readback, HeapKind::kReadback, p.readback_bytes);
  if (scale_bytes > 0) get(&scale, HeapKind::kDefault, RoundUp(scale_bytes, 16));
  if (bias_bytes > 0) get(&bias, HeapKind::kDefault, RoundUp(bias_bytes, 16));
  if (plan->scratch_bytes > 0) get(&scratch, HeapKind::kDefault, plan->scratch_bytes);
  if (!status.ok()) {
    give_back();
    return status;
  }
  slots.Set(gpu::BufferSlot::kInput, input->resource.get(), input->size);
  slots.Set(gpu::BufferSlot::kOutput, output->resource.get(), output->size);
  if (scale) slots.Set(gpu::BufferSlot::kScale, scale->resource.get(), scale->size);
  if (bias) slots.Set(gpu::BufferSlot::kBias, bias->resource.get(), bias->size);
  if (scratch) slots.Set(gpu::BufferSlot::kScratch, scratch->resource.get(), scratch->size);

  absl::StatusOr<std::vector<BoundDispatch>> bound = binder_->Bind(*plan, slots);
  if (!bound.ok()) {
    give_back();
    return bound.status();
  }
  p.dispatches = std::move(*bound);

  // Fill the upload buffer.
  uint8_t* up = upload->mapped;
  std::memcpy(up + in_at, r.input.data(), in_bytes);
  if (in_upload > in_bytes) std::memset(up + in_at + in_bytes, kPoison, in_upload - in_bytes);
  if (scale_bytes) std::memcpy(up + scale_at, r.scale.data(), scale_bytes);
  if (bias_bytes) std::memcpy(up + bias_at, r.bias.data(), bias_bytes);
  if (poison_output) std::memset(up + poison_at, kPoison, out_alloc);

  ID3D12Resource* src = upload->resource.get();
  p.uploads.push_back({src, in_at, input->resource.get(), 0, in_upload});
  if (scale) p.uploads.push_back({src, scale_at, scale->resource.get(), 0, scale_bytes});
  if (bias) p.uploads.push_back({src, bias_at, bias->resource.get(), 0, bias_bytes});
  if (poison_output) {
    p.uploads.push_back({src, poison_at, output->resource.get(), 0, out_alloc});
  }
  if (!r.in_place) p.srv_buffers.push_back(input->resource.get());
  if (scale) p.srv_buffers.push_back(scale->resource.get());
  if (bias) p.srv_buffers.push_back(bias->resource.get());
  // In-place: the one buffer is read through an SRV and written through a
  // UAV by the same dispatch (kernel_abi.h binds inputs as typed SRVs), so
  // it stays in UNORDERED_ACCESS. vkd3d uses states only to derive barriers,
  // and each thread reads its elements before writing them; Windows' debug
  // layer would flag the SRV, so a Windows build should bind in-place
  // inputs as UAVs (a planner variant) before enabling the debug layer.
  p.uav_buffers.push_back(output->resource.get());
  if (scratch) p.uav_buffers.push_back(scratch->resource.get());
  p.output = output->resource.get();
  p.readback = readback;
  for (PoolBuffer* b : taken) {
    if (b != readback) p.buffers.push_back(b);
  }
  return p;
}

void GpuEngine::RecordBatch(ID3D12GraphicsCommandList* list,
                            const std::vector<Prepared>& batch) {
  // Buffers decay to COMMON at the end of every ExecuteCommandLists, so each
  // batch starts from COMMON and tracks states itself.
  std::unordered_map<ID3D12Resource*, D3D12_RESOURCE_STATES> state;
  std::vector<D3D12_RESOURCE_BARRIER> barriers;
  auto transition = [&](ID3D12Resource* r, D3D12_RESOURCE_STATES to) {
    auto [it, inserted] = state.try_emplace(r, D3D12_RESOURCE_STATE_COMMON);
    if (it->second == to) return;
    D3D12_RESOURCE_BARRIER b = {};
    b.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
    b.Transition.pResource = r;
    b.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
    b.Transition.StateBefore = it->second;
    b.Transition.StateAfter = to;
    barriers.push_back(b);
    it->second = to;
  };
  auto flush = [&] {
    if (!barriers.empty()) {
      list->ResourceBarrier(static_cast<UINT>(barriers.size()), barriers.data());
      barriers.clear();
    }
  };

  for (const Prepared& p : batch) {
    for (const Prepared::Copy& c : p.uploads) transition(c.dst, D3D12_RESOURCE_STATE_COPY_DEST);
  }
  flush();
  for (const Prepared& p : batch) {
    for (const Prepared::Copy& c : p.uploads) {
      list->CopyBufferRegion(c.dst, c.dst_offset, c.src, c.src_offset, c.bytes);
    }
  }
  for (const Prepared& p : batch) {
    for (ID3D12Resource* r : p.srv_buffers) {
      transition(r, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
    }
    for (ID3D12Resource* r : p.uav_buffers) {
      transition(r, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
    }
  }
  flush();
  binder_->SetState(list);
  ID3D12PipelineState* pso = nullptr;
  for (const Prepared& p : batch) DispatchBinder::Record(list, p.dispatches, &pso);
  for (const Prepared& p : batch) transition(p.output, D3D12_RESOURCE_STATE_COPY_SOURCE);
  flush();
  for (const Prepared& p : batch) {
    list->CopyBufferRegion(p.readback->resource.get(), 0, p.output, 0,
                           p.readback_bytes);
  }
}

void GpuEngine::Submit(std::vector<Prepared>& batch) {
  if (batch.empty()) return;
  Frame* frame = nullptr;
  {
    std::unique_lock<std::mutex> lock(flight_mu_);
    flight_cv_.wait(lock, [&] { return !free_frames_.empty(); });
    frame = free_frames_.back();
    free_frames_.pop_back();
  }
  auto fail_all = [&](const absl::Status& s) {
    log_->error("d3d12 engine: batch of {} requests failed: {}", batch.size(),
                s.ToString());
    binder_->Retire(fence_->last_signaled());
    for (Prepared& p : batch) {
      for (PoolBuffer* b : p.buffers) pool_->Release(b, fence_->last_signaled());
      pool_->Release(p.readback, fence_->last_signaled());
      p.done(s);
    }
    batch.clear();
    std::lock_guard<std::mutex> lock(flight_mu_);
    free_frames_.push_back(frame);
    flight_cv_.notify_all();
  };

  HRESULT hr = frame->allocator->Reset();
  if (SUCCEEDED(hr)) hr = frame->list->Reset(frame->allocator.get(), nullptr);
  if (FAILED(hr)) return fail_all(HrToStatus(hr, "command list Reset"));
  RecordBatch(frame->list.get(), batch);
  hr = frame->list->Close();
  if (FAILED(hr)) return fail_all(HrToStatus(hr, "command list Close"));
  ID3D12CommandList* lists[] = {frame->list.get()};
  queue_->ExecuteCommandLists(1, lists);
  absl::StatusOr<uint64_t> value = fence_->Signal(queue_.get());
  if (!value.ok()) return fail_all(value.status());

  binder_->Retire(*value);
  uint64_t dispatches = 0;
  for (Prepared& p : batch) {
    for (PoolBuffer* b : p.buffers) pool_->Release(b, *value);
    p.buffers.clear();
    dispatches += p.dispatches.size();
  }
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.batches;
    stats_.requests += batch.size();
    stats_.dispatches += dispatches;
    stats_.largest_batch = std::max<uint64_t>(stats_.largest_batch, batch.size());
  }
  {
    std::lock_guard<std::mutex> lock(flight_mu_);
    in_flight_.push_back({*value, frame, std::move(batch)});
    ++batches_in_flight_;
  }
  flight_cv_.notify_all();
  batch.clear();
}

void GpuEngine::SubmissionLoop() {
  for (;;) {
    std::vector<Pending> work;
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping and drained
      const size_t limit = std::max<uint32_t>(1, options_.max_batch_requests);
      while (!pending_.empty() && work.size() < limit) {
        work.push_back(std::move(pending_.front()));
        pending_.pop_front();
      }
    }
    Reclaim();
    std::vector<Prepared> batch;
    for (Pending& w : work) {
      const ExecuteRequest& r = w.request;
      if (r.cancelled && r.cancelled->load()) {
        w.done(absl::CancelledError("request cancelled before it started"));
        continue;
      }
      if (absl::Now() > r.deadline) {
        w.done(absl::DeadlineExceededError("deadline passed before the request started"));
        continue;
      }
      absl::StatusOr<Prepared> p = Prepare(r);
      if (absl::IsResourceExhausted(p.status())) {
        // Memory or ring space may be held by work in flight: drain it and
        // try once more before giving up.
        bool busy = !batch.empty();
        {
          std::lock_guard<std::mutex> lock(flight_mu_);
          busy |= batches_in_flight_ > 0;
        }
        if (busy) {
          {
            std::lock_guard<std::mutex> lock(stats_mu_);
            ++stats_.drains;
          }
          Submit(batch);
          WaitIdle();
          Reclaim();
          p = Prepare(r);
        }
      }
      if (!p.ok()) {
        w.done(p.status());
        continue;
      }
      p->done = std::move(w.done);
      batch.push_back(std::move(*p));
    }
    Submit(batch);
  }
}

void GpuEngine::CompletionLoop() {
  for (;;) {
    InFlight b;
    {
      std::unique_lock<std::mutex> lock(flight_mu_);
      flight_cv_.wait(lock, [&] { return completion_stopping_ || !in_flight_.empty(); });
      if (in_flight_.empty()) return;
      b = std::move(in_flight_.front());
      in_flight_.pop_front();
    }
    const absl::Status waited = fence_->Wait(b.fence_value);
    for (Prepared& p : b.requests) {
      absl::StatusOr<ExecuteResult> result = absl::UnknownError("");
      if (!waited.ok()) {
        result = waited;
      } else {
        const uint8_t* data = p.readback->mapped;
        bool guard_ok = true;
        for (uint64_t i = p.guard_begin; i < p.readback_bytes; ++i) {
          guard_ok &= data[i] == kPoison;
        }
        if (!guard_ok) {
          result = absl::InternalError(
              "a kernel wrote past the end of its output buffer");
        } else {
          ExecuteResult r;
          r.output.assign(reinterpret_cast<const char*>(data), p.result_bytes);
          result = std::move(r);
        }
      }
      pool_->Release(p.readback, 0);
      p.done(std::move(result));
    }
    {
      std::lock_guard<std::mutex> lock(flight_mu_);
      free_frames_.push_back(b.frame);
      --batches_in_flight_;
    }
    flight_cv_.notify_all();
  }
}

}  // namespace dmls::d3d12
