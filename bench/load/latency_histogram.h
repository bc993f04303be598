// LatencyHistogram: a log-linear histogram of durations in nanoseconds, for
// percentiles of many millions of samples in fixed memory (~37 KiB).
//
// Values below 128 ns have a bucket each; above that every power of two is
// split into 128 equal buckets, so a reported percentile is within 1/128
// (0.8%) of the true sample. Percentile() returns the bucket's upper edge
// clamped to the largest value recorded, so p100 is exact. Values from 2^40
// ns (about 18 minutes) up share the last bucket.
//
// Thread-compatible: the caller serialises access (Recorder holds it under
// its mutex).
#ifndef DMLSERVE_BENCH_LOAD_LATENCY_HISTOGRAM_H_
#define DMLSERVE_BENCH_LOAD_LATENCY_HISTOGRAM_H_

#include <cstdint>
#include <vector>

namespace dmls::load {

class LatencyHistogram {
 public:
  LatencyHistogram();

  // Negative values count as 0.
  void Record(int64_t nanoseconds);
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  int64_t min() const { return count_ == 0 ? 0 : min_; }
  int64_t max() const { return max_; }
  double mean() const;

  // The smallest recorded value v such that at least `percent`% of the
  // samples are <= v (to the bucket precision); 0 when empty. `percent` is
  // clamped to [0, 100].
  int64_t Percentile(double percent) const;

  // Exposed for the test: the bucket of a value and that bucket's upper
  // edge (the largest value it holds).
  static int BucketOf(uint64_t value);
  static uint64_t BucketUpperEdge(int bucket);

 private:
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
  long double sum_ = 0;
};

}  // namespace dmls::load

#endif  // DMLSERVE_BENCH_LOAD_LATENCY_HISTOGRAM_H_
