// ChunkBuffers: host memory for the bytes of outgoing chunks (ReadTensor),
// kept and reused across calls, so that the engine copies a chunk into
// pages already faulted in (Engine::ReadResidentInto) and gRPC sends those
// pages as the chunk's slice without a further copy. Without it every
// chunk was a fresh string and then a fresh slice: two copies and two
// rounds of page faults per chunk.
//
// Take(bytes) lends a buffer of at least `bytes` (its capacity a power of
// two, at least 4 KiB), an idle one of that size when there is one. The
// buffer comes back when its Lease is dropped, or, once the lease is made
// into a grpc::Slice (IntoSlice), when gRPC frees the slice. At most
// `max_idle_bytes` stay idle; a buffer coming back beyond that is freed.
//
// Ownership: the pool is shared (std::shared_ptr, Create); every lease
// holds it, so a slice may outlive the service that made the pool.
// Thread-safety: thread-safe; a Lease is one holder's.
#ifndef DMLSERVE_SERVER_RPC_CHUNK_BUFFERS_H_
#define DMLSERVE_SERVER_RPC_CHUNK_BUFFERS_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "engine/core/mutex.h"
#include "grpcpp/support/slice.h"

namespace dmls::server {

class ChunkBuffers : public std::enable_shared_from_this<ChunkBuffers> {
 public:
  struct Stats {
    uint64_t allocations = 0;  // buffers made
    uint64_t reuses = 0;       // takes served by an idle buffer
    uint64_t idle_bytes = 0;
  };

  // A lent buffer. Move-only; gives the buffer back when destroyed.
  class Lease {
   public:
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    char* data() const { return data_.get(); }
    uint64_t capacity() const { return capacity_; }
    // The first `length` bytes as a slice that owns the lease: the buffer
    // goes back when gRPC (or whoever holds the slice last) frees it.
    grpc::Slice IntoSlice(uint64_t length) &&;

   private:
    friend class ChunkBuffers;
    Lease(std::shared_ptr<ChunkBuffers> pool, std::unique_ptr<char[]> data, uint64_t capacity)
        : pool_(std::move(pool)), data_(std::move(data)), capacity_(capacity) {}
    std::shared_ptr<ChunkBuffers> pool_;
    std::unique_ptr<char[]> data_;
    uint64_t capacity_ = 0;
  };

  static std::shared_ptr<ChunkBuffers> Create(uint64_t max_idle_bytes);

  Lease Take(uint64_t bytes);
  Stats stats() const;

 private:
  explicit ChunkBuffers(uint64_t max_idle_bytes) : max_idle_bytes_(max_idle_bytes) {}
  void Give(std::unique_ptr<char[]> data, uint64_t capacity);

  const uint64_t max_idle_bytes_;
  mutable Mutex mu_;
  // Idle buffers by capacity.
  std::map<uint64_t, std::vector<std::unique_ptr<char[]>>> idle_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

// The chunks of a streamed call (ExecuteChunked's output, ReadTensor): the
// default and the largest a client may ask for, and the buffers kept idle
// for reuse (ChunkBuffers), at most.
struct ChunkOptions {
  uint64_t default_bytes = uint64_t{1} << 20;
  uint64_t max_bytes = uint64_t{4} << 20;
  uint64_t buffer_idle_bytes = uint64_t{64} << 20;

  // The chunk of a call that asks for `requested` bytes (0: the default).
  uint64_t For(uint64_t requested) const {
    return requested == 0 ? default_bytes : std::min(requested, max_bytes);
  }
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_CHUNK_BUFFERS_H_
