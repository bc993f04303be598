#include "engine/d3d12/gpu_runner.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/time/clock.h"
#include "engine/d3d12/hresult.h"
#include "engine/d3d12/state_tracker.h"
#include "engine/sched/admission.h"
#include "spdlog/spdlog.h"

namespace dmls::d3d12 {
namespace {

// Poisoned outputs are checked this far past their DWORD-rounded end.
constexpr uint64_t kGuardBytes = 256;
// Ranges inside arenas (and upload layouts) start at this alignment: a
// multiple of every view's texel size, so a range offset is a whole number
// of texels of any format.
constexpr uint64_t kRangeAlign = 256;
static_assert(kRangeAlign % 16 == 0, "ranges start at whole 16-byte texels");
constexpr uint8_t kPoison = 0xFF;

uint64_t RoundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

uint64_t Bytes(const std::optional<TensorDesc>& t) {
  return t ? t->total_tensor_size_in_bytes : 0;
}

// Level of each dispatch of a plan: the number of barriers at or before it.
// Dispatches of one level never depend on each other, so the levels of all
// requests of a batch are recorded together with one barrier between them.
std::vector<uint32_t> Levels(const gpu::DispatchPlan& plan) {
  std::vector<uint32_t> levels;
  uint32_t level = 0;
  for (const gpu::Dispatch& d : plan.dispatches) {
    if (d.barrier_before) ++level;
    levels.push_back(level);
  }
  return levels;
}

}  // namespace

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
  ExecuteCallback done;
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
    Completion c;
    c.result_bytes = static_cast<const Job&>(*job.state).result_bytes;
    c.done = std::move(job.done);
    c.request = std::move(job.request);
    c.state = std::move(job.state);
    c.readback = std::move(readback);
    c.offset = offset;
    c.guard_begin = guard_begin;
    c.readback_bytes = readback_bytes;
    completions.push_back(std::move(c));
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
    const std::vector<uint32_t> level = Levels(plan);
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
};

GpuRunner::GpuRunner(GpuRunnerOptions options) : options_(std::move(options)) {
  log_ = options_.logger ? options_.logger : spdlog::default_logger();
}

absl::StatusOr<std::unique_ptr<GpuRunner>> GpuRunner::Create(
    GpuRunnerOptions options) {
  if (!options.kernel_source || !options.planner) {
    return absl::InvalidArgumentError(
        "GpuRunnerOptions needs a kernel_source and a planner");
  }
  std::unique_ptr<GpuRunner> runner(new GpuRunner(std::move(options)));
  if (absl::Status s = runner->Init(); !s.ok()) return s;
  return runner;
}

