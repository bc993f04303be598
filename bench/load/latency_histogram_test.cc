#include "bench/load/latency_histogram.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace dmls::load {
namespace {

TEST(LatencyHistogram, Empty) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Percentile(50), 0);
  EXPECT_EQ(h.mean(), 0.0);
}

TEST(LatencyHistogram, BucketsCoverEveryValueOnce) {
  // Each bucket's upper edge is one below the next bucket's first value.
  for (int b = 0; b + 1 < LatencyHistogram::BucketOf(uint64_t{1} << 40); ++b) {
    const uint64_t edge = LatencyHistogram::BucketUpperEdge(b);
    ASSERT_EQ(LatencyHistogram::BucketOf(edge), b) << b;
    ASSERT_EQ(LatencyHistogram::BucketOf(edge + 1), b + 1) << b;
  }
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (int v = 1; v <= 100; ++v) h.Record(v);
  EXPECT_EQ(h.Percentile(50), 50);
  EXPECT_EQ(h.Percentile(99), 99);
  EXPECT_EQ(h.Percentile(100), 100);
  EXPECT_EQ(h.Percentile(0), 1);
  EXPECT_EQ(h.min(), 1);
  EXPECT_EQ(h.max(), 100);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
}

TEST(LatencyHistogram, PercentilesWithinBucketPrecision) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(13.0, 1.0);  // ~0.5 ms median
  std::vector<int64_t> samples;
  LatencyHistogram h;
  for (int i = 0; i < 100000; ++i) {
    const int64_t v = static_cast<int64_t>(dist(rng));
    samples.push_back(v);
    h.Record(v);
  }
  std::sort(samples.begin(), samples.end());
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    const size_t rank =
        static_cast<size_t>(std::ceil(p / 100.0 * samples.size() - 1e-9));
    const double exact = static_cast<double>(samples[rank - 1]);
    const double got = static_cast<double>(h.Percentile(p));
    EXPECT_GE(got, exact) << p;
    EXPECT_LE(got, exact * (1 + 1.0 / 128)) << p;
  }
  EXPECT_EQ(h.Percentile(100), samples.back());
}

TEST(LatencyHistogram, MergeAddsCounts) {
  LatencyHistogram a, b;
  a.Record(10);
  b.Record(1000);
  b.Record(-5);  // counts as 0
  a.Merge(b);
  EXPECT_EQ(a.count(), 3u);
  EXPECT_EQ(a.min(), 0);
  EXPECT_EQ(a.max(), 1000);
  EXPECT_EQ(a.Percentile(100), 1000);
}

}  // namespace
}  // namespace dmls::load
