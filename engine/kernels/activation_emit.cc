#include "engine/kernels/activation_emit.h"

#include <cmath>

namespace dmls::gpu {
namespace {

constexpr float kLog2e = 1.44269502162933349609375f;     // float(log2(e))
constexpr float kLog2eLo = 1.925963033500011e-08f;        // log2(e) - kLog2e
constexpr float kLn2 = 0.693147182464599609375f;
// kLog2e split into 12 significant bits each (kLog2eH + kLog2eL == kLog2e
// exactly), so that x_hi*kLog2eH etc. are exact float products.
constexpr float kLog2eH = 1.4423828125f;               // 0x3fb8a000
constexpr float kLog2eL = kLog2e - kLog2eH;
constexpr uint32_t kSignBit = 0x80000000u;
constexpr uint32_t kPosInf = 0x7f800000u;
constexpr uint32_t kOne = 0x3f800000u;

bool IsSigned32(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt16 || t == DataType::kInt32;
}

}  // namespace

bool IsSupportedActivation(OperatorType op) {
  switch (op) {
    case OperatorType::kActivationIdentity:
    case OperatorType::kActivationRelu:
    case OperatorType::kActivationLeakyRelu:
    case OperatorType::kActivationLinear:
    case OperatorType::kActivationElu:
    case OperatorType::kActivationCelu:
    case OperatorType::kActivationScaledElu:
    case OperatorType::kActivationHardSigmoid:
    case OperatorType::kActivationSigmoid:
    case OperatorType::kActivationTanh:
    case OperatorType::kActivationScaledTanh:
    case OperatorType::kActivationSoftplus:
    case OperatorType::kActivationParametricSoftplus:
    case OperatorType::kActivationSoftsign:
    case OperatorType::kActivationThresholdedRelu:
    case OperatorType::kActivationShrink:
    case OperatorType::kActivationGelu:
      return true;
    default:
      return false;
  }
}

void MathEmitter::IsNan(Operand d, Operand x) {
  b_.And(d, x, U(0x7fffffffu));
  b_.ULt(d, U(kPosInf), d);
}

void MathEmitter::IsFinite(Operand d, Operand x) {
  b_.And(d, x, U(0x7fffffffu));
  b_.ULt(d, d, U(kPosInf));
}

void MathEmitter::IsInf(Operand d, Operand x) {
  b_.And(d, x, U(0x7fffffffu));
  b_.IEq(d, d, U(kPosInf));
}

void MathEmitter::MaxNum(Operand d, Operand a, Operand b) { MinMaxNum(d, a, b, true); }

void MathEmitter::MinNum(Operand d, Operand a, Operand b) { MinMaxNum(d, a, b, false); }

void MathEmitter::MinMaxNum(Operand d, Operand a, Operand b, bool max) {
  // The driver's min/max may propagate NaN: pick the other operand
  // explicitly (IEEE-754R minNum/maxNum, OPERATORS.md §7.3).
  Operand na = Tmp(), nb = Tmp(), r = Tmp();
  IsNan(na, a);
  IsNan(nb, b);
  if (max) {
    b_.Max(r, a, b);
  } else {
    b_.Min(r, a, b);
  }
  b_.Movc(r, na, b, r);
  b_.Movc(d, nb, a, r);
}

void MathEmitter::OrderedLess(Operand d, Operand a, Operand b) {
  // key(f) = sign clear ? bits | 2^31 : ~bits, compared unsigned: the IEEE
  // order for non-NaN values, except that -0 sorts below +0; a pair of
  // zeros is therefore answered "not less" explicitly.
  auto key = [&](Operand k, Operand f) {
    Operand neg = Tmp(), inv = Tmp();
    b_.IShr(neg, f, U(31));          // all ones when the sign bit is set
    b_.Not(inv, f);
    b_.Or(k, f, U(0x80000000u));
    b_.Movc(k, neg, inv, k);
  };
  Operand ka = Tmp(), kb = Tmp(), both_zero = Tmp();
  key(ka, a);
  key(kb, b);
  b_.ULt(d, ka, kb);
  b_.Or(both_zero, a, b);
  b_.And(both_zero, both_zero, U(0x7fffffffu));
  b_.IEq(both_zero, both_zero, U(0));
  b_.Movc(d, both_zero, U(0), d);
  // The keys order NaNs too (a -NaN below every number), so a NaN operand
  // must be answered "not less" explicitly: a -NaN Alpha of THRESHOLDED_RELU
  // passed every x through (found by tests/robustness).
  Operand na = Tmp(), nb = Tmp();
  IsNan(na, a);
  IsNan(nb, b);
  b_.Or(na, na, nb);
  b_.Movc(d, na, U(0), d);
}

void MathEmitter::Exp(Operand d, Operand x) { ExpImpl(d, x, nullptr, 0); }

void MathEmitter::ExpScaled(Operand d, Operand x, int k) { ExpImpl(d, x, nullptr, k); }

void MathEmitter::ExpImpl(Operand d, Operand x, const Operand* x_lo, int k) {
  Operand hi = Tmp(), lo = Tmp();
  ExpArgument(hi, lo, x, x_lo);
  ExpFinish(d, hi, lo, k);
}

void MathEmitter::ExpArgument(Operand hi, Operand lo, Operand x, const Operand* x_lo) {
  if (half_) {
    // 2^-21 of relative error from exp2 and x*log2e's rounding are far
    // below a binary16 ulp: no compensation (ExpFinish ignores lo), and
    // x_lo (at most x*2^-24) is dropped too: it is NaN where x is infinite.
    b_.Mul(hi, x, F(kLog2e));
    b_.Mov(lo, F(0.0f));
    return;
  }
  Operand xv = Tmp(), xh = Tmp(), xl = Tmp(), t = Tmp();
  b_.Mov(xv, x);  // resolves operand modifiers before the bit operations
  b_.Mul(hi, xv, F(kLog2e));
  // The exact rounding error of xv*log2e as a Dekker product of 12-bit
  // halves (exact without a fused mad, which lavapipe lacks): for large
  // arguments it is worth up to |hi|*2^-24 of relative error in the result
  // (CELU with x/Alpha = 46 was 60 ulp off; found by tests/robustness).
  b_.And(xh, xv, U(0xfffff000u));
  b_.Add(xl, xv, xh.Neg());
  b_.Mul(lo, xh, F(kLog2eH));
  b_.Add(lo, lo, hi.Neg());
  b_.Mul(t, xh, F(kLog2eL));
  b_.Add(lo, lo, t);
  b_.Mul(t, xl, F(kLog2eH));
  b_.Add(lo, lo, t);
  b_.Mul(t, xl, F(kLog2eL));
  b_.Add(lo, lo, t);
  b_.Mad(lo, xv, F(kLog2eLo), lo);
  if (x_lo != nullptr) b_.Mad(lo, *x_lo, F(kLog2e), lo);
}

void MathEmitter::ExpFinish(Operand d, Operand hi, Operand lo, int k) {
  Operand h = hi, e2 = Tmp(), ok = Tmp(), c = Tmp();
  // hi + k loses the low bits of a small hi (-0.5 - 64 keeps 18 of its 24
  // bits: tens of ulp), so callers scale only where |hi| is large enough
  // for the sum to be exact (|hi| >= |k| / 2 suffices for |k| <= 64).
  if (k != 0) {
    h = Tmp();
    b_.Add(h, hi, F(static_cast<float>(k)));
  }
  b_.Exp2(e2, h);
  if (half_) {
    b_.Mov(d, e2);
    return;
  }
  // For |h| >= 128 the result is 0 or inf (or hi is inf and lo NaN): no
  // correction. (126 dropped it for exp2 results in [2^126, 2^128): 5e-6
  // of relative error at hi = 190, found by bench/accuracy.)
  b_.Lt(ok, h.Abs(), F(128.0f));
  b_.Mul(c, lo, F(kLn2));
  b_.Mad(c, e2, c, e2);  // e2 * (1 + lo*ln2)
  b_.Movc(d, ok, c, e2);  // never inf*0 for infinite arguments
}

void MathEmitter::Expm1OverX(Operand p, Operand q) {
  // 1 + q/2! + q^2/3! + ... ; the truncation error at |q| = 0.35 is
  // 0.35^8/9! (2e-10) for float32 and 0.35^5/6! (7e-6) for binary16.
  if (half_) {
    b_.Mov(p, F(1.0f / 720.0f));
    const float coeffs[] = {1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f};
    for (float c : coeffs) b_.Mad(p, p, q, F(c));
    return;
  }
  b_.Mov(p, F(1.0f / 362880.0f));
  const float coeffs[] = {1.0f / 40320.0f, 1.0f / 5040.0f, 1.0f / 720.0f, 1.0f / 120.0f,
                          1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f};
  for (float c : coeffs) b_.Mad(p, p, q, F(c));
}

void MathEmitter::Expm1Series(Operand d, Operand x) {
  Operand p = Tmp();
  Expm1OverX(p, x);
  b_.Mul(d, p, x);
}

void MathEmitter::Expm1(Operand d, Operand x) {
  Operand p = Tmp(), e = Tmp(), small = Tmp();
  Expm1Series(p, x);
  ExpImpl(e, x, nullptr, 0);
  b_.Add(e, e, F(-1.0f));
  b_.Lt(small, x.Abs(), F(0.35f));
  b_.Movc(d, small, p, e);
}

void MathEmitter::Log1p(Operand d, Operand z) {
  Operand w = Tmp(), w2 = Tmp(), s = Tmp(), big = Tmp(), small = Tmp();
  b_.Add(w, z, F(2.0f));
  b_.Div(w, z, w);  // w = z / (2 + z) <= 0.2
  b_.Mul(w2, w, w);
  b_.Mov(s, F(1.0f / 11.0f));
  const float coeffs[] = {1.0f / 9.0f, 1.0f / 7.0f, 1.0f / 5.0f, 1.0f / 3.0f, 1.0f};
  for (float c : coeffs) b_.Mad(s, s, w2, F(c));
  b_.Mul(s, s, w);
  b_.Add(s, s, s);  // 2 * atanh(w)
  b_.Add(big, z, F(1.0f));
  b_.Log2(big, big);
  b_.Mul(big, big, F(kLn2));
  b_.Lt(small, z, F(0.5f));
  b_.Movc(d, small, s, big);
}

void MathEmitter::Softplus(Operand d, Operand y) {
  Operand m = Tmp(), e = Tmp();
  Exp(e, y.Abs().Neg());
  Log1p(e, e);
  b_.Max(m, y, F(0.0f));
  // max() drops a NaN y; re-introduce it through the log term.
  Operand nan = Tmp();
  b_.Ne(nan, y, y);
  b_.Movc(m, nan, y, m);
  b_.Add(d, m, e);
}

void MathEmitter::Sigmoid(Operand d, Operand x) {
  Operand e = Tmp(), s = Tmp(), t = Tmp(), pos = Tmp();
  Exp(e, x.Abs().Neg());
  b_.Add(s, e, F(1.0f));
  b_.Div(s, F(1.0f), s);
  b_.Mul(t, e, s);
  b_.Ge(pos, x, F(0.0f));
  b_.Movc(d, pos, s, t);
}

void MathEmitter::Tanh(Operand d, Operand x) {
  Operand m = Tmp(), den = Tmp(), a = Tmp();
  b_.Mul(a, x.Abs(), F(-2.0f));
  Expm1(m, a);  // in [-1, 0]
  b_.Add(den, m, F(2.0f));
  b_.Div(m, m.Neg(), den);
  CopySign(d, m, x);
}

void MathEmitter::Gelu(Operand v) {
  // P(t) ~ ln(erfc(a)/t) + a^2 for t = 1/(1 + a/2), a = |v|/sqrt2: our
  // least-squares Chebyshev fits (numpy, over a in [0, 10] and [0, 4.5]),
  // coefficients from the highest power down. Float32 evaluation keeps
  // |error| <= 6.1e-7 (2.3e-5 for the binary16 fit).
  static constexpr float kP32[] = {0.170578331f,  -0.811199725f, 1.44153821f, -1.04603982f,
                                   0.184950396f,  -0.127026781f, 0.0740476996f, 0.379231155f,
                                   0.999402463f,  -1.26548159f};
  static constexpr float kP16[] = {0.233642027f, -0.721515238f, 0.485230893f,
                                   0.251088798f, 1.01800001f,   -1.26642406f};
  Operand t = Tmp(), p = Tmp(), s = Tmp(), e = Tmp(), neg = Tmp(), g = Tmp(), h = Tmp();
  b_.Mad(t, v.Abs(), F(0.353553390593273762f), F(1.0f));  // 1 + a/2
  b_.Div(t, F(1.0f), t);
  const float* c = half_ ? kP16 : kP32;
  const int n = half_ ? 6 : 10;
  b_.Mov(p, F(c[0]));
  for (int k = 1; k < n; ++k) b_.Mad(p, p, t, F(c[k]));
  b_.Lt(neg, v, F(0.0f));
  if (half_) {
    b_.Mul(s, v.Abs(), v.Abs());
    b_.Mad(s, s, F(-0.5f), p);
    Exp(e, s);
    b_.Mul(e, e, t);               // erfc(a)
    b_.Add(g, e.Neg(), F(2.0f));   // 1 + erf(v/sqrt2) for v >= 0
    b_.Movc(g, neg, e, g);
    b_.Mul(h, v, F(0.5f));
    b_.Mul(h, h, g);
  } else {
    // P - v*v/2 = s + lo, lo within rounding: |v| as 12-bit halves, so
    // xh*xh is exact, and w = P - (2 xh + xl) xl / 2 (|w| <= 1.4) joins
    // through TwoSum (a rounded v*v alone was 1e-5 of relative error at
    // |v| = 13, and the cross term is up to 0.05).
    Operand xh = Tmp(), xl = Tmp(), w = Tmp(), lo = Tmp();
    b_.And(xh, v, U(0x7ffff000u));
    b_.Add(xl, v.Abs(), xh.Neg());
    b_.Mul(s, xh, xh);
    b_.Mul(s, s, F(-0.5f));
    b_.Add(w, xh, xh);
    b_.Add(w, w, xl);
    b_.Mul(w, w, xl);
    b_.Mad(w, w, F(-0.5f), p);
    b_.Mov(lo, F(0.0f));
    TwoSum(s, lo, w);
    // exp(s + lo) = 2^m * exp(r), m = round(s*log2e), r = s - m*ln2 + lo
    // (Cody-Waite: m*kLn2Hi is exact and so is the subtraction; |r| <= 0.35
    // leaves exp2's argument rounding at 2^-25). 2^m from its bits, as
    // 2^(m+24) * 2^-24 below m = -100 so that results near FLT_MIN keep
    // every bit (m + 127 is clamped to 1: those results are below 1e-44).
    constexpr float kLn2Hi = 0.693145751953125f;  // 15 significant bits
    constexpr float kLn2Lo = 1.42860677e-06f;     // ln2 - kLn2Hi
    // m by the 1.5 * 2^23 shifter, not round_ne and ftoi: those run at a
    // quarter of the ALU rate on NVIDIA, and GELU is ALU-bound there (87%
    // of the copy at 128M FLOAT32 elements). tm's low bits are m in two's
    // complement, so its bits less the shifter's are m as an integer.
    constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23
    Operand m = Tmp(), mi = Tmp(), tm = Tmp(), r = Tmp(), low = Tmp(), bias = Tmp(),
            scale = Tmp(), big = Tmp();
    b_.Mul(tm, s, F(kLog2e));
    b_.Add(tm, tm, F(kShifter));
    Launder(tm);  // else (t + C) - C folds to t
    b_.Add(m, tm, F(-kShifter));
    b_.IAdd(mi, tm, I(-0x4B400000));
    b_.Mad(r, m, F(-kLn2Hi), s);
    Launder(r);  // else NIR may merge the two steps into s - m*ln2 (lavapipe)
    b_.Mad(r, m, F(-kLn2Lo), r);
    b_.Add(r, r, lo);
    b_.Mul(r, r, F(kLog2e));
    b_.Exp2(e, r);
    b_.Lt(low, m, F(-100.0f));
    b_.Movc(bias, low, I(127 + 24), I(127));
    b_.IAdd(mi, mi, bias);
    b_.IMax(mi, mi, I(1));
    b_.IShl(mi, mi, U(23));
    b_.Mul(e, e, mi);
    b_.Mul(e, e, t);  // erfc(a), times 2^24 where `low`
    b_.Movc(scale, low, F(0x1p-24f), F(1.0f));
    b_.Mul(g, e, scale);
    b_.Add(g, g.Neg(), F(2.0f));  // 1 + erf(v/sqrt2) for v >= 0
    // Above 14.5, erfc < 1e-93: g = 2 exactly (and no NaN from inf - inf
    // in TwoSum for |v| >= 2^64).
    b_.Lt(big, F(14.5f), v);
    b_.Movc(g, big, F(2.0f), g);
    b_.Movc(g, neg, e, g);
    b_.Movc(scale, neg, scale, F(1.0f));
    b_.Mul(h, v, F(0.5f));
    b_.Mul(h, h, g);
    b_.Mul(h, h, scale);
  }
  // Below -14.5 the true value is below 1e-45: 0 (and no -inf*0).
  b_.Lt(neg, v, F(-14.5f));
  b_.Movc(v, neg, F(0.0f), h);
}

void MathEmitter::TwoSum(Operand s, Operand e_acc, Operand a) {
  Operand sum = Tmp(), bb = Tmp(), err = Tmp(), t = Tmp();
  TwoSum(s, e_acc, a, {sum, bb, err, t});
}

void MathEmitter::TwoSum(Operand s, Operand e_acc, Operand a, const TwoSumScratch& scratch) {
  const Operand& sum = scratch.sum;
  const Operand& bb = scratch.bb;
  const Operand& err = scratch.err;
  const Operand& t = scratch.t;
  b_.Add(sum, s, a);
  Launder(sum);
  b_.Add(bb, sum, s.Neg());
  Launder(bb);
  b_.Add(t, sum, bb.Neg());
  Launder(t);
  b_.Add(t, s, t.Neg());    // s - (sum - bb)
  b_.Add(err, a, bb.Neg());  // a - bb
  b_.Add(err, t, err);
  b_.Add(e_acc, e_acc, err);
  b_.Mov(s, sum);
}

void MathEmitter::ExactMad(Operand d, Operand a, Operand b, Operand c, const Operand* lo) {
  Operand p = Tmp(), e = Tmp(), ah = Tmp(), al = Tmp(), bh = Tmp(), bl = Tmp(), t = Tmp();
  b_.Mul(p, a, b);
  b_.And(ah, a, U(0xfffff000u));
  b_.Add(al, a, ah.Neg());
  b_.And(bh, b, U(0xfffff000u));
  b_.Add(bl, b, bh.Neg());
  b_.Mul(e, ah, bh);
  b_.Add(e, e, p.Neg());
  b_.Mul(t, ah, bl);
  b_.Add(e, e, t);
  b_.Mul(t, al, bh);
  b_.Add(e, e, t);
  b_.Mul(t, al, bl);
  b_.Add(e, e, t);  // a*b = p + e exactly
  Launder(e);
  Operand s = Tmp();
  b_.Mov(s, p);
  TwoSum(s, e, c);
  if (lo != nullptr) b_.Add(e, e, *lo);
  b_.Add(d, s, e);
}

void MathEmitter::MadIsFused(Operand cond) {
  Operand k = b_.NewTemp().x(), m = b_.NewTemp().x();
  b_.Mov(k, U(kMadProbeK));
  Launder(k);
  b_.Mov(m, U(kMadProbeC));
  Launder(m);
  b_.Mad(k, k, k, m);
  b_.Ne(cond.x(), k, F(0.0f));
}

void MathEmitter::PrepareFusedMad() {
  if (fused_) return;
  fused_ = b_.NewTemp().x();
  MadIsFused(*fused_);
}

void MathEmitter::FusedMad(Operand d, Operand a, Operand b, Operand c) {
  Operand fused = fused_ ? *fused_ : b_.NewTemp().x();
  if (!fused_) MadIsFused(fused);
  b_.IfNz(fused);
  b_.Mad(d, a, b, c);
  b_.Else();
  EmulatedMad(d, a, b, c);
  b_.EndIf();
}

void MathEmitter::EmulatedMad(Operand d, Operand a, Operand b, Operand c) {
  Operand s = Tmp();
  ExactMad(s, a, b, c);
  // A non-finite plain result is right when an operand is inf or NaN, or
  // when a*b + c is truly beyond the float32 range. It is not when only the
  // product a*b overflowed (found by tests/robustness): a finite true
  // value (4e38 - 3e38) or, with c = +-inf, c itself (2*3.4e38 - inf is
  // -inf, not NaN). Those cases (and a non-finite exact path, below) are
  // redone as 4*((a/4)*b + c/4): when even
  // (a/4)*b overflows, |a*b + c| >= 3*FLT_MAX and inf is right again.
  Operand plain = Tmp(), fp = Tmp(), fa = Tmp(), fb = Tmp(), fc = Tmp();
  b_.Mad(plain, a, b, c);
  IsFinite(fp, plain);
  IsFinite(fa, a);
  IsFinite(fb, b);
  IsFinite(fc, c);
  b_.And(fa, fa, fb);  // a*b is a finite real number
  Operand qa = Tmp(), qc = Tmp(), sc = Tmp(), plain2 = Tmp(), fp2 = Tmp();
  b_.Mul(qa, a, F(0.25f));
  b_.Mul(qc, c, F(0.25f));
  ExactMad(sc, qa, b, qc);
  b_.Mad(plain2, qa, b, qc);
  IsFinite(fp2, plain2);
  b_.Movc(sc, fp2, sc, plain2);  // the exact path is NaN on overflow
  b_.Mul(sc, sc, F(4.0f));
  Operand alt = Tmp();
  b_.Movc(alt, fc, sc, c);      // a*b finite: rescaled, or c when c is inf/NaN
  b_.Movc(alt, fa, alt, plain);  // an operand inf/NaN: IEEE plain result
  // The exact path itself overflows inside TwoSum when a*b + c is near
  // FLT_MAX even though the result is finite (FLT_MAX*0.138 - FLT_MAX gave
  // NaN; found by tests/robustness): the rescaled path covers that too.
  Operand fs = Tmp();
  IsFinite(fs, s);
  b_.And(fs, fs, fp);
  b_.Movc(d, fs, s, alt);
}

void MathEmitter::CopySign(Operand d, Operand magnitude, Operand sign) {
  Operand s = Tmp();
  b_.And(s, sign, U(kSignBit));
  b_.Or(d, magnitude, s);
}

void MathEmitter::Activation(OperatorType op, Operand v, const ActivationParams& p) {
  switch (op) {
    case OperatorType::kActivationIdentity:
      return;
    case OperatorType::kActivationRelu:
      MaxNum(v, v, F(0.0f));
      return;
    case OperatorType::kActivationLeakyRelu: {
      Operand c = Tmp(), t = Tmp();
      b_.Mul(t, v, p.p0);
      b_.Ge(c, v, F(0.0f));
      b_.Movc(v, c, v, t);
      return;
    }
    case OperatorType::kActivationLinear:
      FusedMad(v, v, p.p0, p.p1);
      return;
    case OperatorType::kActivationElu: {
      Operand c = Tmp(), t = Tmp();
      Expm1(t, v);
      b_.Mul(t, t, p.p0);
      b_.Ge(c, v, F(0.0f));
      b_.Movc(v, c, v, t);
      return;
    }
    case OperatorType::kActivationCelu:
      Celu(v, p.p0);
      return;
    case OperatorType::kActivationScaledElu: {
      // Gamma*(Alpha*expm1(x)): Alpha*expm1(x) is denormal, and flushed,
      // for a small Alpha even where the result is not (Alpha = FLT_MIN,
      // Gamma = 1e30). (Gamma*Alpha)*expm1(x) is used wherever Gamma*Alpha
      // is a normal float (computed exactly for a denormal Alpha too).
      Operand c = Tmp(), t = Tmp(), a = Tmp(), ga = Tmp(), ok = Tmp(), t2 = Tmp();
      ScaledProduct(ga, p.p0, p.p1);
      IsNormal(ok, ga);
      Expm1(t, v);
      b_.Mul(t2, t, ga);
      b_.Mul(t, t, p.p0);
      b_.Mul(t, t, p.p1);
      b_.Movc(t, ok, t2, t);
      b_.Mul(a, v, p.p1);
      b_.Lt(c, F(0.0f), v);
      b_.Movc(v, c, a, t);
      return;
    }
    case OperatorType::kActivationHardSigmoid:
      FusedMad(v, v, p.p0, p.p1);
      MinNum(v, v, F(1.0f));
      MaxNum(v, v, F(0.0f));
      return;
    case OperatorType::kActivationSigmoid:
      Sigmoid(v, v);
      return;
    case OperatorType::kActivationTanh:
      Tanh(v, v);
      return;
    case OperatorType::kActivationScaledTanh: {
      // tanh(Beta*x) is nonzero whenever Beta and x are, but Beta*x can
      // underflow to 0 in float32 (not in the float64 reference): with an
      // infinite Alpha the result is then +-inf, not inf*0 = NaN (found by
      // tests/robustness). Its sign is that of Alpha*Beta*x.
      Operand sign = Tmp(), nz = Tmp(), t = Tmp(), special = Tmp(), x = Tmp();
      b_.Mov(x, v);
      IsInf(special, p.p0);
      b_.And(nz, x, U(0x7fffffffu));
      b_.ULt(t, U(0), nz);                 // x != +-0
      b_.And(special, special, t);
      b_.ULt(t, nz, U(kPosInf + 1));       // x not NaN
      b_.And(special, special, t);
      b_.And(nz, p.p1, U(0x7fffffffu));
      b_.ULt(t, U(0), nz);                 // Beta != +-0
      b_.And(special, special, t);
      b_.ULt(t, nz, U(kPosInf + 1));       // Beta not NaN
      b_.And(special, special, t);
      b_.Xor(sign, x, p.p1);
      b_.And(sign, sign, U(kSignBit));
      b_.Xor(sign, sign, p.p0);            // +-inf with the product's sign
      // Where |Beta*x| < 2^-12, tanh(Beta*x) = Beta*x to float precision,
      // and Beta*x may be denormal and flushed while Alpha*Beta*x is not
      // (Alpha = 1e30, Beta = FLT_MIN): (Alpha*Beta)*x there when
      // Alpha*Beta is a normal float, else Alpha*(Beta*x).
      // Beta*x itself with a denormal Beta taken exactly (Beta*2^32, then
      // 2^-32): a driver that flushes Beta would make Beta*x 0 and take
      // the linear branch where |Beta*x| is large (H100: Alpha = 1e35,
      // Beta = 1e-40, x = -FLT_MAX gave Alpha*Beta*x, not Alpha*tanh(-0.034)).
      Operand ab = Tmp(), ok = Tmp(), small = Tmp(), lin = Tmp(), y = Tmp();
      Operand tiny = Tmp(), beta = Tmp(), down = Tmp();
      ScaledProduct(ab, p.p0, p.p1);
      IsNormal(ok, ab);
      IsTiny(tiny, p.p1);
      ScaleUp32(beta, p.p1);
      b_.Movc(beta, tiny, beta, p.p1);
      b_.Movc(down, tiny, F(0x1p-32f), F(1.0f));
      b_.Mul(y, x, beta);
      b_.Mul(y, y, down);
      b_.Mul(lin, ab, x);
      b_.Mul(t, y, p.p0);
      b_.Movc(lin, ok, lin, t);
      b_.And(small, y, U(0x7fffffffu));
      b_.ULt(small, small, U(0x39800000u));  // 2^-12
      Tanh(v, y);
      b_.Mul(v, v, p.p0);
      b_.Movc(v, small, lin, v);
      b_.Movc(v, special, sign, v);
      return;
    }
    case OperatorType::kActivationSoftplus:
      SoftplusOp(v, p.p0);
      return;
    case OperatorType::kActivationParametricSoftplus:
      ParametricSoftplus(v, p.p0, p.p1);
      return;
    case OperatorType::kActivationSoftsign: {
      // x / (1 + |x|) with |x| clamped to 2^25 on the integer bits (NaN
      // excluded): the result is then exactly +-1 for huge and infinite x
      // without an inf/inf, whatever the driver assumes about infinities.
      Operand a = Tmp(), big = Tmp(), nan = Tmp(), clamped = Tmp(), den = Tmp();
      b_.And(a, v, U(0x7fffffffu));
      b_.ULt(big, U(0x4c000000u), a);
      b_.ULt(nan, U(kPosInf), a);
      b_.Movc(big, nan, U(0), big);
      b_.And(clamped, v, U(kSignBit));
      b_.Or(clamped, clamped, U(0x4c000000u));
      b_.Movc(v, big, clamped, v);
      // 1 + |x| as hi + lo (TwoSum, exact), q = x/hi, then one correction
      // step with the exact residual x - q*hi (ExactMad) less q*lo. D3D's
      // division may be 2.5 ulp off, and the rounding of 1 + |x| alone
      // cost 1.5 ulp: the H100 was 2.77 ulp off, over SOFTSIGN's 2-ulp
      // ARITH budget. NaN (the only non-finite v after the clamp) keeps q.
      // FLOAT16 (1 binary16 ulp) needs none of it.
      if (half_) {
        b_.Add(den, v.Abs(), F(1.0f));
        b_.Div(v, v, den);
        return;
      }
      Operand lo = Tmp(), q = Tmp(), nq = Tmp(), r = Tmp(), t = Tmp();
      b_.Mov(den, v.Abs());
      b_.Mov(lo, F(0.0f));
      TwoSum(den, lo, F(1.0f));
      b_.Div(q, v, den);
      b_.Mov(nq, q.Neg());  // ExactMad splits its operands on their bits
      ExactMad(r, nq, den, v);
      b_.Mul(t, q, lo);
      b_.Add(r, r, t.Neg());
      b_.Div(r, r, den);
      b_.Add(r, q, r);
      b_.Movc(v, nan, q, r);  // `nan`: the test made before the clamp
      return;
    }
    case OperatorType::kActivationThresholdedRelu: {
      Operand c = Tmp(), nan = Tmp();
      OrderedLess(c, p.p0, v);
      IsNan(nan, v);
      b_.Movc(c, nan, U(0), c);
      b_.Movc(v, c, v, F(0.0f));
      return;
    }
    case OperatorType::kActivationShrink: {
      Operand above = Tmp(), below = Tmp(), a = Tmp(), r = Tmp();
      Operand nan = Tmp();
      OrderedLess(above, p.p1, v);
      OrderedLess(below, v, p.d1);
      IsNan(nan, v);
      b_.Movc(above, nan, U(0), above);
      b_.Movc(below, nan, U(0), below);
      b_.Add(a, v, p.p0.Neg());
      b_.Add(r, v, p.p0);
      b_.Movc(r, below, r, F(0.0f));
      b_.Movc(v, above, a, r);
      return;
    }
    case OperatorType::kActivationGelu:
      Gelu(v);
      return;
    default:
      return;  // callers only pass supported activations
  }
}

void EmitIntThreshold(ShaderBuilder& b, DataType type, Operand v, Operand min_i) {
  if (IsSigned32(type)) {
    b.IMax(v, v, min_i);
  } else {
    b.UMax(v, v, min_i);
  }
}

void EmitIntClip(ShaderBuilder& b, DataType type, Operand v, Operand min_i, Operand max_i) {
  if (IsSigned32(type)) {
    b.IMax(v, v, min_i);
    b.IMin(v, v, max_i);
  } else {
    b.UMax(v, v, min_i);
    b.UMin(v, v, max_i);
  }
}

void EmitIntRelu(ShaderBuilder& b, Operand v) { b.IMax(v, v, I(0)); }

void EmitIntShrink(MathEmitter& m, DataType type, Operand v, Operand bias_i,
                   Operand threshold_i, Operand neg_threshold_i) {
  ShaderBuilder& b = m.builder();
  Operand above = m.Tmp(), below = m.Tmp(), a = m.Tmp(), r = m.Tmp(), t = m.Tmp();
  const bool is_signed = IsSigned32(type);
  if (is_signed) {
    b.ILt(above, threshold_i, v);
    b.ILt(below, v, neg_threshold_i);
  } else {
    b.ULt(above, threshold_i, v);
    b.ULt(below, v, neg_threshold_i);
  }
  b.INeg(t, bias_i);
  b.IAdd(a, v, t);       // v - bias (wrapping)
  b.IAdd(r, v, bias_i);  // v + bias (wrapping)
  const uint32_t bits = ElementBits(type);
  if (bits < 32) {
    // |v|, |bias| < 2^16: the 32-bit results are exact; saturate to the type.
    if (is_signed) {
      const int32_t hi = (1 << (bits - 1)) - 1;
      b.IMax(a, a, I(-hi - 1));
      b.IMin(a, a, I(hi));
      b.IMax(r, r, I(-hi - 1));
      b.IMin(r, r, I(hi));
    } else {
      b.IMax(a, a, I(0));
      b.UMin(r, r, U((1u << bits) - 1));
    }
  } else if (is_signed) {
    // Signed overflow of v - b: (v ^ b) & (v ^ a) < 0; of v + b:
    // ~(v ^ b) & (v ^ r) < 0. Saturate towards the sign of v.
    Operand sat = m.Tmp(), x1 = m.Tmp(), x2 = m.Tmp();
    b.IShr(sat, v, U(31));
    b.Xor(sat, sat, U(0x7fffffffu));
    b.Xor(x1, v, bias_i);
    b.Xor(x2, v, a);
    b.And(x2, x1, x2);
    b.ILt(x2, x2, I(0));
    b.Movc(a, x2, sat, a);
    b.Xor(x2, v, r);
    b.Not(x1, x1);
    b.And(x2, x1, x2);
    b.ILt(x2, x2, I(0));
    b.Movc(r, x2, sat, r);
  } else {
    Operand c = m.Tmp();
    b.ULt(c, v, bias_i);
    b.Movc(a, c, U(0), a);
    b.ULt(c, r, v);
    b.Movc(r, c, U(0xffffffffu), r);
  }
  b.Movc(r, below, r, U(0));
  b.Movc(v, above, a, r);
}

}  // namespace dmls::gpu
