// MvnStatsEmitter: emits the statistics of the MVN kernels, safe from
// overflow (OPERATORS.md §4.3.1, §7.4) and from denormal flushing (§7.5).
// A statistic (n, m, M, s) is the count, mean and sum of squared deviations
// of the values (x - ref) / s, where ref is the group's first element (0
// when it is not finite) and s = 2^E a power of two with
// 2^E <= max|x| < 2^(E+1), E clamped to [-126, 126]: the scaled values stay
// below 4, so no square or sum overflows where the exact result is finite,
// and a group of tiny values (1e-21, whose float32 variance is denormal)
// keeps a normal variance on hardware that flushes denormals to zero (the
// H100 does). Scaling by a power of two is exact, so the statistics are
// those of unscaled arithmetic wherever that neither overflows nor
// underflows. Statistics of different scales combine at the larger one
// (Chan et al.); an empty statistic (n = 0) combines as the identity,
// whatever its scale. Infinite members keep the formula of §4.3.1: the
// mean becomes ±inf (NaN when both signs occur) instead of NaN.
// Every exponent is computed on integer bits, never from a float that
// could have been flushed.
// Exact-mean mode (NormalizeVariance FALSE, whose output (x - mean)*Scale +
// Bias shows the mean's rounding error unscaled: a float32 mean of
// +-9.3e18 values was 2^37 off, the result 0 for 0.41): a statistic is
// (n, S, S_lo, s), S + S_lo the compensated sum of x/s (exact terms: s is
// a power of two), no sum of squares; the mean (MeanOf) is exact where
// the sum fits 48 bits, else within about 2^-48 of the values' scale.
// Infinite members make S +-inf (or NaN) and S_lo 0.
// Holds a reference to the builder; single-threaded like ShaderBuilder.
#ifndef DMLSERVE_ENGINE_KERNELS_MVN_STATS_EMIT_H_
#define DMLSERVE_ENGINE_KERNELS_MVN_STATS_EMIT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "engine/kernels/activation_emit.h"
#include "engine/dxbc/operand.h"
#include "engine/dxbc/shader_builder.h"

namespace dmls::gpu {

// Four temps' .x components.
struct MvnStat {
  Operand n, m, M, s;
};

class MvnStatsEmitter {
 public:
  // `zero` is a constant-block word that is always 0 at run time (see
  // Shifted).
  MvnStatsEmitter(ShaderBuilder& b, Operand zero, bool exact_mean = false)
      : b_(b), math_(b, "x", zero), exact_mean_(exact_mean) {}
  bool exact_mean() const { return exact_mean_; }

