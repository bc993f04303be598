// Arenas: a few large persistent buffers of one heap kind that requests
// sub-allocate byte ranges from (RangeAllocator), so that steady-state
// traffic creates no D3D12 resource and, for DEFAULT arenas, no view: each
// DEFAULT arena gets its descriptor tables once (DispatchBinder::
// CreateArenaTables) and kernels receive a range's start as a constant.
//
// An ArenaSet grows by one arena when no arena has room and the BufferPool
// (whose memory cap counts arenas like any pooled buffer) allows another;
// arenas are kept for the set's life. A request larger than half an arena
// does not belong here: the GPU runner gives those dedicated pool buffers.
//
// Ownership: the set owns its arenas' bookkeeping; the buffers belong to the
// BufferPool (acquired for the set's life). ArenaRange is a plain handle.
// Thread-safety: thread-safe.
#ifndef DMLSERVE_ENGINE_D3D12_ARENA_H_
#define DMLSERVE_ENGINE_D3D12_ARENA_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/core/mutex.h"
#include "engine/d3d12/buffer_pool.h"
#include "engine/d3d12/dispatch_binder.h"
#include "engine/d3d12/range_allocator.h"

namespace dmls::d3d12 {

struct Arena {
  PoolBuffer* buffer = nullptr;
  std::unique_ptr<RangeAllocator> ranges;
  ArenaTables tables;  // DEFAULT arenas only
};

struct ArenaRange {
  Arena* arena = nullptr;
  uint64_t offset = 0;
  uint64_t bytes = 0;

  explicit operator bool() const { return arena != nullptr; }
  ID3D12Resource* resource() const { return arena->buffer->resource.get(); }
  // UPLOAD/READBACK arenas: the range's CPU mapping.
  uint8_t* mapped() const { return arena->buffer->mapped + offset; }
};

struct ArenaSetStats {
  uint64_t arenas = 0;
  uint64_t bytes = 0;       // arena buffers held
  uint64_t used = 0;        // allocated or retired
  uint64_t allocations = 0;
  uint64_t failures = 0;    // RESOURCE_EXHAUSTED answers
};

class ArenaSet {
 public:
  using TableMaker =
      std::function<absl::StatusOr<ArenaTables>(ID3D12Resource*, uint64_t)>;

  // `pool` must outlive the set. `make_tables` is called once per new
  // arena (DEFAULT arenas; null for UPLOAD/READBACK).
  using TableReleaser = std::function<void(const ArenaTables&)>;
  ArenaSet(BufferPool* pool, HeapKind kind, uint64_t arena_bytes,
           uint64_t alignment, TableMaker make_tables,
           TableReleaser release_tables = nullptr);
  ArenaSet(const ArenaSet&) = delete;
  ArenaSet& operator=(const ArenaSet&) = delete;

  // One range per entry of `sizes` (0 gives an empty range), all in one
  // arena: an existing one with room, else a new one. RESOURCE_EXHAUSTED
  // (nothing allocated) when neither works or the total exceeds an arena.
  absl::StatusOr<std::vector<ArenaRange>> Allocate(
      absl::Span<const uint64_t> sizes);
  absl::StatusOr<ArenaRange> Allocate(uint64_t bytes);

  // Gives `range` back once `fence` completed (0: now). Empty ranges are
  // ignored.
  void Free(const ArenaRange& range, uint64_t fence);
  void Reclaim(uint64_t completed);

  // Gives every arena with nothing allocated or retired back to the pool
  // (and its tables to `release_tables`), so that a memory cap can be met by
  // dedicated buffers. Returns the bytes given back.
  uint64_t ReleaseIdle();

  uint64_t arena_bytes() const { return arena_bytes_; }
  ArenaSetStats stats() const;
  // As stats(), with the ranges retired under fences <= `completed`
  // counted as free, as Reclaim(completed) would make them. Reclaims
  // nothing.
  ArenaSetStats stats(uint64_t completed) const;

 private:
  // Tries `arena`; on failure frees what it took.
  static bool TryAllocate(Arena* arena, absl::Span<const uint64_t> sizes,
                          std::vector<ArenaRange>* out);

  BufferPool* const pool_;
  const HeapKind kind_;
  const uint64_t arena_bytes_;
  const uint64_t alignment_;
  const TableMaker make_tables_;
  const TableReleaser release_tables_;

  mutable Mutex mu_;  // guards the arena list and the counters
  std::vector<std::unique_ptr<Arena>> arenas_ ABSL_GUARDED_BY(mu_);
  uint64_t allocations_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_ARENA_H_
