#include "engine/d3d12/buffer_pool.h"

#include <cstring>

#include "engine/d3d12/device.h"
#include "gtest/gtest.h"

namespace dmls::d3d12 {
namespace {

class BufferPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DeviceOptions o;
    o.kind = DeviceOptions::Kind::kSoftware;
    absl::StatusOr<std::unique_ptr<Device>> d = Device::Create(o);
    ASSERT_TRUE(d.ok()) << d.status();
    device_ = std::move(*d);
  }
  std::unique_ptr<Device> device_;
};

TEST(BufferPoolSizeClassTest, Classes) {
  EXPECT_EQ(BufferPool::SizeClass(1), 65536u);
  EXPECT_EQ(BufferPool::SizeClass(65536), 65536u);
  EXPECT_EQ(BufferPool::SizeClass(65537), 65536u + 16384u);
  EXPECT_EQ(BufferPool::SizeClass(131072), 131072u);
  EXPECT_EQ(BufferPool::SizeClass(512u << 20), 512u << 20);
  // MVN1 512 x 262143 floats lands in the 512 MiB class.
  EXPECT_EQ(BufferPool::SizeClass(512ull * 262143 * 4), 512u << 20);
  for (uint64_t b = 1; b < (64ull << 20); b = b * 3 + 7) {
    const uint64_t c = BufferPool::SizeClass(b);
    EXPECT_GE(c, b);
    EXPECT_EQ(c % 16384, 0u);
    if (b > 65536) {
      EXPECT_LE(c, b + b / 4 + 1) << b;
    }
  }
}

TEST_F(BufferPoolTest, SteadyStateCreatesNoResources) {
  BufferPool pool(device_->d3d(), {});
  uint64_t fence = 0;
  uint64_t created_after_warmup = 0;
  for (int round = 0; round < 20; ++round) {
    std::vector<PoolBuffer*> used;
    for (HeapKind kind :
         {HeapKind::kDefault, HeapKind::kUpload, HeapKind::kReadback}) {
      for (uint64_t bytes : {100ull, 70000ull, 1ull << 20}) {
        absl::StatusOr<PoolBuffer*> b = pool.Acquire(kind, bytes);
        ASSERT_TRUE(b.ok()) << b.status();
        EXPECT_GE((*b)->size, bytes);
        EXPECT_EQ((*b)->kind, kind);
        EXPECT_EQ((*b)->mapped != nullptr, kind != HeapKind::kDefault);
        used.push_back(*b);
      }
    }
    ++fence;
    for (PoolBuffer* b : used) pool.Release(b, fence);
    // Buffers of fence `fence` are not reused before it completes.
    pool.Reclaim(fence);
    if (round == 0) created_after_warmup = pool.stats().resources_created;
  }
  BufferPoolStats s = pool.stats();
  EXPECT_EQ(created_after_warmup, 9u);
  EXPECT_EQ(s.resources_created, 9u);
  EXPECT_EQ(s.reuses, s.acquires - 9);
  EXPECT_EQ(s.bytes_in_use, 0u);
}

TEST_F(BufferPoolTest, RetiredBuffersWaitForTheirFence) {
  BufferPool pool(device_->d3d(), {});
  PoolBuffer* a = *pool.Acquire(HeapKind::kUpload, 1000);
  pool.Release(a, 5);
  pool.Reclaim(4);
  PoolBuffer* b = *pool.Acquire(HeapKind::kUpload, 1000);
  EXPECT_NE(a, b);  // a still belongs to fence 5
  pool.Release(b, 0);
  pool.Reclaim(5);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  PoolBuffer* c = *pool.Acquire(HeapKind::kUpload, 1000);
  PoolBuffer* d = *pool.Acquire(HeapKind::kUpload, 1000);
  EXPECT_TRUE((c == a && d == b) || (c == b && d == a));
  EXPECT_EQ(pool.stats().resources_created, 2u);
}

TEST_F(BufferPoolTest, StatsAsOfAFenceReclaimNothing) {
  BufferPool pool(device_->d3d(), {});
  PoolBuffer* a = *pool.Acquire(HeapKind::kUpload, 1000);
  PoolBuffer* b = *pool.Acquire(HeapKind::kUpload, 1000);
  pool.Release(a, 5);
  pool.Release(b, 9);
  const uint64_t one = a->size;
  EXPECT_EQ(pool.stats().bytes_in_use, 2 * one);
  EXPECT_EQ(pool.stats(4).bytes_in_use, 2 * one);
  EXPECT_EQ(pool.stats(5).bytes_in_use, one);
  EXPECT_EQ(pool.stats(9).bytes_in_use, 0u);
  EXPECT_EQ(pool.stats().bytes_in_use, 2 * one);  // nothing was reclaimed
  PoolBuffer* c = *pool.Acquire(HeapKind::kUpload, 1000);
  EXPECT_NE(c, a);  // a still belongs to fence 5
  EXPECT_NE(c, b);
}

TEST_F(BufferPoolTest, CapGivesResourceExhaustedAndTrimsIdleBuffers) {
  BufferPoolOptions o;
  o.memory_cap_bytes = 1 << 20;  // 1 MiB
  BufferPool pool(device_->d3d(), o);
  absl::StatusOr<PoolBuffer*> big = pool.Acquire(HeapKind::kDefault, 2 << 20);
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);

  // Fill the cap with 512 KiB buffers.
  PoolBuffer* x = *pool.Acquire(HeapKind::kDefault, 512 << 10);
  PoolBuffer* y = *pool.Acquire(HeapKind::kUpload, 512 << 10);
  absl::StatusOr<PoolBuffer*> z = pool.Acquire(HeapKind::kReadback, 64 << 10);
  EXPECT_EQ(z.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(pool.stats().cap_rejections, 2u);

  // Once x and y are idle, a request of another class trims them.
  pool.Release(x, 0);
  pool.Release(y, 0);
  absl::StatusOr<PoolBuffer*> w = pool.Acquire(HeapKind::kReadback, 1 << 20);
  ASSERT_TRUE(w.ok()) << w.status();
  BufferPoolStats s = pool.stats();
  EXPECT_EQ(s.resources_destroyed, 2u);
  EXPECT_EQ(s.bytes_live, 1u << 20);
  // Persistent mapping works and the memory is ours.
  std::memset((*w)->mapped, 0xAB, (*w)->size);
}

}  // namespace
}  // namespace dmls::d3d12