absl::Status GpuRunner::Init() {
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
  po.memory_cap_bytes =
      options_.memory_cap_bytes.value_or(device_->adapter().memory_bytes / 2);
  pool_ = std::make_unique<BufferPool>(d, po);

  absl::StatusOr<std::unique_ptr<PipelineCache>> pipelines =
      PipelineCache::Create(d, options_.kernel_source);
  if (!pipelines.ok()) return pipelines.status();
  pipelines_ = std::move(*pipelines);
  absl::StatusOr<std::unique_ptr<DispatchBinder>> binder =
      DispatchBinder::Create(d, pipelines_.get(), options_.binder);
  if (!binder.ok()) return binder.status();
  binder_ = std::move(*binder);

  // Arenas: at most one R32 view, at most an eighth of the cap (so a small
  // cap still leaves room for dedicated buffers), and a power of two (a
  // whole pool size class).
  uint64_t arena = std::min<uint64_t>(options_.arena_bytes, uint64_t{gpu::kMaxViewTexels} * 4);
  if (po.memory_cap_bytes != 0) arena = std::min(arena, po.memory_cap_bytes / 8);
  arena_bytes_ = BufferPool::kMinSize;
  while (arena_bytes_ * 2 <= arena) arena_bytes_ *= 2;
  DispatchBinder* b = binder_.get();
  device_arenas_ = std::make_unique<ArenaSet>(
      pool_.get(), HeapKind::kDefault, arena_bytes_, kRangeAlign,
      [b](ID3D12Resource* r, uint64_t bytes) { return b->CreateArenaTables(r, bytes); },
      [b](const ArenaTables& t) { b->ReleaseArenaTables(t); });
  upload_arenas_ = std::make_unique<ArenaSet>(pool_.get(), HeapKind::kUpload,
                                              arena_bytes_, kRangeAlign, nullptr);
  readback_arenas_ = std::make_unique<ArenaSet>(
      pool_.get(), HeapKind::kReadback, arena_bytes_, kRangeAlign, nullptr);

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
    {
      MutexLock lock(&flight_mu_);
      free_frames_.push_back(f.get());
    }
    frames_.push_back(std::move(f));
  }
  free_frame_count_ = frames_.size();
  if (options_.copy_threads > 0) {
    copy_pool_ = std::make_unique<sched::ThreadPool>(
        sched::ThreadPoolOptions{options_.copy_threads});
    chunk_pool_ = std::make_unique<sched::ThreadPool>(
        sched::ThreadPoolOptions{options_.copy_threads});
  }

  const AdapterInfo& a = device_->adapter();
  log_->info("d3d12 engine: adapter #{} '{}' ({}), {} MiB device memory, "
             "memory cap {} MiB, arenas of {} MiB, backend {}",
             a.index, a.name, a.kind, a.memory_bytes >> 20,
             pool_->memory_cap_bytes() >> 20, arena_bytes_ >> 20,
             device_->device_info().backend);
  completion_thread_ = std::thread([this] { CompletionLoop(); });
  return absl::OkStatus();
}

GpuRunner::~GpuRunner() { Shutdown(); }

