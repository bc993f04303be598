#include "engine/kernels/mvn_stats_emit.h"

#include <functional>
#include <optional>

namespace dmls::gpu {
namespace {

// Tree levels of GroupReduce between two barriers (ReduceByBarriers) in
// workgroups of `threads`. Two levels took the FLOAT16 wide row (1,024
// threads) from 217 to 208 us at 4,096 x 32,768 and the long-span partial
// (256) from 258 to 251 us at 512 x 262,143 on the H200; three were slower
// than two, and the 64-thread row lost with two (100.5 against 106.1 us at
// 65,536 x 1,024: 47 against 55 registers). docs/perf/h200-mvn28-2026-11-28.
uint32_t LevelsPerBarrier(uint32_t threads) { return threads >= 256 ? 2 : 1; }

// Largest |E|: 2^-126 is the smallest normal power of two, and 2^126 the
// largest whose inverse is normal.
constexpr int32_t kMaxScaleExponent = 126;
constexpr uint32_t kOneBits = 0x3f800000;

}  // namespace

MvnStat MvnStatsEmitter::NewStat() { return MvnStat{T(), T(), T(), T()}; }

void MvnStatsEmitter::MakeFinite(Operand ref) {
  Operand fin = T();
  math_.IsFinite(fin, ref);  // on the bits: false for ±inf and NaN
  b_.Movc(ref, fin, ref, F(0.0f));
}

void MvnStatsEmitter::ScaleFor(Operand amax, Operand s, Operand inv_s) {
  // E = the unbiased exponent of amax, on its bits (a float test would see
  // a flushed amax), clamped to [-126, 126]: zero and denormal amax give
  // -126, inf and NaN 126.
  Operand e = T();
  b_.UShr(e, amax, U(23));
  b_.And(e, e, U(0xff));
  b_.IAdd(e, e, I(-127));
  b_.IMin(e, e, I(kMaxScaleExponent));
  b_.IMax(e, e, I(-kMaxScaleExponent));
  b_.IAdd(s, e, U(127));
  b_.IShl(s, s, U(23));  // 2^E
  InverseScale(s, inv_s);
}

void MvnStatsEmitter::InverseScale(Operand s, Operand inv_s) {
  // bits(2^-E) = (127 - E) << 23 = 2 * bits(1) - bits(2^E).
  b_.INeg(inv_s, s);
  b_.IAdd(inv_s, inv_s, U(2 * kOneBits));
}

void MvnStatsEmitter::ScaledRef(Operand rs, Operand ref, Operand inv) {
  b_.Mul(rs, ref, inv);
  math_.Launder(rs);
}

void MvnStatsEmitter::Shifted(Operand d, Operand x, Operand inv, Operand rs) {
  b_.Mul(d, x, inv);
  b_.Add(d, d, rs.Neg());
  math_.Launder(d);
}

MvnStat MvnStatsEmitter::Local(const std::vector<Operand>& x, const std::vector<Operand>& ok,
                               Operand ref) {
  MvnStat st = NewStat();
  LocalInto(st, x, ok, ref);
  return st;
}

void MvnStatsEmitter::LocalInto(const MvnStat& st, const std::vector<Operand>& x,
                                const std::vector<Operand>& ok, Operand ref) {
  const bool masked = !ok.empty();
  Operand amax = T(), a = T(), inv = T(), rs = T(), d = T(), one = T(), pos = T();
  b_.Mov(amax, ref.Abs());
  for (size_t j = 0; j < x.size(); ++j) {
    if (masked) {
      b_.Movc(a, ok[j], x[j], F(0.0f));
      b_.Max(amax, amax, a.Abs());
    } else {
      b_.Max(amax, amax, x[j].Abs());
    }
  }
  ScaleFor(amax, st.s, inv);
  if (exact_mean_) {
    LocalSum(st, x, ok, inv);
    return;
  }
  ScaledRef(rs, ref, inv);
  // Pass 1: count and mean of d = x/s - ref/s (x - ref when s = 1). A
  // masked element adds +0, which leaves every sum as it was.
  b_.Mov(st.n, F(masked ? 0.0f : static_cast<float>(x.size())));
  b_.Mov(st.m, F(0.0f));
  for (size_t j = 0; j < x.size(); ++j) {
    Shifted(d, x[j], inv, rs);
    if (masked) {
      b_.Movc(d, ok[j], d, F(0.0f));
      b_.Movc(one, ok[j], F(1.0f), F(0.0f));
      b_.Add(st.n, st.n, one);
    }
    b_.Add(st.m, st.m, d);
  }
  b_.Lt(pos, F(0.0f), st.n);
  b_.Div(st.m, st.m, st.n);
  b_.Movc(st.m, pos, st.m, F(0.0f));
  // Pass 2: sum of squared deviations (two-pass within the thread).
  b_.Mov(st.M, F(0.0f));
  for (size_t j = 0; j < x.size(); ++j) {
    Shifted(d, x[j], inv, rs);
    b_.Add(d, d, st.m.Neg());
    if (masked) b_.Movc(d, ok[j], d, F(0.0f));
    b_.Mad(st.M, d, d, st.M);
  }
}

void MvnStatsEmitter::MeanOf(Operand c_hi, Operand c_lo, const MvnStat& st) {
  // c_hi = S/n; S - c_hi*n is exact (ExactMad: the residual of a division
  // is representable), and c_lo = (that + S_lo)/n. An empty group gives
  // (0, 0).
  Operand pos = T(), r = T(), nm = T(), fin = T();
  b_.Div(c_hi, st.m, st.n);
  b_.Mov(nm, c_hi.Neg());
  math_.ExactMad(r, nm, st.n, st.m);
  b_.Add(r, r, st.M);
  b_.Div(c_lo, r, st.n);
  b_.Lt(pos, F(0.0f), st.n);
  b_.Movc(c_hi, pos, c_hi, F(0.0f));
  math_.IsFinite(fin, c_hi);
  b_.And(pos, pos, fin);
  b_.Movc(c_lo, pos, c_lo, F(0.0f));
}

void MvnStatsEmitter::Deviation(Operand d, Operand x, Operand inv, Operand c_hi, Operand c_lo) {
  // x/s - c_hi is exact where x/s is within a factor of 2 of c_hi
  // (Sterbenz), the members near the mean; elsewhere |d| >= |c_hi|/2 and
  // its rounding is within an ulp of d. Laundered so that no compiler
  // forms c_hi + c_lo first.
  b_.Mul(d, x, inv);
  math_.Launder(d);
  b_.Add(d, d, c_hi.Neg());
  math_.Launder(d);
  b_.Add(d, d, c_lo.Neg());
}

void MvnStatsEmitter::DeviationLow(Operand d_lo, Operand d, Operand x, Operand inv, Operand c_hi,
                                   Operand c_lo) {
  Operand t = T(), fin = T();
  b_.Mul(t, x, inv);
  math_.Launder(t);
  b_.Mov(d_lo, F(0.0f));
  math_.TwoSum(t, d_lo, c_hi.Neg());
  math_.TwoSum(t, d_lo, c_lo.Neg());
  b_.Add(t, t, d.Neg());  // 0 unless a compiler rounded d differently
  b_.Add(d_lo, d_lo, t);
  math_.IsFinite(fin, d_lo);
  b_.Movc(d_lo, fin, d_lo, F(0.0f));
}

void MvnStatsEmitter::LocalSum(const MvnStat& st, const std::vector<Operand>& x,
                               const std::vector<Operand>& ok, Operand inv) {
  // A compensated sum of x/s (exact values: s is a power of two).
  Operand xs = T(), one = T();
  b_.Mov(st.n, F(ok.empty() ? static_cast<float>(x.size()) : 0.0f));
  b_.Mov(st.m, F(0.0f));
  b_.Mov(st.M, F(0.0f));
  for (size_t j = 0; j < x.size(); ++j) {
    const uint32_t mark = b_.TempMark();  // TwoSum's temps: reused per element
    b_.Mul(xs, x[j], inv);
    math_.Launder(xs);
    if (!ok.empty()) b_.Movc(xs, ok[j], xs, F(0.0f));
    math_.TwoSum(st.m, st.M, xs);
    if (!ok.empty()) {
      b_.Movc(one, ok[j], F(1.0f), F(0.0f));
      b_.Add(st.n, st.n, one);
    }
    b_.RewindTemps(mark);
  }
  Operand fin = T();
  math_.IsFinite(fin, st.M);  // NaN beside an infinite member
  b_.Movc(st.M, fin, st.M, F(0.0f));
}

void MvnStatsEmitter::CombineSum(const MvnStat& a, const MvnStat& b) {
  // Both sums at the larger scale (as Combine; exact), added with TwoSum.
  Operand st = T(), fa = T(), fb = T();
  CommonScale(a, b, st, fa, fb);
  Operand hi = T(), lo = T(), t = T(), fin = T(), total = T();
  b_.Mul(hi, a.m, fa);
  b_.Mul(lo, a.M, fa);
  b_.Mul(t, b.M, fb);
  b_.Add(lo, lo, t);
  b_.Mul(t, b.m, fb);
  math_.TwoSum(hi, lo, t);
  math_.IsFinite(fin, lo);  // NaN beside an infinite sum
  b_.Movc(lo, fin, lo, F(0.0f));
  b_.Add(total, a.n, b.n);
  Assign(a, b, total, hi, lo, st);
}

void MvnStatsEmitter::CommonScale(const MvnStat& a, const MvnStat& b, Operand st, Operand fa,
                                  Operand fb) {
  // Factors 2^(E - Et) as exponent arithmetic (exact). E - Et may be as
  // low as -252: a biased exponent <= 0 is clamped to the bits of +0 (the
  // smaller side is then below 2^-126 of the larger one; FTZ hardware
  // would flush its products anyway).
  Operand nst = T();
  b_.Max(st, a.s, b.s);
  b_.INeg(nst, st);
  b_.IAdd(nst, nst, U(kOneBits));
  b_.IAdd(fa, a.s, nst);
  b_.IAdd(fb, b.s, nst);
  b_.IMax(fa, fa, I(0));
  b_.IMax(fb, fb, I(0));
}

void MvnStatsEmitter::Assign(const MvnStat& a, const MvnStat& b, Operand n, Operand m, Operand M,
                             Operand s) {
  // An empty side (n = +0, on the bits) leaves the other one unchanged,
  // scale included: the result never depends on an empty statistic's
  // scale, nor on wb = n/n being exactly 1.
  Operand a_empty = T(), b_empty = T();
  b_.IEq(a_empty, a.n, U(0));
  b_.IEq(b_empty, b.n, U(0));
  b_.Movc(m, b_empty, a.m, m);
  b_.Movc(a.m, a_empty, b.m, m);
  b_.Movc(M, b_empty, a.M, M);
  b_.Movc(a.M, a_empty, b.M, M);
  b_.Movc(s, b_empty, a.s, s);
  b_.Movc(a.s, a_empty, b.s, s);
  b_.Mov(a.n, n);
}

void MvnStatsEmitter::Combine(const MvnStat& a, const MvnStat& b) { Combine(a, b, std::nullopt); }

void MvnStatsEmitter::Combine(const MvnStat& a, const MvnStat& b, std::optional<uint32_t> count) {
  if (exact_mean_) {
    CombineSum(a, b);
    return;
  }
  // Bring both to the larger scale (CommonScale); M scales by the
  // factors' squares.
  Operand st = T(), fa = T(), fb = T(), ma = T(), Ma = T(), mb = T(), Mb = T();
  CommonScale(a, b, st, fa, fb);
  b_.Mul(ma, a.m, fa);
  b_.Mul(Ma, a.M, fa);
  b_.Mul(Ma, Ma, fa);
  b_.Mul(mb, b.m, fb);
  b_.Mul(Mb, b.M, fb);
  b_.Mul(Mb, Mb, fb);
  Operand total = T(), delta = T(), inv = T(), pos = T(), wb = T(), wa = T(), t = T();
  Operand fin = T(), safe = T();
  // With `count` (both sides count that many elements, a power of two)
  // the weights are exact constants: 1/total and n/total = 0.5 are the
  // bits the division and products give, so the result is the same.
  const Operand na = count ? F(static_cast<float>(*count)) : a.n;
  Operand w_b = wb, w_a = wa;
  if (count) {
    b_.Mov(total, F(2.0f * static_cast<float>(*count)));
    b_.Add(delta, mb, ma.Neg());
    w_b = F(0.5f);
    w_a = F(0.5f);
  } else {
    b_.Add(total, a.n, b.n);
    b_.Add(delta, mb, ma.Neg());
    b_.Lt(pos, F(0.0f), total);
    b_.Div(inv, F(1.0f), total);
    b_.Movc(inv, pos, inv, F(0.0f));
    b_.Mul(wb, b.n, inv);
    b_.Mul(wa, a.n, inv);
  }
  b_.Mul(t, delta, delta);
  b_.Mul(t, t, na);
  b_.Mul(t, t, w_b);
  // Mean: ma + delta * wb, unless delta is not finite (an infinite member):
  // then the weighted sum, which keeps ±inf where the exact mean is ±inf.
  b_.Mul(safe, mb, w_b);
  b_.Mad(safe, ma, w_a, safe);
  b_.Mad(ma, delta, w_b, ma);
  math_.IsFinite(fin, delta);
  b_.Movc(ma, fin, ma, safe);
  b_.Add(Ma, Ma, Mb);
  b_.Add(Ma, Ma, t);
  if (count) {  // neither side is empty
    b_.Mov(a.n, total);
    b_.Mov(a.m, ma);
    b_.Mov(a.M, Ma);
    b_.Mov(a.s, st);
    return;
  }
  Assign(a, b, total, ma, Ma, st);
}

void MvnStatsEmitter::GroupReduce(const MvnStat& st, Operand tid, uint32_t threads) {
  Reduce(st, tid, threads, std::nullopt, std::nullopt);
}

void MvnStatsEmitter::GroupReduce(const MvnStat& st, Operand tid, uint32_t threads,
                                  Operand active) {
  Reduce(st, tid, threads, active, std::nullopt);
}

void MvnStatsEmitter::GroupReduceFull(const MvnStat& st, Operand tid, uint32_t threads,
                                      uint32_t count) {
  const bool power_of_two = count != 0 && (count & (count - 1)) == 0;
  Reduce(st, tid, threads, std::nullopt, power_of_two ? std::optional<uint32_t>(count) : std::nullopt);
}

void MvnStatsEmitter::Reduce(const MvnStat& st, Operand tid, uint32_t threads,
                             std::optional<Operand> active, std::optional<uint32_t> count) {
  Operand addr = T(), pk = b_.NewTemp();
  b_.IMul(addr, tid, U(kMvnStatBytes));
  auto store_own = [&]() {
    b_.Mov(pk.x(), st.n);
    b_.Mov(pk.y(), st.m);
    b_.Mov(pk.z(), st.M);
    b_.Mov(pk.w(), st.s);
    b_.StoreRaw(Operand::GroupShared(0).Comps("xyzw"), addr, pk);
  };
  store_own();
  if (!active && LevelsPerBarrier(threads) > 1) {
    ReduceByBarriers(st, addr, tid, threads, count, store_own);
    return;
  }
  Operand other = b_.NewTemp(), cond = T(), oaddr = T(), needed = T();
  MvnStat o{other.x(), other.y(), other.z(), other.w()};
  for (uint32_t s = threads / 2; s >= 1; s /= 2, count = count ? std::optional(*count * 2) : count) {
    // Level s combines thread t < s with t + s: nothing when active <= s.
    if (active) {
      b_.ULt(needed, U(s), *active);
      b_.IfNz(needed);
    }
    b_.SyncGroup();
    b_.ULt(cond, tid, U(s));
    b_.IfNz(cond);
    b_.IAdd(oaddr, addr, U(s * kMvnStatBytes));
    b_.LdRaw(other.Comps("xyzw"), oaddr, Operand::GroupShared(0));
    Combine(st, o, count);
    store_own();
    b_.EndIf();
    if (active) b_.EndIf();
  }
  LoadResult(st, other);
}

void MvnStatsEmitter::LoadResult(const MvnStat& st, Operand other) {
  b_.SyncGroup();
  b_.LdRaw(other.Comps("xyzw"), U(0), Operand::GroupShared(0));
  b_.Mov(st.n, other.x());
  b_.Mov(st.m, other.y());
  b_.Mov(st.M, other.z());
  b_.Mov(st.s, other.w());
}

void MvnStatsEmitter::ReduceByBarriers(const MvnStat& st, Operand addr, Operand tid,
                                       uint32_t threads, std::optional<uint32_t> count,
                                       const std::function<void()>& store_own) {
  // Levels s, s/2, ..., f of the tree after one barrier: thread t < f
  // loads the entries t + j*f (j > 0) that its subtree combines and
  // combines them in the tree's order (entry j with j + h at stride h*f),
  // so the bits are the level-by-level tree's.
  Operand cond = T(), oaddr = T();
  for (uint32_t s = threads / 2; s >= 1;) {
    uint32_t levels = 1;
    while (levels < LevelsPerBarrier(threads) && (s >> levels) >= 1) ++levels;
    const uint32_t f = s >> (levels - 1);
    const uint32_t entries = 1u << levels;
    b_.SyncGroup();
    b_.ULt(cond, tid, U(f));
    b_.IfNz(cond);
    std::vector<MvnStat> e = {st};
    for (uint32_t j = 1; j < entries; ++j) {
      Operand r = b_.NewTemp();
      b_.IAdd(oaddr, addr, U(j * f * kMvnStatBytes));
      b_.LdRaw(r.Comps("xyzw"), oaddr, Operand::GroupShared(0));
      e.push_back(MvnStat{r.x(), r.y(), r.z(), r.w()});
    }
    for (uint32_t h = entries / 2; h >= 1; h /= 2) {
      for (uint32_t j = 0; j < h; ++j) Combine(e[j], e[j + h], count);
      if (count) count = *count * 2;
    }
    store_own();
    b_.EndIf();
    s = f / 2;
  }
  LoadResult(st, b_.NewTemp());
}

}  // namespace dmls::gpu
