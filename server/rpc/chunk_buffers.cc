#include "server/rpc/chunk_buffers.h"

#include <algorithm>
#include <utility>


namespace dmls::server {
namespace {

uint64_t SizeClass(uint64_t bytes) {
  uint64_t c = uint64_t{4} << 10;
  while (c < bytes) c <<= 1;
  return c;
}

}  // namespace

std::shared_ptr<ChunkBuffers> ChunkBuffers::Create(uint64_t max_idle_bytes) {
  return std::shared_ptr<ChunkBuffers>(new ChunkBuffers(max_idle_bytes));
}

ChunkBuffers::Lease::~Lease() {
  if (pool_ && data_) pool_->Give(std::move(data_), capacity_);
}

grpc::Slice ChunkBuffers::Lease::IntoSlice(uint64_t length) && {
  auto* owned = new Lease(std::move(*this));
  return grpc::Slice(owned->data(), std::min(length, owned->capacity()),
                     [](void* lease) { delete static_cast<Lease*>(lease); }, owned);
}

ChunkBuffers::Lease ChunkBuffers::Take(uint64_t bytes) {
  const uint64_t capacity = SizeClass(bytes);
  {
    MutexLock lock(&mu_);
    auto it = idle_.find(capacity);
    if (it != idle_.end() && !it->second.empty()) {
      std::unique_ptr<char[]> data = std::move(it->second.back());
      it->second.pop_back();
      stats_.idle_bytes -= capacity;
      ++stats_.reuses;
      return Lease(shared_from_this(), std::move(data), capacity);
    }
    ++stats_.allocations;
  }
  // Not zeroed: the pages are touched by the first copy into them.
  return Lease(shared_from_this(), std::unique_ptr<char[]>(new char[capacity]), capacity);
}

void ChunkBuffers::Give(std::unique_ptr<char[]> data, uint64_t capacity) {
  MutexLock lock(&mu_);
  if (stats_.idle_bytes + capacity > max_idle_bytes_) return;  // freed on return
  idle_[capacity].push_back(std::move(data));
  stats_.idle_bytes += capacity;
}

ChunkBuffers::Stats ChunkBuffers::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace dmls::server
