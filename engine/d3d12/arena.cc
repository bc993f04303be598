#include "engine/d3d12/arena.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace dmls::d3d12 {

ArenaSet::ArenaSet(BufferPool* pool, HeapKind kind, uint64_t arena_bytes,
                   uint64_t alignment, TableMaker make_tables,
                   TableReleaser release_tables)
    : pool_(pool),
      kind_(kind),
      arena_bytes_(arena_bytes),
      alignment_(alignment),
      make_tables_(std::move(make_tables)),
      release_tables_(std::move(release_tables)) {}

uint64_t ArenaSet::ReleaseIdle() {
  MutexLock lock(&mu_);
  uint64_t released = 0;
  for (auto it = arenas_.begin(); it != arenas_.end();) {
    if ((*it)->ranges->used() != 0) {
      ++it;
      continue;
    }
    if (release_tables_) release_tables_((*it)->tables);
    pool_->Release((*it)->buffer, 0);
    released += arena_bytes_;
    it = arenas_.erase(it);
  }
  return released;
}

bool ArenaSet::TryAllocate(Arena* arena, absl::Span<const uint64_t> sizes,
                           std::vector<ArenaRange>* out) {
  out->clear();
  for (uint64_t bytes : sizes) {
    if (bytes == 0) {
      out->push_back(ArenaRange{});
      continue;
    }
    std::optional<uint64_t> offset = arena->ranges->Allocate(bytes);
    if (!offset) {
      for (const ArenaRange& r : *out) {
        if (r) arena->ranges->Free(r.offset, r.bytes, 0);
      }
      out->clear();
      return false;
    }
    out->push_back(ArenaRange{arena, *offset, bytes});
  }
  return true;
}

absl::StatusOr<std::vector<ArenaRange>> ArenaSet::Allocate(
    absl::Span<const uint64_t> sizes) {
  uint64_t total = 0;
  for (uint64_t b : sizes) total += (b + alignment_ - 1) / alignment_ * alignment_;
  std::vector<ArenaRange> out;
  MutexLock lock(&mu_);
  if (total > arena_bytes_) {
    ++failures_;
    return absl::ResourceExhaustedError(absl::StrCat(
        total, " bytes do not fit in one ", arena_bytes_, "-byte arena"));
  }
  for (const std::unique_ptr<Arena>& a : arenas_) {
    if (TryAllocate(a.get(), sizes, &out)) {
      ++allocations_;
      return out;
    }
  }
  absl::StatusOr<PoolBuffer*> buffer = pool_->Acquire(kind_, arena_bytes_);
  if (!buffer.ok()) {
    ++failures_;
    return buffer.status();
  }
  auto arena = std::make_unique<Arena>();
  arena->buffer = *buffer;
  arena->ranges = std::make_unique<RangeAllocator>(arena_bytes_, alignment_);
  if (make_tables_) {
    absl::StatusOr<ArenaTables> tables =
        make_tables_(arena->buffer->resource.get(), arena_bytes_);
    if (!tables.ok()) {
      pool_->Release(arena->buffer, 0);
      ++failures_;
      return tables.status();
    }
    arena->tables = *tables;
  }
  arenas_.push_back(std::move(arena));
  if (!TryAllocate(arenas_.back().get(), sizes, &out)) {
    ++failures_;
    return absl::InternalError("a new arena could not hold its first ranges");
  }
  ++allocations_;
  return out;
}

absl::StatusOr<ArenaRange> ArenaSet::Allocate(uint64_t bytes) {
  const uint64_t sizes[] = {bytes};
  absl::StatusOr<std::vector<ArenaRange>> r = Allocate(sizes);
  if (!r.ok()) return r.status();
  return (*r)[0];
}

void ArenaSet::Free(const ArenaRange& range, uint64_t fence) {
  if (range) range.arena->ranges->Free(range.offset, range.bytes, fence);
}

void ArenaSet::Reclaim(uint64_t completed) {
  MutexLock lock(&mu_);
  for (const std::unique_ptr<Arena>& a : arenas_) a->ranges->Reclaim(completed);
}

ArenaSetStats ArenaSet::stats() const {
  // No range is retired under fence 0 (Free with 0 frees at once).
  return stats(0);
}

ArenaSetStats ArenaSet::stats(uint64_t completed) const {
  MutexLock lock(&mu_);
  ArenaSetStats s;
  s.arenas = arenas_.size();
  s.bytes = arenas_.size() * arena_bytes_;
  for (const std::unique_ptr<Arena>& a : arenas_) s.used += a->ranges->used(completed);
  s.allocations = allocations_;
  s.failures = failures_;
  return s;
}

}  // namespace dmls::d3d12
