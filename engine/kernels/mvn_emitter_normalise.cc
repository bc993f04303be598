// MvnEmitter: the normalisation of a group's elements (Normalise, Affine).
#include "engine/kernels/mvn_emitter.h"

#include <limits>
#include <optional>
#include <vector>

namespace dmls::gpu::mvn_emit {

void MvnEmitter::Normalise(const MvnStat& st, Operand ref, std::vector<Elem>& el,
                           const std::vector<Operand>* sb_base) {
  NormaliseValues(st, ref, el, sb_base);
  if (vec4_) {
    if (!sb_base) StoreTexels(el);
    return;
  }
  for (size_t j = 0; j < el.size(); ++j) {
    if (key_.data_type == DataType::kFloat16) {
      StorePair(el[j].y, el[j].out_off, el[j].ok, el[j + 1].y, el[j + 1].out_off, el[j + 1].ok);
      ++j;
      continue;
    }
    b_.IfNz(el[j].ok);
    Store(el[j].y, el[j].out_off);
    b_.EndIf();
  }
}

void MvnEmitter::NormaliseValues(const MvnStat& st, Operand ref, std::vector<Elem>& el,
                                 const std::vector<Operand>* sb_base) {
  const uint32_t sb_batch =
      IsWideRow(key_) && key_.data_type == DataType::kFloat16 ? 4 : 1;
  Operand inv = T(), rs = T(), rstd = T();
  stats_.InverseScale(st.s, inv);
  if (!stats_.exact_mean()) stats_.ScaledRef(rs, ref, inv);  // exact: no shift
  MathEmitter math(b_, "x", CB0(2).y());  // MvnArgs::pad[0], always 0
  if (MathEmitter::UsesFusedMad(key_.fused)) math.PrepareFusedMad();
  if (key_.normalize_variance) {
    // eps/s^2 as two products, laundered in between: 1/s reaches 2^126,
    // and a compiler that reassociated eps*(1/s * 1/s) would make
    // 0*inf = NaN of Epsilon 0. The first takes a denormal Epsilon
    // exactly (ScaledProduct): the H100 flushed Epsilon = 1.4e-45 to 0
    // (random/2997 of a fresh seed; for values at most 2^-126, 1/s =
    // 2^126 and eps/s is normal).
    Operand eps = T(), fin = T(), alt = T();
    math.ScaledProduct(eps, CB0(1).x(), inv);
    math.Launder(eps);
    b_.Mul(eps, eps, inv);
    math.IsFinite(fin, eps);
    b_.Div(rstd, st.M, st.n);
    b_.Add(rstd, rstd, eps);
    b_.Sqrt(rstd, rstd);
    b_.Div(rstd, F(1.0f), rstd);
    // eps/s^2 overflows for small values and a huge Epsilon (0.1 and
    // FLT_MAX, random/0674): the variance (M/n < 16) is then negligible
    // beside it, and rstd = s/sqrt(eps), not 0 (a fused activation may
    // scale the tiny result back up: LEAKY_RELU with Alpha = inf).
    b_.Sqrt(alt, CB0(1).x());
    b_.Div(alt, st.s, alt);
    b_.Movc(rstd, fin, rstd, alt);
    // A nonzero Epsilon lost to underflow or flushing (eps/s^2 below the
    // float range: a constant group of huge values, or a denormal eps/s^2
    // on the H100) leaves 1/sqrt(0) = inf only where M = 0, a constant
    // group whose deviations are all 0: FLT_MAX keeps 0 * rstd = 0.
    // Epsilon 0 keeps 0/0 = NaN (§4.3.1).
    Operand lost = T(), nz = T();
    math.IsInf(lost, rstd);
    b_.And(nz, CB0(1).x(), U(0x7fffffffu));
    b_.INe(nz, nz, U(0));
    b_.And(lost, lost, nz);
    b_.Movc(rstd, lost, F(std::numeric_limits<float>::max()), rstd);
  } else {
    b_.Mov(rstd, st.s);
  }
  const ActivationParams params{CB0(1).y(), CB0(1).z(), CB0(1).w(), CB0(2).x()};
  std::optional<ExactMean> exact;
  if (stats_.exact_mean()) {
    exact = ExactMean{inv, T(), T()};
    stats_.MeanOf(exact->c_hi, exact->c_lo, st);
  }
  for (size_t j = 0; j < el.size(); ++j) {
    Elem& e = el[j];
    const uint32_t k = static_cast<uint32_t>(j / lanes_);
    if (sb_base && j % (lanes_ * sb_batch) == 0) ScaleBiasTexels(el, *sb_base, k, sb_batch);
    if (exact) {
      e.x = e.y;
      e.y = T();
      stats_.Deviation(e.y, e.x, inv, exact->c_hi, exact->c_lo);
    } else {
      stats_.Shifted(e.y, e.y, inv, rs);
      b_.Add(e.y, e.y, st.m.Neg());
    }
    Affine(math, e, rstd, params, exact ? &*exact : nullptr);
    b_.And(e.ok, e.ok, valid_);
    if (sb_base && j % lanes_ == lanes_ - 1) StoreTexel(el, k);
  }
}

void MvnEmitter::Affine(MathEmitter& math, Elem& e, Operand rstd, const ActivationParams& params,
                        const ExactMean* exact) {
  const OperatorType op = key_.fused;
  // `beyond`: FLOAT32 overflow that matters: something after the product
  // can bring it back (Bias, an activation), and the product can overflow
  // at all (d*rstd stays below sqrt(N) when NormalizeVariance is TRUE:
  // only Scale takes it further). Elsewhere an overflow is the true
  // result's, and the branch cost plain MVN1 2-4% on the H100 (run 8),
  // except in the FLOAT32 wide row kernel (32 elements a thread), which
  // ran 7% faster with it (2,214 against 2,062 GB/s at 4,096 x 32,768,
  // runs 8 and 9; our reading: without the branches the compiler
  // interleaves the 32 elements and spills): it keeps the branch.
  const bool fp32 = key_.data_type == DataType::kFloat32;
  const bool wide = IsWideRow(key_);
  const bool beyond = fp32 && (wide || ((key_.has_bias || op != OperatorType::kInvalid) &&
                                        (!key_.normalize_variance || key_.has_scale)));
  const bool result = beyond && MathEmitter::BeyondRangeResult(op);
  const bool cancels = key_.has_bias && (exact || (fp32 && key_.has_scale));
  const int param = beyond ? MathEmitter::BeyondRangeParam(op) : -1;
  Operand pre = T();
  MathEmitter::BeyondRangeIo io{pre, params, Operand(), Operand()};
  if (param >= 0) {
    Operand& c = param == 0 ? io.params.p0 : io.params.p1;
    Operand own = T();
    b_.Mov(own, c);
    c = own;
  }
  if (result) {
    io.done = T();
    io.result = T();
    b_.Mov(io.done, U(0));
  }
  const uint32_t mark = b_.TempMark();
  Operand q = T(), p = q;
  b_.Mul(q, e.y, rstd);
  if (key_.has_scale) {
    p = T();
    b_.Mul(p, q, e.s);
  }
  if (key_.has_bias) {
    b_.Add(pre, p, e.bias);
  } else {
    b_.Mov(pre, p);
  }
  if (beyond || cancels) {
    Operand slow = T();
    if (beyond) {
      math.IsFinite(slow, pre);
      b_.Not(slow, slow);
    } else {
      b_.Mov(slow, U(0));
    }
    if (cancels) {
      Operand half = T();
      b_.Mul(half, p.Abs(), F(0.5f));
      b_.Lt(half, pre.Abs(), half);
      b_.Or(slow, slow, half);
    }
    b_.IfNz(slow);
    if (cancels) {
      Operand sum = T(), ok = T(), lo = T();
      const Operand scale = key_.has_scale ? e.s : F(1.0f);
      if (exact) {
        stats_.DeviationLow(lo, e.y, e.x, exact->inv, exact->c_hi, exact->c_lo);
        b_.Mul(lo, lo, rstd);
        b_.Mul(lo, lo, scale);
      } else {
        b_.Mov(lo, F(0.0f));
      }
      math.ExactMad(sum, q, scale, e.bias, &lo);
      math.IsFinite(ok, sum);
      b_.Movc(pre, ok, sum, pre);
    }
    if (beyond) {
      Operand finite = T();
      math.IsFinite(finite, pre);
      b_.IfZ(finite);
      MathEmitter::AffineTerms terms{e.y, rstd};
      if (key_.has_scale) terms.s = &e.s;
      if (key_.has_bias) terms.b = &e.bias;
      math.AffineBeyondRange(op, terms, io);
      b_.EndIf();
    }
    b_.EndIf();
  }
  b_.RewindTemps(mark);
  if (op != OperatorType::kInvalid) math.Activation(op, pre, io.params);
  b_.RewindTemps(mark);
  if (result) b_.Movc(pre, io.done, io.result, pre);
  e.y = pre;
}
}  // namespace dmls::gpu::mvn_emit
