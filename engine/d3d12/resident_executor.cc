#include "engine/d3d12/resident_executor.h"

#include <algorithm>
#include <cstring>
#include <thread>
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
  // The outcome of the clear that Allocate queued ahead of every other use
  // of the buffer: until it ran (and for good when it failed) the buffer
  // must not be used, since its pool memory may still hold an earlier
  // tensor's bytes. Set and read on the dispatch thread only.
  const absl::Status& clear_status() const { return clear_status_; }
  void SetClearStatus(absl::Status s) { clear_status_ = std::move(s); }

 private:
  ResidentExecutor* const owner_;
  PoolBuffer* const buffer_;
  absl::Status clear_status_ = absl::InternalError("its clear did not run");
};

// A read or write under way: its pieces answered on the completion thread.
// Holds the resident buffer; answers once, when the last hold (each piece in
// flight, and the dispatch thread while it places them) lets go, with the
// first error. Thread-safe.
class ResidentExecutor::PendingTransfer {
 public:
  PendingTransfer(std::shared_ptr<ResidentBuffer> buffer, StatusCallback done)
      : buffer_(std::move(buffer)), done_(std::move(done)) {}
  void Hold() {
    MutexLock lock(&mu_);
    ++holds_;
  }
  void Release(const absl::Status& s) {
    absl::Status status;
    {
      MutexLock lock(&mu_);
      if (!s.ok() && status_.ok()) status_ = s;
      if (--holds_ > 0) return;
      status = status_;
    }
    buffer_.reset();
    done_(status);
  }

 private:
  std::shared_ptr<ResidentBuffer> buffer_;
  StatusCallback done_;
  Mutex mu_;
  int holds_ ABSL_GUARDED_BY(mu_) = 1;  // the placing thread's
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

ID3D12Resource* ResidentExecutor::ResourceOf(const ResidentBuffer& buffer) {
  auto* d = dynamic_cast<const DeviceBuffer*>(&buffer);
  return d ? d->resource() : nullptr;
}

absl::StatusOr<DeviceRange> ResidentExecutor::UsableRange(const ResidentBuffer& buffer) {
  auto* d = dynamic_cast<const DeviceBuffer*>(&buffer);
  if (d == nullptr) return absl::InternalError("a resident tensor of another engine");
  if (const absl::Status& e = d->clear_status(); !e.ok()) {
    return absl::Status(e.code(),
                        absl::StrCat("the resident tensor's memory could not be cleared, so it "
                                     "cannot be used (release it): ",
                                     e.message()));
  }
  return DeviceRange{d->resource(), d->capacity()};
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
      ChainRecorder::Create(runner_, options_, &ResidentExecutor::UsableRange);
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

void ResidentExecutor::Queue(ResidentTransfer::Task task, StatusCallback done) {
  queue_(std::make_unique<ResidentTransfer>(std::move(task)),
         [done = std::move(done)](absl::StatusOr<ChainResult> r) mutable { done(r.status()); });
}

void ResidentExecutor::QueueInline(absl::AnyInvocable<absl::Status()> task,
                                   StatusCallback done) {
  Queue(
      [task = std::move(task)](ChainCallback answer) mutable {
        absl::Status s = task();
        if (!s.ok()) return answer(s);
        answer(ChainResult{});
      },
      std::move(done));
}

absl::Status ResidentExecutor::DeviceStatus() const {
  if (runner_->lost()) return DeviceLostError("the GPU device is lost");
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ResidentExecutor::PlaceCopy(ID3D12Resource* dst, uint64_t dst_offset,
                                                     ID3D12Resource* src, uint64_t src_offset,
                                                     uint64_t bytes, bool to_device,
                                                     absl::AnyInvocable<void(absl::Status)> done) {
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
      std::move(done));
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
      MutexLock lock(&stats_mu_);
      stats_.bytes_written_on_dispatch += n;
    }
    absl::StatusOr<uint64_t> v =
        PlaceCopy(dst, offset + at, upload_->resource.get(), h * half, n, true);
    if (!v.ok()) return v.status();
    half_fence_[h] = last = *v;
    at += n;
  }
  return runner_->WaitFence(last);
}

