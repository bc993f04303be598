#include "engine/d3d12/resident_executor.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <future>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/core/host_resident.h"
#include "engine/d3d12/chain_temps.h"
#include "engine/d3d12/state_tracker.h"

namespace dmls::d3d12 {
namespace {

uint64_t RoundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
// Buffer ranges start at this alignment (a multiple of every texel size).
constexpr uint64_t kAlign = 256;

uint64_t Bytes(const std::optional<TensorDesc>& t) {
  return t ? t->total_tensor_size_in_bytes : 0;
}

}  // namespace

// A resident buffer: one DEFAULT pool buffer, given back to the pool when
// the last holder lets go (no GPU work can be using it then: the executor
// holds a reference for as long as its own work runs).
class ResidentExecutor::DeviceBuffer : public ResidentBuffer {
 public:
  DeviceBuffer(ResidentExecutor* owner, Engine* engine, PoolBuffer* buffer,
               uint64_t size, std::string device)
      : ResidentBuffer(engine, size, std::move(device)), owner_(owner), buffer_(buffer) {}
  ~DeviceBuffer() override {
    {
      MutexLock lock(&owner_->stats_mu_);
      --owner_->stats_.buffers;
      owner_->stats_.buffer_bytes -= buffer_->size;
    }
    owner_->views_->Forget(buffer_->resource.get());
    owner_->runner_->pool()->Release(buffer_, 0);
  }
  ID3D12Resource* resource() const { return buffer_->resource.get(); }
  uint64_t capacity() const { return buffer_->size; }

