#include "engine/d3d12/gpu_runner.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/time/clock.h"
#include "engine/core/thread_name.h"
#include "engine/d3d12/gpu_runner_internal.h"
#include "engine/d3d12/objects.h"
#include "engine/sched/admission.h"
#include "spdlog/spdlog.h"

namespace dmls::d3d12 {

using runner_internal::Bytes;
using runner_internal::kGuardBytes;
using runner_internal::kPoison;
using runner_internal::kRangeAlign;
using runner_internal::RoundUp;

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

  if (absl::Status s = CreateDirectQueue(d, &queue_); !s.ok()) return s;
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
    if (absl::Status s = CreateClosedDirectList(d, &f->allocator, &f->list); !s.ok()) {
      return s;
    }
    {
      MutexLock lock(&flight_mu_);
      free_frames_.push_back(f.get());
    }
    frames_.push_back(std::move(f));
  }
  free_frame_count_ = frames_.size();
  if (options_.copy_threads > 0) {
    copy_pool_ = std::make_unique<sched::ThreadPool>(
        sched::ThreadPoolOptions{options_.copy_threads, "dmls-copy"});
    chunk_pool_ = std::make_unique<sched::ThreadPool>(
        sched::ThreadPoolOptions{options_.copy_threads, "dmls-chunk"});
  }

  const AdapterInfo& a = device_->adapter();
  log_->info("d3d12 engine: adapter #{} '{}' ({}), {} MiB device memory, "
             "memory cap {} MiB, arenas of {} MiB, backend {}",
             a.index, a.name, a.kind, a.memory_bytes >> 20,
             pool_->memory_cap_bytes() >> 20, arena_bytes_ >> 20,
             device_->device_info().backend);
  completion_thread_ = std::thread([this] {
    SetThreadName("dmls-complete");
    CompletionLoop();
  });
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

namespace {

// Copies bytes [at, at + n) of the concatenation of `pieces` to `dst`.
void CopySpan(uint8_t* dst, absl::Span<const std::string_view> pieces, uint64_t at,
              uint64_t n) {
  for (std::string_view piece : pieces) {
    if (n == 0) return;
    if (at >= piece.size()) {
      at -= piece.size();
      continue;
    }
    const uint64_t take = std::min<uint64_t>(n, piece.size() - at);
    std::memcpy(dst, piece.data() + at, take);
    dst += take;
    n -= take;
    at = 0;
  }
}

}  // namespace

void GpuRunner::Copy(void* dst, absl::Span<const std::string_view> pieces) {
  constexpr uint64_t kMinChunk = 2 << 20;
  uint64_t bytes = 0;
  for (std::string_view piece : pieces) bytes += piece.size();
  auto* d = static_cast<uint8_t*>(dst);
  if (!chunk_pool_ || bytes < options_.split_copy_bytes || bytes < 2 * kMinChunk) {
    CopySpan(d, pieces, 0, bytes);
    return;
  }
  const uint64_t parts = std::min<uint64_t>(
      static_cast<uint64_t>(chunk_pool_->thread_count()) + 1, bytes / kMinChunk);
  const uint64_t chunk = (bytes / parts + 63) / 64 * 64;
  absl::BlockingCounter left(static_cast<int>(parts - 1));
  for (uint64_t p = 1; p < parts; ++p) {
    const uint64_t at = p * chunk;
    const uint64_t n = std::min(chunk, bytes - std::min(bytes, at));
    if (!chunk_pool_->Schedule([d, pieces, at, n, &left] {
          CopySpan(d + at, pieces, at, n);
          left.DecrementCount();
        })) {
      CopySpan(d + at, pieces, at, n);
      left.DecrementCount();
    }
  }
  CopySpan(d, pieces, 0, std::min(chunk, bytes));
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
                         sched::JobCallback& done) {
  if (request.on_device_lost && state) {
    // Prepare moved the payloads into upload memory; copy them back (the
    // mapping stays valid: nothing is released while the runner lives).
    const Job& j = static_cast<const Job&>(*state);
    const char* up = reinterpret_cast<const char*>(j.upload_mapped());
    request.input = std::string(up + j.in_at, j.in_bytes);
    request.scale = std::string(up + j.scale_at, j.scale_bytes);
    request.bias = std::string(up + j.bias_at, j.bias_bytes);
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
  // Admission checked the payload sizes; the copies below write exactly
  // the payloads' bytes into ranges of these sizes.
  if (r.input.size() != in_bytes || r.scale.size() != job->scale_bytes ||
      r.bias.size() != job->bias_bytes) {
    return absl::InternalError("payload sizes do not match the operator's tensors");
  }
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
  // Straight from the received bytes (payload.h) into upload memory: the
  // request's one host copy on the way in (split over the chunk pool when
  // large, whatever the pieces).
  Copy(up + job->in_at, r.input.ranges());
  if (job->in_upload > in_bytes) {
    std::memset(up + job->in_at + in_bytes, kPoison, job->in_upload - in_bytes);
  }
  if (job->scale_bytes) r.scale.CopyTo(up + job->scale_at);
  if (job->bias_bytes) r.bias.CopyTo(up + job->bias_at);
  if (job->poison_output) std::memset(up + job->poison_at, kPoison, job->out_alloc);
  stage_us_.fetch_add(static_cast<uint64_t>(
      absl::ToInt64Microseconds(absl::Now() - stage_start)));
  const uint64_t request_bytes = sched::RequestBytes(r);
  // The payloads live in upload memory now; the request need not keep them.
  r.input.clear();
  r.scale.clear();
  r.bias.clear();

  sched::Prepared p;
  const bool coalescable = options_.coalesce && options_.coalescer.key &&
                           options_.coalescer.span && !poison && !job->dedicated &&
                           in_bytes == out_bytes;
  if (coalescable) p.key = options_.coalescer.key(job->plan, r.in_place);
  p.bytes = request_bytes;
  p.state = std::move(job);
  return p;
}

}  // namespace dmls::d3d12