void ResidentExecutor::FreeReadbackHalf(int h) {
  {
    MutexLock lock(&readback_mu_);
    readback_busy_[h] = false;
  }
  readback_cv_.SignalAll();
}

void ResidentExecutor::Download(ID3D12Resource* src, uint64_t offset, absl::Span<char> into,
                                const std::shared_ptr<PendingTransfer>& read) {
  const uint64_t half = staging_bytes_;
  if (readback_ == nullptr) {
    absl::StatusOr<PoolBuffer*> b = runner_->pool()->Acquire(HeapKind::kReadback, 2 * half);
    if (!b.ok()) return read->Release(b.status());
    readback_ = *b;
  }
  const std::thread::id dispatch = std::this_thread::get_id();
  // Piece by piece, alternating halves: the GPU copies a piece while the
  // completion thread copies the previous one out. This thread lets go of
  // its hold before placing the last piece, so that the read is answered
  // on the completion thread (here only when nothing or not all of it was
  // placed).
  bool holding = true;
  for (uint64_t at = 0; at < into.size();) {
    const uint64_t n = std::min<uint64_t>(half, into.size() - at);
    const int h = next_readback_half_;
    next_readback_half_ = 1 - h;
    {
      MutexLock lock(&readback_mu_);
      while (readback_busy_[h]) readback_cv_.Wait(&readback_mu_);
      readback_busy_[h] = true;
    }
    read->Hold();
    if (at + n == into.size()) {
      read->Release(absl::OkStatus());  // the piece's hold stays
      holding = false;
    }
    char* const to = into.data() + at;
    absl::StatusOr<uint64_t> placed = PlaceCopy(
        readback_->resource.get(), h * half, src, offset + at, n, false,
        [this, read, h, to, n, half, dispatch](absl::Status s) {
          if (s.ok()) {
            std::memcpy(to, readback_->mapped + h * half, n);
            if (std::this_thread::get_id() == dispatch) {
              MutexLock lock(&stats_mu_);
              stats_.bytes_read_on_dispatch += n;
            }
          }
          FreeReadbackHalf(h);
          read->Release(s);
        });
    if (!placed.ok()) {
      FreeReadbackHalf(h);
      read->Release(placed.status());
      break;
    }
    at += n;
  }
  if (holding) read->Release(absl::OkStatus());
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
  // Pool buffers are reused: the clear is queued in the chain lane, ahead
  // of every use of the buffer (chains, writes and reads queue behind it
  // and run on the same thread), and the caller does not wait for it. A
  // use finds the buffer unusable (UsableRange) when the clear failed or
  // never ran. An answer that comes before this returns (the scheduler
  // refused the clear: queue full, shutting down; or it already ran) is
  // this call's.
  struct Answer {
    Mutex mu;
    bool returned ABSL_GUARDED_BY(mu) = false;
    absl::Status early ABSL_GUARDED_BY(mu);
  };
  auto answer = std::make_shared<Answer>();
  // The clear holds the buffer weakly: a tensor released before its clear
  // ran goes back to the pool at once (no GPU work was placed on it), and
  // its clear is skipped.
  QueueInline(
      [this, weak = std::weak_ptr<DeviceBuffer>(buffer)]() -> absl::Status {
        std::shared_ptr<DeviceBuffer> held = weak.lock();
        if (held == nullptr) return absl::OkStatus();
        absl::Status s = DeviceStatus();
        if (s.ok()) s = Upload(held->resource(), 0, nullptr, held->capacity(), true);
        held->SetClearStatus(s);
        return s;
      },
      [this, answer](absl::Status s) {
        {
          MutexLock lock(&answer->mu);
          if (!answer->returned) {
            answer->early = s;
            return;
          }
        }
        if (!s.ok() && log_) {
          log_->warn("a resident tensor's clear failed; the tensor cannot be used: {}",
                     s.ToString());
        }
      });
  {
    MutexLock lock(&answer->mu);
    answer->returned = true;
    if (!answer->early.ok()) return answer->early;
  }
  return std::shared_ptr<ResidentBuffer>(std::move(buffer));
}

