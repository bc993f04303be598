#include "server/rpc/chunk_buffers.h"

#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace dmls::server {
namespace {

TEST(ChunkBuffersTest, ABufferComesBackWhenItsSliceIsFreedAndIsReused) {
  std::shared_ptr<ChunkBuffers> pool = ChunkBuffers::Create(uint64_t{64} << 20);
  const char* first = nullptr;
  {
    ChunkBuffers::Lease lease = pool->Take(3 << 20);
    EXPECT_EQ(lease.capacity(), uint64_t{4} << 20);
    first = lease.data();
    std::memset(lease.data(), 'a', 3 << 20);
    grpc::Slice slice = std::move(lease).IntoSlice(3 << 20);
    EXPECT_EQ(slice.size(), size_t{3} << 20);
    EXPECT_EQ(reinterpret_cast<const char*>(slice.begin()), first);
    EXPECT_EQ(pool->stats().idle_bytes, 0u);  // gRPC would still hold it
  }
  EXPECT_EQ(pool->stats().idle_bytes, uint64_t{4} << 20);
  ChunkBuffers::Lease again = pool->Take(4 << 20);
  EXPECT_EQ(again.data(), first);
  ChunkBuffers::Lease other = pool->Take(4 << 20);  // the one idle is lent
  EXPECT_NE(other.data(), first);
  const ChunkBuffers::Stats s = pool->stats();
  EXPECT_EQ(s.allocations, 2u);
  EXPECT_EQ(s.reuses, 1u);
}

TEST(ChunkBuffersTest, IdleBytesAreCapped) {
  std::shared_ptr<ChunkBuffers> pool = ChunkBuffers::Create(uint64_t{1} << 20);
  { ChunkBuffers::Lease a = pool->Take(1 << 20), b = pool->Take(1 << 20); }
  EXPECT_EQ(pool->stats().idle_bytes, uint64_t{1} << 20);  // the second one freed
  { ChunkBuffers::Lease small = pool->Take(100); }
  EXPECT_EQ(pool->stats().idle_bytes, uint64_t{1} << 20);
  EXPECT_EQ(pool->stats().allocations, 3u);
}

TEST(ChunkBuffersTest, ASliceOutlivesThePoolsMaker) {
  grpc::Slice slice;
  {
    std::shared_ptr<ChunkBuffers> pool = ChunkBuffers::Create(uint64_t{1} << 20);
    ChunkBuffers::Lease lease = pool->Take(10);
    std::memcpy(lease.data(), "0123456789", 10);
    slice = std::move(lease).IntoSlice(10);
  }
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(slice.begin()), slice.size()), "0123456789");
}

}  // namespace
}  // namespace dmls::server
