#include "bench/load/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace dmls::load {
namespace {

constexpr int kSubBits = 7;                 // 128 buckets per power of two
constexpr uint64_t kSub = uint64_t{1} << kSubBits;
constexpr int kMaxShift = 40 - kSubBits;    // 2^40 ns and above: last bucket
constexpr int kBucketCount = static_cast<int>(kSub) * (kMaxShift + 2);

}  // namespace

LatencyHistogram::LatencyHistogram() : buckets_(kBucketCount, 0) {}

int LatencyHistogram::BucketOf(uint64_t value) {
  if (value < kSub) return static_cast<int>(value);
  const int msb = 63 - __builtin_clzll(value);
  const int shift = msb - kSubBits;  // value >> shift is in [128, 256)
  if (shift > kMaxShift) return kBucketCount - 1;
  return static_cast<int>(kSub) * (shift + 1) +
         static_cast<int>((value >> shift) - kSub);
}

uint64_t LatencyHistogram::BucketUpperEdge(int bucket) {
  if (bucket < static_cast<int>(kSub)) return static_cast<uint64_t>(bucket);
  const int shift = bucket / static_cast<int>(kSub) - 1;
  const uint64_t mantissa = kSub + static_cast<uint64_t>(bucket) % kSub;
  return ((mantissa + 1) << shift) - 1;
}

void LatencyHistogram::Record(int64_t nanoseconds) {
  const int64_t v = std::max<int64_t>(nanoseconds, 0);
  ++buckets_[BucketOf(static_cast<uint64_t>(v))];
  min_ = count_ == 0 ? v : std::min(min_, v);
  max_ = std::max(max_, v);
  sum_ += v;
  ++count_;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
  count_ += other.count_;
}

double LatencyHistogram::mean() const {
  return count_ == 0 ? 0.0 : static_cast<double>(sum_ / count_);
}

int64_t LatencyHistogram::Percentile(double percent) const {
  if (count_ == 0) return 0;
  percent = std::clamp(percent, 0.0, 100.0);
  // The rank of the sample wanted, 1-based: ceil(p/100 * n), at least 1.
  const uint64_t rank = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::ceil(percent / 100.0 * count_ - 1e-9)));
  uint64_t seen = 0;
  for (int b = 0; b < kBucketCount; ++b) {
    seen += buckets_[b];
    if (seen >= rank) {
      const int64_t edge = static_cast<int64_t>(BucketUpperEdge(b));
      return std::clamp(edge, min_, max_);
    }
  }
  return max_;
}

}  // namespace dmls::load