  MvnStat NewStat();
  // ref <- ref if finite, else 0.
  void MakeFinite(Operand ref);
  // The scale of values whose magnitudes are at most `amax` (a non-negative
  // float; 0, denormal, inf or NaN allowed): s and 1/s, both normal.
  void ScaleFor(Operand amax, Operand s, Operand inv_s);
  // 1/s of a scale s.
  void InverseScale(Operand s, Operand inv_s);
  // d = x/s - ref/s (exact: x and ref scale by a power of two and their
  // difference is exact where the offset matters), laundered through
  // xor with zero: vkd3d 1.2's SPIR-V carries no exactness, and Mesa's NIR
  // (lavapipe) otherwise reassociates (x*inv - rs) - m into x*inv - (rs + m),
  // rounding the group's mean to the data's magnitude (1e4 + U(-0.05,
  // 0.05) lost a third of an ulp of 1e4 in its mean).
  void Shifted(Operand d, Operand x, Operand inv, Operand rs);
  // Exact-mean mode: the group's mean of x/s as c_hi + c_lo (c_lo 0 where
  // c_hi is not finite).
  void MeanOf(Operand c_hi, Operand c_lo, const MvnStat& st);
  // d = x/s - (c_hi + c_lo), exact to a rounding of d: two subtractions.
  void Deviation(Operand d, Operand x, Operand inv, Operand c_hi, Operand c_lo);
  // The rounding error of that d (d + d_lo = x/s - c_hi - c_lo to about
  // 2^-48), for the elements where a cancellation shows it.
  void DeviationLow(Operand d_lo, Operand d, Operand x, Operand inv, Operand c_hi, Operand c_lo);
  // rs = ref/s (ref * inv), laundered through xor with zero: a compiler
  // that sees x*inv - ref*inv may factor it into (x - ref)*inv, which
  // overflows where x and ref are huge and of opposite signs (NVIDIA's
  // fast math is free to; the scaling exists to avoid exactly that).
  void ScaledRef(Operand rs, Operand ref, Operand inv);
  // A thread's statistic of x[j] (float32) where ok[j] != 0; `ref` finite.
  // An empty `ok` counts every x[j] and emits no mask (a thread whose
  // elements are all inside its group): the same bits as all-true masks.
  MvnStat Local(const std::vector<Operand>& x, const std::vector<Operand>& ok, Operand ref);
  // Local into the temps of `st`, so that both sides of a branch can
  // write one statistic.
  void LocalInto(const MvnStat& st, const std::vector<Operand>& x, const std::vector<Operand>& ok,
                 Operand ref);
  // a <- a combined with b (b unchanged; a = b when a is empty).
  void Combine(const MvnStat& a, const MvnStat& b);
  // Combines every thread's statistic over the workgroup through
  // group-shared memory g0 (16 bytes per thread, declared by the caller);
  // afterwards every thread holds the group's statistic. With `active`
  // (a uniform value, e.g. a constant-block word) only threads below it
  // hold data, and the levels that would combine empty statistics only are
  // skipped (uniform branches around the barriers).
  void GroupReduce(const MvnStat& st, Operand tid, uint32_t threads);
  void GroupReduce(const MvnStat& st, Operand tid, uint32_t threads, Operand active);
  // GroupReduce where every thread's statistic counts exactly `count`
  // elements: with a power of two, each level's weights are constants (no
  // division, no empty side); the same bits as GroupReduce.
  void GroupReduceFull(const MvnStat& st, Operand tid, uint32_t threads, uint32_t count);

 private:
  void Reduce(const MvnStat& st, Operand tid, uint32_t threads, std::optional<Operand> active,
              std::optional<uint32_t> count);
  // Reduce without `active`: several levels of the tree between two
  // barriers, the same bits.
  void ReduceByBarriers(const MvnStat& st, Operand addr, Operand tid, uint32_t threads,
                        std::optional<uint32_t> count, const std::function<void()>& store_own);
  // After the last level: every thread takes the group's statistic (entry
  // 0) through `other` (a whole temp).
  void LoadResult(const MvnStat& st, Operand other);
  // Combine where both sides count `count` elements (GroupReduceFull).
  void Combine(const MvnStat& a, const MvnStat& b, std::optional<uint32_t> count);
  // Exact-mean forms of Local and Combine.
  void LocalSum(const MvnStat& st, const std::vector<Operand>& x, const std::vector<Operand>& ok,
                Operand inv);
  void CombineSum(const MvnStat& a, const MvnStat& b);
  // The larger scale st of a and b, and the factors fa, fb (powers of two
  // as float bits) that bring each side's values to it.
  void CommonScale(const MvnStat& a, const MvnStat& b, Operand st, Operand fa, Operand fb);
  // a <- (n, m, M, s), except that an empty a takes b and an empty b
  // leaves a as it was.
  void Assign(const MvnStat& a, const MvnStat& b, Operand n, Operand m, Operand M, Operand s);
  Operand T() { return b_.NewTemp().x(); }
  ShaderBuilder& b_;
  // Launder and the bit-level finiteness test (activation_emit.h).
  MathEmitter math_;
  bool exact_mean_;
};

// Group-shared bytes GroupReduce needs per thread.
inline constexpr uint32_t kMvnStatBytes = 16;

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_KERNELS_MVN_STATS_EMIT_H_