void GpuRunner::Shutdown() {
  MutexLock once(&shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  WaitIdle();
  {
    MutexLock lock(&flight_mu_);
    completion_stopping_ = true;
  }
  flight_cv_.SignalAll();
  if (completion_thread_.joinable()) completion_thread_.join();
  if (copy_pool_) copy_pool_->Shutdown();
  if (chunk_pool_) chunk_pool_->Shutdown();
}

void GpuRunner::Copy(void* dst, const void* src, uint64_t bytes) {
  constexpr uint64_t kMinChunk = 2 << 20;
  if (!chunk_pool_ || bytes < options_.split_copy_bytes) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const uint64_t parts = std::min<uint64_t>(
      static_cast<uint64_t>(chunk_pool_->thread_count()) + 1, bytes / kMinChunk);
  const uint64_t chunk = (bytes / parts + 63) / 64 * 64;
  absl::BlockingCounter left(static_cast<int>(parts - 1));
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  for (uint64_t p = 1; p < parts; ++p) {
    const uint64_t at = p * chunk;
    const uint64_t n = std::min(chunk, bytes - std::min(bytes, at));
    if (!chunk_pool_->Schedule([d, s, at, n, &left] {
          if (n > 0) std::memcpy(d + at, s + at, n);
          left.DecrementCount();
        })) {
      if (n > 0) std::memcpy(d + at, s + at, n);
      left.DecrementCount();
    }
  }
  std::memcpy(d, s, std::min(chunk, bytes));
  left.Wait();
}

void GpuRunner::SetCapacityListener(std::function<void()> listener) {
  MutexLock lock(&listener_mu_);
  listener_ = std::move(listener);
}

// A lost device takes every batch at once (Run fails it), so that queued
// requests are handed back rather than waiting for frames that may never
// come free.
bool GpuRunner::CanAccept() { return lost() || free_frame_count_.load() > 0; }

void GpuRunner::FailDevice() {
  MarkLost(absl::UnavailableError("device removed (injected)"));
}

void GpuRunner::MarkLost(const absl::Status& cause) {
  {
    MutexLock lock(&lost_mu_);
    if (lost_.load()) return;
    const AdapterInfo& a = device_->adapter();
    lost_status_ = DeviceLostError(absl::StrCat(
        "the GPU engine on adapter #", a.index, " '", a.name,
        "' lost its device: ", cause.message()));
    lost_.store(true);
  }
  log_->error("d3d12 engine: {}; failing its work with UNAVAILABLE",
              std::string(lost_status().message()));
  // Wake the scheduler: it hands every queued request to Run, which fails
  // them at once.
  std::function<void()> listener;
  {
    MutexLock lock(&listener_mu_);
    listener = listener_;
  }
  if (listener) listener();
}

absl::Status GpuRunner::lost_status() const {
  MutexLock lock(&lost_mu_);
  return lost_status_;
}

void GpuRunner::FailLost(ExecuteRequest& request,
                         std::unique_ptr<sched::JobState>& state,
                         ExecuteCallback& done) {
  if (request.on_device_lost && state) {
    // Prepare moved the payloads into upload memory; copy them back (the
    // mapping stays valid: nothing is released while the runner lives).
    const Job& j = static_cast<const Job&>(*state);
    const char* up = reinterpret_cast<const char*>(j.upload_mapped());
    request.input.assign(up + j.in_at, j.in_bytes);
    request.scale.assign(up + j.scale_at, j.scale_bytes);
    request.bias.assign(up + j.bias_at, j.bias_bytes);
  }
  state.reset();
  if (request.on_device_lost) {
    {
      MutexLock lock(&stats_mu_);
      ++stats_.handed_back;
    }
    HandBackRequest(request);
  }
  done(lost_status());
}

void GpuRunner::Drain() {
  WaitIdle();
  // Outputs still being copied out on the pool finish before Drain returns.
  if (copy_pool_) {
    while (copy_pool_->pending() > 0) std::this_thread::yield();
  }
}

GpuRunnerStats GpuRunner::stats() const {
  GpuRunnerStats s;
  {
    MutexLock lock(&stats_mu_);
    s = stats_;
  }
  // Buffers and ranges of completed work count as free, not as retired,
  // though they are reclaimed only by the next Run (or, for readback
  // ranges, by the completion thread).
  const uint64_t completed = fence_->completed();
  s.pool = pool_->stats(completed);
  s.device_arenas = device_arenas_->stats(completed);
  s.upload_arenas = upload_arenas_->stats(completed);
  s.readback_arenas = readback_arenas_->stats();
  s.views_created = binder_->views_created();
  s.pipelines = pipelines_->size();
  s.fence_lost_events = fence_->lost_events();
  s.fence_kicks = fence_->kicks();
  s.stage_us = stage_us_.load();
  s.gpu_us = gpu_us_.load();
  s.copy_out_us = copy_out_us_.load();
  s.device_lost = lost();
  return s;
}

void GpuRunner::Reclaim() {
  const uint64_t completed = fence_->completed();
  pool_->Reclaim(completed);
  binder_->Reclaim(completed);
  device_arenas_->Reclaim(completed);
  upload_arenas_->Reclaim(completed);
}

bool GpuRunner::AnyInFlight() {
  MutexLock lock(&flight_mu_);
  return batches_in_flight_ > 0;
}

void GpuRunner::WaitIdle() {
  MutexLock lock(&flight_mu_);
  while (batches_in_flight_ != 0) flight_cv_.Wait(&flight_mu_);
}

GpuRunner::Frame* GpuRunner::AcquireFrame() {
  MutexLock lock(&flight_mu_);
  while (free_frames_.empty()) flight_cv_.Wait(&flight_mu_);
  Frame* f = free_frames_.back();
  free_frames_.pop_back();
  --free_frame_count_;
  return f;
}

void GpuRunner::ReleaseFrame(Frame* frame) {
  {
    MutexLock lock(&flight_mu_);
    free_frames_.push_back(frame);
    ++free_frame_count_;
  }
  flight_cv_.SignalAll();
  std::function<void()> listener;
  {
    MutexLock lock(&listener_mu_);
    listener = listener_;
  }
  if (listener) listener();
}

absl::StatusOr<sched::Prepared> GpuRunner::Prepare(ExecuteRequest& r) {
  if (lost()) {
    // Nothing staged yet: the request is still whole.
    if (r.on_device_lost) {
      MutexLock lock(&stats_mu_);
      ++stats_.handed_back;
    }
    HandBackRequest(r);
    return lost_status();
  }
  const OperatorDesc& op = r.op;
  if (!op.input || !op.output) {
    return absl::InternalError("a validated operator has no input or output tensor");
  }
  auto job = std::make_unique<Job>();
  job->runner = this;
  absl::StatusOr<gpu::DispatchPlan> plan = options_.planner(op, r.in_place);
  if (!plan.ok()) return plan.status();
  job->plan = std::move(*plan);

  const bool poison = options_.poison_outputs;
  const uint64_t in_bytes = Bytes(op.input);
  const uint64_t out_bytes = Bytes(op.output);
  job->in_place = r.in_place;
  job->in_bytes = in_bytes;
  job->scale_bytes = Bytes(op.scale);
  job->bias_bytes = Bytes(op.bias);
  job->result_bytes = r.in_place ? std::max(in_bytes, out_bytes) : out_bytes;
  job->guard_begin = RoundUp(job->result_bytes, 4);
  job->readback_bytes = poison ? job->guard_begin + kGuardBytes : job->result_bytes;
  // Views may round a tensor up to whole 16-byte texels.
  job->out_alloc = RoundUp(std::max<uint64_t>(job->readback_bytes, 1), 16);
  job->poison_output = poison && !r.in_place;
  job->in_upload = r.in_place && poison ? job->out_alloc : in_bytes;

  uint64_t upload_size = 0;
  job->in_at = upload_size;
  upload_size = RoundUp(upload_size + job->in_upload, kRangeAlign);
  job->scale_at = upload_size;
  upload_size = RoundUp(upload_size + job->scale_bytes, kRangeAlign);
  job->bias_at = upload_size;
  upload_size = RoundUp(upload_size + job->bias_bytes, kRangeAlign);
  job->poison_at = upload_size;
  if (job->poison_output) upload_size += job->out_alloc;
  upload_size = std::max<uint64_t>(upload_size, 1);

  const uint64_t device_bytes =
      (r.in_place ? job->out_alloc : RoundUp(in_bytes, 16) + job->out_alloc) +
      RoundUp(job->scale_bytes, kRangeAlign) + RoundUp(job->bias_bytes, kRangeAlign) +
      RoundUp(job->plan.scratch_bytes, kRangeAlign);
  const uint64_t half = arena_bytes_ / 2;
  job->dedicated = device_bytes > half || upload_size > half || job->readback_bytes > half;

  if (job->dedicated) {
    absl::StatusOr<PoolBuffer*> b = pool_->Acquire(HeapKind::kUpload, upload_size);
    if (absl::IsResourceExhausted(b.status()) && upload_arenas_->ReleaseIdle() > 0) {
      b = pool_->Acquire(HeapKind::kUpload, upload_size);
    }
    if (!b.ok()) return b.status();
    job->upload_buffer = *b;
  } else {
    absl::StatusOr<ArenaRange> range = upload_arenas_->Allocate(upload_size);
    if (!range.ok()) {
      // Staging memory may be held by finished work not yet reclaimed.
      upload_arenas_->Reclaim(fence_->completed());
      range = upload_arenas_->Allocate(upload_size);
    }
    if (!range.ok()) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "no GPU staging memory for ", upload_size, " bytes (memory cap ",
          pool_->memory_cap_bytes(), " bytes); retry later"));
    }
    job->upload = *range;
  }

  const absl::Time stage_start = absl::Now();
  uint8_t* up = job->upload_mapped();
  Copy(up + job->in_at, r.input.data(), in_bytes);
  if (job->in_upload > in_bytes) {
    std::memset(up + job->in_at + in_bytes, kPoison, job->in_upload - in_bytes);
  }
  if (job->scale_bytes) std::memcpy(up + job->scale_at, r.scale.data(), job->scale_bytes);
  if (job->bias_bytes) std::memcpy(up + job->bias_at, r.bias.data(), job->bias_bytes);
  if (job->poison_output) std::memset(up + job->poison_at, kPoison, job->out_alloc);
  stage_us_.fetch_add(static_cast<uint64_t>(
      absl::ToInt64Microseconds(absl::Now() - stage_start)));
  const uint64_t request_bytes = sched::RequestBytes(r);
  // The payloads live in upload memory now; the request need not keep them.
  std::string().swap(r.input);
  std::string().swap(r.scale);
  std::string().swap(r.bias);

  sched::Prepared p;
  const bool coalescable = options_.coalesce && options_.coalescer.key &&
                           options_.coalescer.span && !poison && !job->dedicated &&
                           in_bytes == out_bytes;
  if (coalescable) p.key = options_.coalescer.key(job->plan, r.in_place);
  p.bytes = request_bytes;
  p.state = std::move(job);
  return p;
}

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
    in_flight_.push_back({*value, absl::Now(), frame, std::move(rec.completions)});
    ++batches_in_flight_;
  }
  flight_cv_.SignalAll();
  rec = Recording{};
}

