#include "engine/d3d12/chain_temps.h"

#include <deque>

#include "gtest/gtest.h"

namespace dmls::d3d12 {
namespace {

// Buffers without resources, as many as asked for, of the size asked.
class FakeBuffers {
 public:
  absl::StatusOr<PoolBuffer*> Acquire(uint64_t bytes) {
    PoolBuffer& b = buffers_.emplace_back();
    b.size = bytes;
    return &b;
  }
  size_t made() const { return buffers_.size(); }

 private:
  std::deque<PoolBuffer> buffers_;  // stable addresses
};

TEST(ChainTempsTest, AChainOfStepsThatReadTheLastNeedsTwoBuffers) {
  FakeBuffers fake;
  auto acquire = [&](uint64_t bytes) { return fake.Acquire(bytes); };
  ChainTemps temps;
  PoolBuffer* previous = *temps.Get(1 << 20, acquire);
  for (int step = 1; step < 64; ++step) {
    PoolBuffer* out = *temps.Get(1 << 20, acquire);
    EXPECT_NE(out, previous);  // never the buffer the step reads
    temps.Retire(previous);    // read for the last time
    previous = out;
  }
  EXPECT_EQ(fake.made(), 2u);
  EXPECT_EQ(temps.all().size(), 2u);
}

TEST(ChainTempsTest, OnlyLiveTemporariesOfFittingSizeAreReused) {
  FakeBuffers fake;
  auto acquire = [&](uint64_t bytes) { return fake.Acquire(bytes); };
  ChainTemps temps;
  PoolBuffer* small = *temps.Get(1000, acquire);
  PoolBuffer* big = *temps.Get(10 << 20, acquire);
  PoolBuffer resident;  // not this chain's: retiring it does nothing
  temps.Retire(&resident);
  temps.Retire(nullptr);
  temps.Retire(small);
  temps.Retire(small);  // twice: once in the retired set
  temps.Retire(big);
  // Too big for 1 KiB (it would waste over half), so new; fits 600 bytes.
  PoolBuffer* kib = *temps.Get(1024, acquire);
  EXPECT_NE(kib, big);
  EXPECT_EQ(*temps.Get(600, acquire), small);
  EXPECT_EQ(*temps.Get(6 << 20, acquire), big);
  EXPECT_NE(*temps.Get(600, acquire), small);  // in use again
  EXPECT_EQ(temps.all().size(), 4u);
}

TEST(ChainTempsTest, AFailedAcquireIsReturned) {
  ChainTemps temps;
  absl::StatusOr<PoolBuffer*> b = temps.Get(
      1, [](uint64_t) -> absl::StatusOr<PoolBuffer*> {
        return absl::ResourceExhaustedError("cap");
      });
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(temps.all().empty());
}

}  // namespace
}  // namespace dmls::d3d12