void ResidentExecutor::Write(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                             std::string bytes, StatusCallback done) {
  ID3D12Resource* r = buffer ? ResourceOf(*buffer) : nullptr;
  if (r == nullptr) return done(absl::InternalError("not a resident buffer of this GPU"));
  if (absl::Status s = CheckResidentRange(buffer->size(), offset, bytes.size()); !s.ok()) {
    return done(s);
  }
  const uint64_t n = bytes.size();
  auto count = [this, n] {
    MutexLock lock(&stats_mu_);
    ++stats_.writes;
    stats_.bytes_written += n;
  };
  // Up to a staging half (a chunk): copied here, on the caller's thread,
  // into upload memory of its own, which goes back to the pool once the
  // GPU has copied it; the dispatch thread only records the copy and the
  // completion thread answers. Larger writes, and writes the pool has no
  // memory for, go through the upload halves on the dispatch thread.
  if (n != 0 && n <= staging_bytes_) {
    absl::StatusOr<PoolBuffer*> own = runner_->pool()->Acquire(HeapKind::kUpload, n);
    if (own.ok()) {
      std::memcpy((*own)->mapped, bytes.data(), n);
      std::string().swap(bytes);
      BufferPool* pool = runner_->pool();
      std::shared_ptr<PoolBuffer> upload(*own, [pool](PoolBuffer* b) { pool->Release(b, 0); });
      Queue(
          [this, buffer, r, offset, n, upload, count](ChainCallback answer) mutable {
            const ResidentBuffer* const target = buffer.get();  // held by `write`
            auto write = std::make_shared<PendingTransfer>(
                std::move(buffer), [count, answer = std::move(answer)](absl::Status s) mutable {
                  if (!s.ok()) return answer(s);
                  count();
                  answer(ChainResult{});
                });
            // A lost device first: the clear of a buffer allocated just
            // before the loss did not run either.
            absl::Status s = DeviceStatus();
            if (s.ok()) s = UsableRange(*target).status();
            if (!s.ok()) return write->Release(s);
            write->Hold();
            write->Release(absl::OkStatus());  // answered on the completion thread
            ID3D12Resource* const src = upload->resource.get();
            absl::StatusOr<uint64_t> placed =
                PlaceCopy(r, offset, src, 0, n, true,
                          [write, upload = std::move(upload)](absl::Status s) mutable {
                            upload.reset();
                            write->Release(s);
                          });
            if (!placed.ok()) write->Release(placed.status());
          },
          std::move(done));
      return;
    }
  }
  QueueInline(
      [this, buffer, r, offset, bytes = std::move(bytes), count]() -> absl::Status {
        absl::Status s = DeviceStatus();
        if (s.ok()) s = UsableRange(*buffer).status();
        if (s.ok()) s = Upload(r, offset, bytes.data(), bytes.size(), false);
        if (!s.ok()) return s;
        count();
        return absl::OkStatus();
      },
      std::move(done));
}

void ResidentExecutor::ReadInto(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                                absl::Span<char> into, StatusCallback done) {
  ID3D12Resource* r = buffer ? ResourceOf(*buffer) : nullptr;
  if (r == nullptr) return done(absl::InternalError("not a resident buffer of this GPU"));
  if (absl::Status s = CheckResidentRange(buffer->size(), offset, into.size()); !s.ok()) {
    return done(s);
  }
  Queue(
      [this, buffer, r, offset, into](ChainCallback answer) mutable {
        const ResidentBuffer* const target = buffer.get();  // held by `read`
        const uint64_t length = into.size();
        auto read = std::make_shared<PendingTransfer>(
            std::move(buffer), [this, length, answer = std::move(answer)](absl::Status s) mutable {
              if (!s.ok()) return answer(s);
              {
                MutexLock lock(&stats_mu_);
                ++stats_.reads;
                stats_.bytes_read += length;
              }
              answer(ChainResult{});
            });
        // A lost device first (as for writes).
        absl::Status s = DeviceStatus();
        if (s.ok()) s = UsableRange(*target).status();
        if (!s.ok()) return read->Release(s);
        Download(r, offset, into, read);
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