void GpuRunner::Complete(Completion& c) {
  const uint8_t* data = c.readback->data() + c.offset;
  bool guard_ok = true;
  for (uint64_t i = c.guard_begin; i < c.readback_bytes; ++i) {
    guard_ok &= data[i] == kPoison;
  }
  absl::StatusOr<ExecuteResult> result = absl::UnknownError("");
  if (!guard_ok) {
    result = absl::InternalError("a kernel wrote past the end of its output buffer");
  } else {
    const absl::Time start = absl::Now();
    ExecuteResult r;
    r.output.resize(c.result_bytes);
    Copy(r.output.data(), data, c.result_bytes);
    result = std::move(r);
    copy_out_us_.fetch_add(
        static_cast<uint64_t>(absl::ToInt64Microseconds(absl::Now() - start)));
  }
  c.readback.reset();
  c.done(std::move(result));
}

void GpuRunner::CompletionLoop() {
  for (;;) {
    InFlight b;
    {
      MutexLock lock(&flight_mu_);
      while (!completion_stopping_ && in_flight_.empty()) flight_cv_.Wait(&flight_mu_);
      if (in_flight_.empty()) return;
      b = std::move(in_flight_.front());
      in_flight_.pop_front();
    }
    const absl::Status waited = fence_->Wait(b.fence_value);
    gpu_us_.fetch_add(static_cast<uint64_t>(
        absl::ToInt64Microseconds(absl::Now() - b.submitted)));
    if (!waited.ok()) {
      MarkLost(waited);
    } else if (fence_->completed() == UINT64_MAX) {
      // What a removed device's fences complete with.
      MarkLost(absl::UnavailableError("device removed (fence at UINT64_MAX)"));
    }
    readback_arenas_->Reclaim(b.fence_value);
    // A device lost before this point may have left any of the batch's
    // outputs unwritten: none of them is trusted.
    const bool lost_now = lost();
    // Large outputs one by one on the copy pool; small ones in chunks, the
    // first chunk on this thread, so callbacks run in parallel.
    std::vector<Completion> small;
    for (Completion& c : b.completions) {
      if (lost_now) {
        c.readback.reset();
        FailLost(c.request, c.state, c.done);
        continue;
      }
      c.state.reset();  // the upload copy is done with
      c.request = ExecuteRequest{};
      if (copy_pool_ && c.result_bytes >= options_.parallel_copy_bytes) {
        auto task = std::make_shared<Completion>(std::move(c));
        if (!copy_pool_->Schedule([this, task] { Complete(*task); })) Complete(*task);
      } else {
        small.push_back(std::move(c));
      }
    }
    const size_t chunk = std::max<uint32_t>(1, options_.completion_chunk);
    for (size_t at = chunk; copy_pool_ && at < small.size(); at += chunk) {
      auto part = std::make_shared<std::vector<Completion>>();
      for (size_t i = at; i < std::min(small.size(), at + chunk); ++i) {
        part->push_back(std::move(small[i]));
      }
      if (!copy_pool_->Schedule([this, part] {
            for (Completion& c : *part) Complete(c);
          })) {
        for (Completion& c : *part) Complete(c);
      }
    }
    for (size_t i = 0; i < std::min(small.size(), copy_pool_ ? chunk : small.size()); ++i) {
      Complete(small[i]);
    }
    {
      MutexLock lock(&flight_mu_);
      --batches_in_flight_;
    }
    ReleaseFrame(b.frame);
  }
}

}  // namespace dmls::d3d12
