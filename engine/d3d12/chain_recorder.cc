#include "engine/d3d12/chain_recorder.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/time/clock.h"
#include "engine/core/host_resident.h"
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

absl::StatusOr<std::unique_ptr<ChainRecorder>> ChainRecorder::Create(
    GpuRunner* runner, ChainRecorderOptions options, BufferResolver resolve) {
  std::unique_ptr<ChainRecorder> r(new ChainRecorder(runner, std::move(resolve)));
  ID3D12Device* d = runner->d3d();
  absl::StatusOr<std::unique_ptr<DispatchBinder>> binder =
      DispatchBinder::Create(d, runner->pipelines(), options.binder);
  if (!binder.ok()) return binder.status();
  r->binder_ = std::move(*binder);
  absl::StatusOr<std::unique_ptr<ViewCache>> views = ViewCache::Create(d, options.cached_views);
  if (!views.ok()) return views.status();
  r->views_ = std::move(*views);
  if (const uint64_t cap = runner->pool()->memory_cap_bytes(); cap != 0) {
    r->max_free_temp_bytes_ = std::min(r->max_free_temp_bytes_, cap / 8);
  }
  return r;
}

ChainRecorder::~ChainRecorder() { DropTemps(0); }

void ChainRecorder::Run(ChainRequest request, ChainCallback done) {
  absl::Status s;
  if (request.cancelled && request.cancelled->load()) {
    s = absl::CancelledError("the call was cancelled before execution");
  } else if (runner_->lost()) {
    s = DeviceLostError("the GPU device is lost");
  }
  if (s.ok()) {
    // On success the chain is in flight and the runner's completion
    // thread answers it.
    s = Record(request, done);
    if (s.ok()) return;
  }
  done(s);
}

absl::Status ChainRecorder::Record(ChainRequest& request, ChainCallback& done) {
  BufferPool* pool = runner_->pool();
  const size_t n = request.steps.size();
  // Device temporaries go back to the recorder's own free list (their
  // views stay cached); upload and readback memory to the pool.
  std::vector<PoolBuffer*> temps;
  ChainTemps device_temps;
  struct GiveBack {
    ChainRecorder* self;
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
    // Nanoseconds per phase (ChainRecorderStats); Lap() charges the time
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
          absl::StatusOr<DeviceRange> r = resolve_(*src.resident);
          if (!r.ok()) return r.status();
          return Buf{r->resource, r->bytes};
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
        absl::StatusOr<DeviceRange> range = resolve_(*step.output);
        if (!range.ok()) return range.status();
        ID3D12Resource* const r = range->resource;
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

void ChainRecorder::Complete(InFlightChain& c, const absl::Status& s) {
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

absl::StatusOr<PoolBuffer*> ChainRecorder::AcquireTemp(uint64_t bytes) {
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

void ChainRecorder::KeepTemps(const std::vector<PoolBuffer*>& temps) {
  {
    MutexLock lock(&temps_mu_);
    for (PoolBuffer* b : temps) {
      free_temps_.emplace(b->size, b);
      free_temp_bytes_ += b->size;
    }
  }
  DropTemps(max_free_temp_bytes_);
}

void ChainRecorder::DropTemps(uint64_t keep_bytes) {
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

absl::StatusOr<std::vector<BoundDispatch>> ChainRecorder::BindStep(
    const gpu::DispatchPlan& plan, const SlotBuffers& slots) {
  absl::StatusOr<std::vector<BoundDispatch>> bound = binder_->BindCopied(plan, slots, *views_);
  // Views of their own in the ring: buffers larger than one view, or a
  // full cache.
  if (absl::IsUnimplemented(bound.status())) bound = binder_->Bind(plan, slots);
  return bound;
}

ChainRecorderStats ChainRecorder::stats() const {
  MutexLock lock(&stats_mu_);
  ChainRecorderStats s = stats_;
  s.views_created = binder_->views_created() + views_->views_created();
  return s;
}

}  // namespace dmls::d3d12