 private:
  ResidentExecutor* const owner_;
  PoolBuffer* const buffer_;
};

ID3D12Resource* ResidentExecutor::ResourceOf(const ResidentBuffer& buffer) {
  auto* d = dynamic_cast<const DeviceBuffer*>(&buffer);
  return d ? d->resource() : nullptr;
}

absl::StatusOr<std::unique_ptr<ResidentExecutor>> ResidentExecutor::Create(
    GpuRunner* runner, Engine* engine, ResidentExecutorOptions options,
    std::shared_ptr<spdlog::logger> logger) {
  std::unique_ptr<ResidentExecutor> e(
      new ResidentExecutor(runner, engine, options, std::move(logger)));
  if (absl::Status s = e->Init(); !s.ok()) return s;
  return e;
}

ResidentExecutor::ResidentExecutor(GpuRunner* runner, Engine* engine,
                                   ResidentExecutorOptions options,
                                   std::shared_ptr<spdlog::logger> logger)
    : runner_(runner), engine_(engine), options_(options), log_(std::move(logger)) {}

absl::Status ResidentExecutor::Init() {
  ID3D12Device* d = runner_->d3d();
  absl::StatusOr<std::unique_ptr<DispatchBinder>> binder =
      DispatchBinder::Create(d, runner_->pipelines(), options_.binder);
  if (!binder.ok()) return binder.status();
  binder_ = std::move(*binder);
  absl::StatusOr<std::unique_ptr<ViewCache>> views = ViewCache::Create(d, options_.cached_views);
  if (!views.ok()) return views.status();
  views_ = std::move(*views);
  // Staging stays a small part of a small cap (4 x staging_bytes in all).
  staging_bytes_ = options_.staging_bytes;
  if (const uint64_t cap = runner_->pool()->memory_cap_bytes(); cap != 0) {
    staging_bytes_ = std::max<uint64_t>(64 << 10, std::min(staging_bytes_, cap / 32));
  }
  if (const uint64_t cap = runner_->pool()->memory_cap_bytes(); cap != 0) {
    max_free_temp_bytes_ = std::min(max_free_temp_bytes_, cap / 8);
  }
  worker_ = std::thread([this] { WorkerLoop(); });
  return absl::OkStatus();
}

ResidentExecutor::~ResidentExecutor() {
  Shutdown();
  DropTemps(0);
  if (upload_) runner_->pool()->Release(upload_, 0);
  if (readback_) runner_->pool()->Release(readback_, 0);
}

void ResidentExecutor::Shutdown() {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.SignalAll();
  if (worker_.joinable()) worker_.join();
  // Chains in flight on the runner's queue call back into the executor.
  runner_->Drain();
}

bool ResidentExecutor::Post(absl::AnyInvocable<void()> task) {
  {
    MutexLock lock(&mu_);
    if (stopping_) return false;
    tasks_.push_back(std::move(task));
  }
  cv_.Signal();
  return true;
}

void ResidentExecutor::WorkerLoop() {
  for (;;) {
    absl::AnyInvocable<void()> task;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && tasks_.empty()) cv_.Wait(&mu_);
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

absl::Status ResidentExecutor::DeviceStatus() const {
  if (runner_->lost()) return DeviceLostError("the GPU device is lost");
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ResidentExecutor::PlaceCopy(ID3D12Resource* dst, uint64_t dst_offset,
                                                     ID3D12Resource* src, uint64_t src_offset,
                                                     uint64_t bytes, bool to_device) {
  return runner_->PlaceList(
      [&](ID3D12GraphicsCommandList* list) {
        // The staging side stays in its heap's state; the device side moves.
        StateTracker st(list);
        if (to_device) {
          st.To(dst, D3D12_RESOURCE_STATE_COPY_DEST);
        } else {
          st.To(src, D3D12_RESOURCE_STATE_COPY_SOURCE);
        }
        st.Flush();
        list->CopyBufferRegion(dst, dst_offset, src, src_offset, bytes);
        return absl::OkStatus();
      },
      nullptr);
}

absl::Status ResidentExecutor::Upload(ID3D12Resource* dst, uint64_t offset,
                                      const char* bytes, uint64_t size, bool zero) {
  const uint64_t half = staging_bytes_;
  if (upload_ == nullptr) {
    absl::StatusOr<PoolBuffer*> b = runner_->pool()->Acquire(HeapKind::kUpload, 2 * half);
    if (!b.ok()) return b.status();
    upload_ = *b;
  }
  if (zero) {
    // Zeros from both halves; nothing will overwrite them while zeroing.
    for (uint64_t v : half_fence_) {
      if (absl::Status s = runner_->WaitFence(v); !s.ok()) return s;
    }
    std::memset(upload_->mapped, 0, 2 * half);
  }
  uint64_t last = 0;
  for (uint64_t at = 0, i = 0; at < size; ++i) {
    const uint64_t n = std::min(half, size - at);
    const int h = zero ? 0 : static_cast<int>(i % 2);
    if (!zero) {
      if (absl::Status s = runner_->WaitFence(half_fence_[h]); !s.ok()) return s;
      std::memcpy(upload_->mapped + h * half, bytes + at, n);
    }
    absl::StatusOr<uint64_t> v =
        PlaceCopy(dst, offset + at, upload_->resource.get(), h * half, n, true);
    if (!v.ok()) return v.status();
    half_fence_[h] = last = *v;
    at += n;
  }
  return runner_->WaitFence(last);
}

absl::Status ResidentExecutor::Download(ID3D12Resource* src, uint64_t offset,
                                        uint64_t length, std::string& out) {
  const uint64_t half = staging_bytes_;
  if (readback_ == nullptr) {
    absl::StatusOr<PoolBuffer*> b = runner_->pool()->Acquire(HeapKind::kReadback, 2 * half);
    if (!b.ok()) return b.status();
    readback_ = *b;
  }
  out.resize(length);
  // Copy piece i+1 on the GPU while the CPU copies piece i out.
  auto start = [&](uint64_t at, int h) -> absl::StatusOr<uint64_t> {
    return PlaceCopy(readback_->resource.get(), h * half, src, offset + at,
                     std::min(half, length - at), false);
  };
  if (length == 0) return absl::OkStatus();
  absl::StatusOr<uint64_t> pending = start(0, 0);
  for (uint64_t at = 0, i = 0; at < length; ++i) {
    if (!pending.ok()) return pending.status();
    const uint64_t value = *pending;
    const uint64_t n = std::min(half, length - at);
    const int h = static_cast<int>(i % 2);
    if (absl::Status s = runner_->WaitFence(value); !s.ok()) return s;
    if (at + n < length) pending = start(at + n, 1 - h);
    std::memcpy(out.data() + at, readback_->mapped + h * half, n);
    at += n;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<ResidentBuffer>> ResidentExecutor::Allocate(uint64_t bytes) {
  if (absl::Status s = DeviceStatus(); !s.ok()) return s;
  absl::StatusOr<PoolBuffer*> b =
      runner_->pool()->Acquire(HeapKind::kDefault, RoundUp(std::max<uint64_t>(bytes, 1), kAlign));
  if (!b.ok()) return b.status();
  {
    MutexLock lock(&stats_mu_);
    ++stats_.buffers;
    stats_.buffer_bytes += (*b)->size;
  }
  auto buffer = std::make_shared<DeviceBuffer>(this, engine_, *b, bytes,
                                               runner_->device_info().name);
  // Pool buffers are reused: clear before anyone can read it.
  std::promise<absl::Status> cleared;
  std::future<absl::Status> result = cleared.get_future();
  if (!Post([this, buffer, &cleared] {
        cleared.set_value(Upload(buffer->resource(), 0, nullptr, buffer->capacity(), true));
      })) {
    return absl::UnavailableError("the GPU engine is shutting down");
  }
  if (absl::Status s = result.get(); !s.ok()) return s;
  return std::shared_ptr<ResidentBuffer>(std::move(buffer));
}

void ResidentExecutor::Write(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                             std::string bytes, StatusCallback done) {
  ID3D12Resource* r = buffer ? ResourceOf(*buffer) : nullptr;
  if (r == nullptr) return done(absl::InternalError("not a resident buffer of this GPU"));
  if (absl::Status s = CheckResidentRange(buffer->size(), offset, bytes.size()); !s.ok()) {
    return done(s);
  }
  auto task = std::make_shared<StatusCallback>(std::move(done));
  if (!Post([this, buffer, r, offset, bytes = std::move(bytes), task]() mutable {
        absl::Status s = DeviceStatus();
        if (s.ok()) s = Upload(r, offset, bytes.data(), bytes.size(), false);
        if (s.ok()) {
          MutexLock lock(&stats_mu_);
          ++stats_.writes;
          stats_.bytes_written += bytes.size();
        }
        (*task)(s);
      })) {
    (*task)(absl::UnavailableError("the GPU engine is shutting down"));
  }
}

void ResidentExecutor::Read(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                            uint64_t length, BytesCallback done) {
  ID3D12Resource* r = buffer ? ResourceOf(*buffer) : nullptr;
  if (r == nullptr) return done(absl::InternalError("not a resident buffer of this GPU"));
  if (absl::Status s = CheckResidentRange(buffer->size(), offset, length); !s.ok()) {
    return done(s);
  }
  auto task = std::make_shared<BytesCallback>(std::move(done));
  if (!Post([this, buffer, r, offset, length, task] {
        std::string out;
        absl::Status s = DeviceStatus();
        if (s.ok()) s = Download(r, offset, length, out);
        if (!s.ok()) return (*task)(s);
        {
          MutexLock lock(&stats_mu_);
          ++stats_.reads;
          stats_.bytes_read += length;
        }
        (*task)(std::move(out));
      })) {
    (*task)(absl::UnavailableError("the GPU engine is shutting down"));
  }
}

absl::StatusOr<std::unique_ptr<ChainTicket>> ResidentExecutor::ReserveChain() {
  auto ticket = std::make_unique<ChainTicket>(
      [this](ChainRequest r, ChainCallback done) {
        absl::Status s;
        if (r.cancelled && r.cancelled->load()) {
          s = absl::CancelledError("the call was cancelled before execution");
        } else {
          s = DeviceStatus();
        }
        if (s.ok()) {
          // On success the chain is in flight and the runner's completion
          // thread answers it.
          s = RecordChain(r, done);
          if (s.ok()) return;
        }
        done(s);
      });
  if (!Post([place = ticket->place()] { place->Reach(); })) {
    return absl::UnavailableError("the GPU engine is shutting down");
  }
  return ticket;
}

void ResidentExecutor::RunChain(ChainRequest request, ChainCallback done) {
  absl::StatusOr<std::unique_ptr<ChainTicket>> ticket = ReserveChain();
  if (!ticket.ok()) return done(ticket.status());
  (*ticket)->Run(std::move(request), std::move(done));
}

absl::Status ResidentExecutor::RecordChain(ChainRequest& request, ChainCallback& done) {
  BufferPool* pool = runner_->pool();
  const size_t n = request.steps.size();
  // Device temporaries go back to the executor's own free list (their
  // views stay cached); upload and readback memory to the pool.
  std::vector<PoolBuffer*> temps;
  ChainTemps device_temps;
  struct GiveBack {
    ResidentExecutor* self;
    std::vector<PoolBuffer*>* temps;
    ChainTemps* device_temps;
    ~GiveBack() {
      for (PoolBuffer* b : *temps) self->runner_->pool()->Release(b, 0);
      self->KeepTemps(device_temps->all());
    }
  } give_back{this, &temps, &device_temps};
  auto temp = [&](HeapKind kind, uint64_t bytes) -> absl::StatusOr<PoolBuffer*> {
    if (kind == HeapKind::kDefault) {
      return device_temps.Get(bytes, [this](uint64_t b) { return AcquireTemp(b); });
    }
    absl::StatusOr<PoolBuffer*> b = pool->Acquire(kind, std::max<uint64_t>(bytes, 1));
    if (b.ok()) temps.push_back(*b);
    return b;
  };
  struct Buf {
    ID3D12Resource* resource = nullptr;
    uint64_t bytes = 0;           // usable
    PoolBuffer* temp = nullptr;  // this chain's temporary, if it is one
  };
  auto temp_buf = [](PoolBuffer* b) { return Buf{b->resource.get(), b->size, b}; };

  // Where each step reads a step's output: the last reader of each.
  std::vector<size_t> last_reader(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (const ChainSource* s : {&request.steps[i].input, &request.steps[i].scale,
                                 &request.steps[i].bias}) {
      if (s->kind == ChainSource::Kind::kStep) {
        last_reader[s->step] = std::max(last_reader[s->step], i);
      }
    }
  }

  // Inline bytes: one upload buffer for all of them.
  uint64_t upload_bytes = 0, readback_bytes = 0;
  for (const ChainStep& s : request.steps) {
    for (const ChainSource* src : {&s.input, &s.scale, &s.bias}) {
      if (src->kind == ChainSource::Kind::kInline) upload_bytes += RoundUp(src->bytes.size(), kAlign);
    }
    if (s.return_output) readback_bytes += RoundUp(StepOutputBytes(s), kAlign);
  }
  PoolBuffer* upload = nullptr;
  PoolBuffer* readback = nullptr;
  if (upload_bytes) {
    absl::StatusOr<PoolBuffer*> b = temp(HeapKind::kUpload, upload_bytes);
    if (!b.ok()) return b.status();
    upload = *b;
  }
  if (readback_bytes) {
    absl::StatusOr<PoolBuffer*> b = temp(HeapKind::kReadback, readback_bytes);
    if (!b.ok()) return b.status();
    readback = *b;
  }

  // Ring descriptors of chains whose lists completed are free again.
  binder_->Reclaim(runner_->completed_fence());
  // What must live until the chain's fence completes: filled at the end of
  // a recording, owned with the runner's completion callback.
  auto c = std::make_shared<InFlightChain>();
  absl::Time started, recorded;
  uint64_t phase_ns[4] = {};
  std::vector<uint64_t> readback_at(n, 0);
  // Records into a frame of the runner's (which may wait for one to come
  // free; recording is timed from the open list).
  auto record = [&](ID3D12GraphicsCommandList* list) -> absl::Status {
    started = absl::Now();
    StateTracker st(list);
    binder_->SetState(list);
    std::vector<Buf> step_out(n);
    uint64_t upload_at = 0, rb_at = 0;
    ID3D12PipelineState* pso = nullptr;
    // Nanoseconds per phase (ResidentExecutorStats); Lap() charges the time
    // since the last lap to one of them.
    enum Phase { kPlan, kBind, kBarrier, kDispatch, kPhases };
    auto last_lap = std::chrono::steady_clock::now();
    auto lap = [&](Phase p) {
      const auto now = std::chrono::steady_clock::now();
      phase_ns[p] += std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_lap).count();
      last_lap = now;
    };

    auto source = [&](ChainSource& src, uint64_t want) -> absl::StatusOr<Buf> {
      switch (src.kind) {
        case ChainSource::Kind::kNone:
          return Buf{};
        case ChainSource::Kind::kResident: {
          ID3D12Resource* r = ResourceOf(*src.resident);
          if (r == nullptr) return absl::InternalError("a resident tensor of another engine");
          return Buf{r, static_cast<const DeviceBuffer&>(*src.resident).capacity()};
        }
        case ChainSource::Kind::kStep:
          return step_out[src.step];
        case ChainSource::Kind::kInline: {
          absl::StatusOr<PoolBuffer*> b = temp(HeapKind::kDefault, RoundUp(want, 16));
          if (!b.ok()) return b.status();
          std::memcpy(upload->mapped + upload_at, src.bytes.data(), src.bytes.size());
          st.To((*b)->resource.get(), D3D12_RESOURCE_STATE_COPY_DEST);
          st.Flush();
          list->CopyBufferRegion((*b)->resource.get(), 0, upload->resource.get(), upload_at,
                                 src.bytes.size());
          upload_at += RoundUp(src.bytes.size(), kAlign);
          std::string().swap(src.bytes);
          return temp_buf(*b);
        }
      }
      return absl::InternalError("unknown chain source");
    };

    // A step like the one before it (a chain of the same operator) reuses
    // its plan.
    absl::StatusOr<gpu::DispatchPlan> plan = absl::UnknownError("not planned");
    const ChainStep* planned = nullptr;
    for (size_t i = 0; i < n; ++i) {
      ChainStep& step = request.steps[i];
      last_lap = std::chrono::steady_clock::now();
      if (planned == nullptr || planned->in_place != step.in_place || planned->op != step.op) {
        plan = runner_->planner()(step.op, step.in_place);
        if (!plan.ok()) return plan.status();
        planned = &step;
      }
      lap(kPlan);
      absl::StatusOr<Buf> in = source(step.input, Bytes(step.op.input));
      if (!in.ok()) return in.status();
      absl::StatusOr<Buf> scale = source(step.scale, Bytes(step.op.scale));
      if (!scale.ok()) return scale.status();
      absl::StatusOr<Buf> bias = source(step.bias, Bytes(step.op.bias));
      if (!bias.ok()) return bias.status();
      const std::array<Buf, 3> read = {*in, *scale, *bias};
      const uint64_t out_bytes = StepOutputBytes(step);
      Buf out;
      if (step.in_place) {
        out = *in;
        // An earlier step's output that a later step still reads must not
        // change under it: work on a copy.
        if (step.input.kind == ChainSource::Kind::kStep && last_reader[step.input.step] > i) {
          absl::StatusOr<PoolBuffer*> b = temp(HeapKind::kDefault, RoundUp(out_bytes, 16));
          if (!b.ok()) return b.status();
          st.To(in->resource, D3D12_RESOURCE_STATE_COPY_SOURCE);
          st.To((*b)->resource.get(), D3D12_RESOURCE_STATE_COPY_DEST);
          st.Flush();
          list->CopyBufferRegion((*b)->resource.get(), 0, in->resource, 0,
                                 Bytes(step.op.input));
          out = temp_buf(*b);
          in = out;
        }
      } else {
        absl::StatusOr<PoolBuffer*> b = temp(HeapKind::kDefault, RoundUp(out_bytes, 16));
        if (!b.ok()) return b.status();
        out = temp_buf(*b);
      }
      Buf scratch;
      if (plan->scratch_bytes) {
        absl::StatusOr<PoolBuffer*> b = temp(HeapKind::kDefault, plan->scratch_bytes);
        if (!b.ok()) return b.status();
        scratch = temp_buf(*b);
      }
      SlotBuffers slots;
      slots.Set(gpu::BufferSlot::kInput, in->resource, in->bytes);
      slots.Set(gpu::BufferSlot::kOutput, out.resource, out.bytes);
      if (scale->resource) slots.Set(gpu::BufferSlot::kScale, scale->resource, scale->bytes);
      if (bias->resource) slots.Set(gpu::BufferSlot::kBias, bias->resource, bias->bytes);
      if (scratch.resource) slots.Set(gpu::BufferSlot::kScratch, scratch.resource, scratch.bytes);
      lap(kPlan);  // sources and temporaries
      absl::StatusOr<std::vector<BoundDispatch>> bound = BindStep(*plan, slots);
      if (!bound.ok()) return bound.status();
      lap(kBind);
      // Reads as shader resources, writes as UAVs; a step after another
      // waits for its UAV writes.
      for (const Buf* b : {&*in, &*scale, &*bias}) {
        if (b->resource && b->resource != out.resource) {
          st.To(b->resource, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
        }
      }
      st.To(out.resource, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
      if (scratch.resource) st.To(scratch.resource, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
      if (i > 0) st.Uav(nullptr);
      st.Flush();
      lap(kBarrier);
      DispatchBinder::Record(list, *bound, &pso);
      lap(kDispatch);
      step_out[i] = out;
      if (step.output) {
        ID3D12Resource* r = ResourceOf(*step.output);
        if (r == nullptr) return absl::InternalError("a resident tensor of another engine");
        st.To(out.resource, D3D12_RESOURCE_STATE_COPY_SOURCE);
        st.To(r, D3D12_RESOURCE_STATE_COPY_DEST);
        st.Flush();
        list->CopyBufferRegion(r, 0, out.resource, 0, std::min(out_bytes, step.output->size()));
      }
      if (step.return_output) {
        st.To(out.resource, D3D12_RESOURCE_STATE_COPY_SOURCE);
        st.Flush();
        list->CopyBufferRegion(readback->resource.get(), rb_at, out.resource, 0, out_bytes);
        readback_at[i] = rb_at;
        rb_at += RoundUp(out_bytes, kAlign);
      }
      // What no later step reads is free for the later steps (the barriers
      // before their writes order them after this step's reads).
      const std::array<const ChainSource*, 3> sources = {&step.input, &step.scale, &step.bias};
      for (size_t k = 0; k < sources.size(); ++k) {
        const ChainSource& src = *sources[k];
        const bool last_read = src.kind == ChainSource::Kind::kInline ||
                               (src.kind == ChainSource::Kind::kStep && last_reader[src.step] == i);
        if (last_read && read[k].resource != out.resource) device_temps.Retire(read[k].temp);
      }
      device_temps.Retire(scratch.temp);
      if (last_reader[i] == 0) device_temps.Retire(out.temp);
    }
    recorded = absl::Now();
    c->submitted = recorded;
    // The chain's buffers stay alive (and its temporaries out of reuse)
    // until its work is done.
    c->steps = n;
    c->readback = readback;
    for (size_t i = 0; i < n; ++i) {
      if (request.steps[i].return_output) {
        c->returned.push_back({i, readback_at[i], StepOutputBytes(request.steps[i])});
      }
    }
    c->request = std::move(request);
    c->done = std::move(done);
    c->temps = std::exchange(temps, {});
    c->device_temps = std::exchange(device_temps.all(), {});
    return absl::OkStatus();
  };  // record

  absl::StatusOr<uint64_t> value = runner_->PlaceList(
      record, [this, c](absl::Status s) { Complete(*c, s); });
  if (!value.ok()) {
    // Nothing was submitted: the chain's memory is free again at once
    // (GiveBack), and the caller answers it.
    if (c->done) {
      temps = std::move(c->temps);
      device_temps.all() = std::move(c->device_temps);
      request = std::move(c->request);
      done = std::move(c->done);
    }
    return value.status();
  }
  binder_->Retire(*value);
  {
    MutexLock lock(&stats_mu_);
    stats_.chain_record_us += absl::ToInt64Microseconds(recorded - started);
    stats_.chain_plan_us += phase_ns[0] / 1000;
    stats_.chain_bind_us += phase_ns[1] / 1000;
    stats_.chain_barrier_us += phase_ns[2] / 1000;
    stats_.chain_dispatch_us += phase_ns[3] / 1000;
  }
  return absl::OkStatus();
}

void ResidentExecutor::Complete(InFlightChain& c, const absl::Status& s) {
  absl::StatusOr<ChainResult> result = absl::UnknownError("");
  if (!s.ok()) {
    result = s;
  } else {
    ChainResult r;
    r.outputs.resize(c.steps);
    for (const auto& [step, at, bytes] : c.returned) {
      r.outputs[step].assign(reinterpret_cast<const char*>(c.readback->mapped) + at, bytes);
    }
    result = std::move(r);
  }
  for (PoolBuffer* b : c.temps) runner_->pool()->Release(b, 0);
  KeepTemps(c.device_temps);
  {
    MutexLock lock(&stats_mu_);
    stats_.chain_wait_us += absl::ToInt64Microseconds(absl::Now() - c.submitted);
    if (result.ok()) {
      ++stats_.chains;
      stats_.chain_steps += c.steps;
    }
  }
  ChainCallback done = std::move(c.done);
  c.request = ChainRequest{};  // the chain's buffers go before its answer
  done(std::move(result));
}

absl::StatusOr<PoolBuffer*> ResidentExecutor::AcquireTemp(uint64_t bytes) {
  {
    MutexLock lock(&temps_mu_);
    if (PoolBuffer* b = TakeFitting(free_temps_, bytes)) {
      free_temp_bytes_ -= b->size;
      return b;
    }
  }
  absl::StatusOr<PoolBuffer*> b = runner_->pool()->Acquire(HeapKind::kDefault, bytes);
  if (absl::IsResourceExhausted(b.status())) {
    // Memory kept for reuse goes back first.
    DropTemps(0);
    b = runner_->pool()->Acquire(HeapKind::kDefault, bytes);
  }
  return b;
}

void ResidentExecutor::KeepTemps(const std::vector<PoolBuffer*>& temps) {
  {
    MutexLock lock(&temps_mu_);
    for (PoolBuffer* b : temps) {
      free_temps_.emplace(b->size, b);
      free_temp_bytes_ += b->size;
    }
  }
  DropTemps(max_free_temp_bytes_);
}

void ResidentExecutor::DropTemps(uint64_t keep_bytes) {
  std::vector<PoolBuffer*> dropped;
  {
    MutexLock lock(&temps_mu_);
    // The largest go first.
    while (free_temp_bytes_ > keep_bytes && !free_temps_.empty()) {
      auto last = std::prev(free_temps_.end());
      PoolBuffer* b = last->second;
      free_temps_.erase(last);
      free_temp_bytes_ -= b->size;
      views_->Forget(b->resource.get());
      dropped.push_back(b);
    }
  }
  for (PoolBuffer* b : dropped) runner_->pool()->Release(b, 0);
}

absl::StatusOr<std::vector<BoundDispatch>> ResidentExecutor::BindStep(
    const gpu::DispatchPlan& plan, const SlotBuffers& slots) {
  absl::StatusOr<std::vector<BoundDispatch>> bound = binder_->BindCopied(plan, slots, *views_);
  // Views of their own in the ring: buffers larger than one view, or a
  // full cache.
  if (absl::IsUnimplemented(bound.status())) bound = binder_->Bind(plan, slots);
  return bound;
}

ResidentExecutorStats ResidentExecutor::stats() const {
  MutexLock lock(&stats_mu_);
  ResidentExecutorStats s = stats_;
  s.views_created = binder_->views_created() + views_->views_created();
  return s;
}

}  // namespace dmls::d3d12
