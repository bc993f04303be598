#include "engine/d3d12/resident_executor.h"

#include <algorithm>
#include <cstring>
#include <future>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/core/host_resident.h"
#include "engine/d3d12/state_tracker.h"

namespace dmls::d3d12 {
namespace {

uint64_t RoundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
// Buffer ranges start at this alignment (a multiple of every texel size).
constexpr uint64_t kAlign = 256;

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
    owner_->chains_->Forget(buffer_->resource.get());
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
    GpuRunner* runner, Engine* engine, ResidentExecutorOptions options, OrderedQueue queue,
    std::shared_ptr<spdlog::logger> logger) {
  std::unique_ptr<ResidentExecutor> e(
      new ResidentExecutor(runner, engine, options, std::move(queue), std::move(logger)));
  if (absl::Status s = e->Init(); !s.ok()) return s;
  return e;
}

ResidentExecutor::ResidentExecutor(GpuRunner* runner, Engine* engine,
                                   ResidentExecutorOptions options, OrderedQueue queue,
                                   std::shared_ptr<spdlog::logger> logger)
    : runner_(runner),
      engine_(engine),
      options_(options),
      queue_(std::move(queue)),
      log_(std::move(logger)) {}

absl::Status ResidentExecutor::Init() {
  absl::StatusOr<std::unique_ptr<ChainRecorder>> chains =
      ChainRecorder::Create(runner_, options_, [](const ResidentBuffer& buffer) {
        auto* d = dynamic_cast<const DeviceBuffer*>(&buffer);
        return d ? DeviceRange{d->resource(), d->capacity()} : DeviceRange{};
      });
  if (!chains.ok()) return chains.status();
  chains_ = std::move(*chains);
  // Staging stays a small part of a small cap (4 x staging_bytes in all).
  staging_bytes_ = options_.staging_bytes;
  if (const uint64_t cap = runner_->pool()->memory_cap_bytes(); cap != 0) {
    staging_bytes_ = std::max<uint64_t>(64 << 10, std::min(staging_bytes_, cap / 32));
  }
  return absl::OkStatus();
}

ResidentExecutor::~ResidentExecutor() {
  Shutdown();
  if (upload_) runner_->pool()->Release(upload_, 0);
  if (readback_) runner_->pool()->Release(readback_, 0);
}

void ResidentExecutor::Shutdown() {
  // Chains in flight on the runner's queue call back into the recorder.
  runner_->Drain();
}

void ResidentExecutor::Queue(ResidentTransfer::Task task, BytesCallback done) {
  queue_(std::make_unique<ResidentTransfer>(std::move(task)),
         [done = std::move(done)](absl::StatusOr<ChainResult> r) mutable {
           if (!r.ok()) return done(r.status());
           done(r->outputs.empty() ? std::string() : std::move(r->outputs[0]));
         });
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
  Queue(
      [this, buffer]() -> absl::StatusOr<ChainResult> {
        absl::Status s = DeviceStatus();
        if (s.ok()) s = Upload(buffer->resource(), 0, nullptr, buffer->capacity(), true);
        if (!s.ok()) return s;
        return ChainResult{};
      },
      [&cleared](absl::StatusOr<std::string> r) { cleared.set_value(r.status()); });
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
  Queue(
      [this, buffer, r, offset, bytes = std::move(bytes)]() -> absl::StatusOr<ChainResult> {
        absl::Status s = DeviceStatus();
        if (s.ok()) s = Upload(r, offset, bytes.data(), bytes.size(), false);
        if (!s.ok()) return s;
        MutexLock lock(&stats_mu_);
        ++stats_.writes;
        stats_.bytes_written += bytes.size();
        return ChainResult{};
      },
      [done = std::move(done)](absl::StatusOr<std::string> r) mutable { done(r.status()); });
}

void ResidentExecutor::Read(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                            uint64_t length, BytesCallback done) {
  ID3D12Resource* r = buffer ? ResourceOf(*buffer) : nullptr;
  if (r == nullptr) return done(absl::InternalError("not a resident buffer of this GPU"));
  if (absl::Status s = CheckResidentRange(buffer->size(), offset, length); !s.ok()) {
    return done(s);
  }
  Queue(
      [this, buffer, r, offset, length]() -> absl::StatusOr<ChainResult> {
        ChainResult result;
        std::string& out = result.outputs.emplace_back();
        absl::Status s = DeviceStatus();
        if (s.ok()) s = Download(r, offset, length, out);
        if (!s.ok()) return s;
        MutexLock lock(&stats_mu_);
        ++stats_.reads;
        stats_.bytes_read += length;
        return result;
      },
      std::move(done));
}

void ResidentExecutor::RunChain(ChainRequest request, ChainCallback done) {
  chains_->Run(std::move(request), std::move(done));
}

ResidentExecutorStats ResidentExecutor::stats() const {
  ResidentExecutorStats s;
  {
    MutexLock lock(&stats_mu_);
    s = stats_;
  }
  static_cast<ChainRecorderStats&>(s) = chains_->stats();
  return s;
}

}  // namespace dmls::d3d12
