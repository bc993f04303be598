// The activations whose parameters reach the edges of float32: CELU (Alpha
// from denormal to FLT_MAX, either sign), SOFTPLUS (Steepness) and
// PARAMETRIC_SOFTPLUS (Alpha, Beta), and the helpers for exact products of
// parameters that SCALED_ELU and SCALED_TANH use too. Part of MathEmitter
// (activation_emit.h); same ownership and thread-safety.
//
// Drivers flush float32 denormals (OPERATORS.md §7.5; NVIDIA does, on
// inputs and outputs of arithmetic) and NVIDIA's division returns 0 for a
// divisor beyond 2^126. A denormal CELU Alpha or SOFTPLUS Steepness is legal
// while zero is not, so the shader reads those parameters' bits and
// rescales them exactly by 2^32 (integer operations are never flushed),
// compensating with a power of two on the way out; the host needs to do
// nothing, and MVN's fused activations get the same treatment.
#include "engine/kernels/activation_emit.h"

namespace dmls::gpu {
namespace {

constexpr uint32_t kSignBit = 0x80000000u;
constexpr uint32_t kExpMask = 0x7f800000u;

}  // namespace

void MathEmitter::IsTiny(Operand d, Operand f) {
  b_.And(d, f, U(kExpMask));
  b_.IEq(d, d, U(0));
}

void MathEmitter::IsNormal(Operand d, Operand f) {
  Operand e = Tmp();
  b_.And(e, f, U(kExpMask));
  b_.INe(d, e, U(0));
  b_.INe(e, e, U(kExpMask));
  b_.And(d, d, e);
}

void MathEmitter::ScaledProduct(Operand d, Operand a, Operand b) {
  // (a', b') = (a, b) with a denormal one times 2^32; s undoes that.
  Operand tiny = Tmp(), sa = Tmp(), sb = Tmp(), s = Tmp(), t = Tmp();
  IsTiny(tiny, a);
  ScaleUp32(sa, a);
  b_.Movc(sa, tiny, sa, a);
  b_.Movc(s, tiny, F(0x1p-32f), F(1.0f));
  IsTiny(tiny, b);
  ScaleUp32(sb, b);
  b_.Movc(sb, tiny, sb, b);
  b_.Movc(t, tiny, F(0x1p-32f), F(1.0f));
  b_.Mul(s, s, t);
  b_.Mul(d, sa, sb);
  b_.Mul(d, d, s);
}

void MathEmitter::ScaleUp32(Operand d, Operand f) {
  // Denormal: mantissa * 2^-149 * 2^32 = float(mantissa) * 2^-117 (the
  // conversion of a 23-bit integer is exact, the product normal).
  Operand tiny = Tmp(), m = Tmp(), sign = Tmp(), normal = Tmp();
  IsTiny(tiny, f);
  b_.And(m, f, U(0x007fffffu));
  b_.Utof(m, m);
  b_.Mul(m, m, F(0x1p-117f));
  b_.And(sign, f, U(kSignBit));
  b_.Or(m, m, sign);
  b_.Mul(normal, f, F(0x1p32f));
  b_.Movc(d, tiny, m, normal);
}

void MathEmitter::Celu(Operand v, Operand alpha) {
  // CELU = max(0, x) + min(0, N), N = Alpha * expm1(x / Alpha).
  //
  // q = x/Alpha is computed as xq/aq with (xq, aq) = (x, Alpha) scaled
  // alike: by 2^32 (exactly, ScaleUp32) for a denormal Alpha, by 1/4 for
  // |Alpha| >= 2^125 (division by more than 2^126 gave 0 on the H100).
  // Then N = x * expm1(q)/q by its series where |q| < 0.35: exact in
  // relative terms however small q is (Alpha = +-FLT_MAX made q denormal,
  // flushed, and Alpha*expm1(q) collapsed to 0), and free of Alpha's
  // magnitude. Elsewhere N = am * expm1(q) * out with (am, out) =
  // (Alpha, 1), or (Alpha*2^32, 2^-32) for a denormal Alpha.
  Operand tiny = Tmp(), huge = Tmp(), aq = Tmp(), xq = Tmp(), am = Tmp(), out = Tmp();
  IsTiny(tiny, alpha);
  b_.And(huge, alpha, U(0x7fffffffu));
  b_.ULt(huge, U(0x7e000000u - 1), huge);  // |Alpha| >= 2^125
  ScaleUp32(am, alpha);
  b_.Mul(aq, alpha, F(0.25f));
  b_.Movc(aq, huge, aq, alpha);
  b_.Movc(aq, tiny, am, aq);
  b_.Movc(am, tiny, am, alpha);
  b_.Movc(out, tiny, F(0x1p-32f), F(1.0f));
  // Alpha is uniform: the branch never diverges.
  b_.IfNz(tiny.x());
  ScaleUp32(xq, v);
  b_.Else();
  b_.Mul(xq, v, F(0.25f));
  b_.Movc(xq, huge, xq, v);
  b_.EndIf();

  Operand q = Tmp(), n = Tmp(), series = Tmp(), small = Tmp(), neg_alpha = Tmp();
  b_.Div(q, xq, aq);
  Expm1OverX(series, q);
  b_.Mul(series, series, v);
  b_.Lt(small, q.Abs(), F(0.35f));
  // The sign from the bits: a denormal Alpha may read as -0 in a compare.
  b_.ILt(neg_alpha, alpha, I(0));
  b_.IfZ(neg_alpha.x());
  {
    // Alpha > 0: only x < 0 matters, where q <= 0 and exp(q) <= 1: no
    // cancellation left once |q| >= 0.35 and nothing overflows that
    // min(0, .) keeps. (The costly path below made CELU ALU-bound on the
    // H200 when taken for every Alpha.)
    Exp(n, q);
    b_.Add(n, n, F(-1.0f));
    b_.Mul(n, n, am);
    b_.Mul(n, n, out);
  }
  b_.Else();
  {
    // x/Alpha as q + q_lo (the residual xq - q*aq is exact): q can be
    // large and positive, where the division's rounding alone made exp(q)
    // tens of ulp off (found by tests/robustness).
    Operand nq = Tmp(), q_lo = Tmp();
    b_.Mov(nq, q.Neg());
    ExactMad(q_lo, nq, aq, xq);
    b_.Div(q_lo, q_lo, aq);
    // Above q = 80, expm1(q) = exp(q) to float precision, and exp(q) may
    // overflow float32 while Alpha*exp(q) does not (|Alpha| < 1). With
    // am = ma * 2^ea (ma in [1, 2), signed), Alpha*exp(q) is
    // ma * 2^(hi + ea + lo') with ea also absorbing out = 2^-32: hi + ea is
    // exact (an integer added to hi >= 115 lands on a finer or equal ulp
    // unless it overflows anyway), and q up to 176 works for
    // Alpha = -FLT_MIN (a fixed 2^-64 scaling stopped at q = 132: inf, and
    // its uncorrected exp2 was 98 ulp off at q = 132).
    Operand hi = Tmp(), lo = Tmp(), big = Tmp(), scaled = Tmp(), em1 = Tmp();
    Operand ea = Tmp(), ma = Tmp(), h = Tmp();
    ExpArgument(hi, lo, q, &q_lo);
    b_.UShr(ea, am, U(23));
    b_.And(ea, ea, U(0xffu));
    b_.IAdd(ea, ea, I(-127));
    b_.Itof(ea, ea);
    b_.Add(h, ea, F(-32.0f));
    b_.Movc(ea, tiny, h, ea);
    b_.And(ma, am, U(0x807fffffu));
    b_.Or(ma, ma, U(0x3f800000u));
    b_.Add(h, hi, ea);
    ExpFinish(scaled, h, lo, 0);
    b_.Mul(scaled, scaled, ma);
    ExpFinish(em1, hi, lo, 0);
    b_.Add(em1, em1, F(-1.0f));
    b_.Mul(em1, em1, am);
    b_.Mul(em1, em1, out);
    Operand qs = Tmp();
    b_.Add(qs, q, q_lo);
    b_.Lt(big, F(80.0f), qs);
    b_.Movc(n, big, scaled, em1);
  }
  b_.EndIf();
  b_.Movc(n, small, series, n);
  Operand pos = Tmp();
  MinNum(n, n, F(0.0f));
  MaxNum(pos, v, F(0.0f));
  b_.Add(v, pos, n);
}

void MathEmitter::SoftplusOp(Operand v, Operand steepness) {
  // softplus(S*x)/S. A denormal S is used as S' = S*2^32 (exact):
  // y = (x*S')*2^-32 and softplus(y)/S' * 2^32; for any other S the
  // factors are 1 and the arithmetic is unchanged.
  Operand tiny = Tmp(), s = Tmp(), in = Tmp(), out = Tmp();
  IsTiny(tiny, steepness);
  ScaleUp32(s, steepness);
  b_.Movc(s, tiny, s, steepness);
  b_.Movc(in, tiny, F(0x1p-32f), F(1.0f));
  b_.Movc(out, tiny, F(0x1p32f), F(1.0f));
  // For S*x > 20 the result is x to float precision; taking x directly
  // also avoids overflow of S*x (SOFTPLUS(3e38) with S = 2).
  Operand y = Tmp(), large = Tmp();
  b_.Mul(y, v, s);
  b_.Mul(y, y, in);
  b_.Lt(large, F(20.0f), y);
  Softplus(y, y);
  // softplus(y)/S as (softplus(y)/4)/(S/4) for |S| >= 2^125: NVIDIA's
  // division returns 0 for divisors beyond 2^126, while the result is
  // normal for S = FLT_MAX and x in [1.2e-38, 5.9e-38].
  Operand huge = Tmp(), d = Tmp(), k = Tmp();
  b_.And(huge, s, U(0x7fffffffu));
  b_.ULt(huge, U(0x7e000000u - 1), huge);
  b_.Movc(k, huge, F(0.25f), F(1.0f));
  b_.Mul(d, s, k);
  b_.Mul(y, y, k);
  b_.Div(y, y, d);
  b_.Mul(y, y, out);
  b_.Movc(v, large, v, y);
}

void MathEmitter::ParametricSoftplus(Operand v, Operand alpha, Operand beta) {
  // Alpha*softplus(Beta*x); for Beta*x > 20 it is Alpha*(Beta*x). That
  // order cannot overflow spuriously while Beta*x is finite, where
  // (Alpha*Beta)*x did for Beta near FLT_MAX (found by tests/robustness).
  // When Beta*x overflows for a finite x, |x| > 1 and (Alpha*Beta)*x is the
  // safe order, or (Alpha*x)*Beta when Alpha*Beta is zero or denormal. An
  // infinite x keeps Alpha*(Beta*x): Alpha = FLT_MIN, Beta = 0.5 flushed
  // Alpha*Beta to 0 and gave 0*inf = NaN for +inf (H100).
  Operand y = Tmp(), large = Tmp(), lin = Tmp(), ab = Tmp(), ax = Tmp(), y_inf = Tmp();
  b_.Mul(y, v, beta);
  b_.Lt(large, F(20.0f), y);
  b_.Mul(lin, alpha, y);
  b_.Mul(ab, alpha, beta);
  Operand ab_tiny = Tmp();
  IsTiny(ab_tiny, ab);
  b_.Mul(ab, ab, v);
  b_.Mul(ax, alpha, v);
  b_.Mul(ax, ax, beta);
  b_.Movc(ab, ab_tiny, ax, ab);
  Operand x_inf = Tmp();
  IsInf(y_inf, y);
  IsInf(x_inf, v);
  b_.Not(x_inf, x_inf);
  b_.And(y_inf, y_inf, x_inf);
  b_.Movc(lin, y_inf, ab, lin);
  // softplus(Beta*x) underflows to 0 in float32 below about -104, but
  // in the float64 reference only below -745.13: with an infinite Alpha
  // the reference stays +-inf there, not inf*0 = NaN (found by
  // tests/robustness). Below that (and for NaN) the IEEE product stays.
  Operand alpha_inf = Tmp(), in_range = Tmp();
  IsInf(alpha_inf, alpha);
  b_.Lt(in_range, F(-745.1f), y);
  b_.And(alpha_inf, alpha_inf, in_range);
  // Below -80, softplus(y) = exp(y) to float precision, and exp(y) is
  // denormal or 0 in float32 from about -87 on while Alpha*exp(y) need
  // not be small (Alpha = FLT_MAX, found by tests/robustness): use
  // (Alpha * (exp(y)*2^64)) * 2^-64 there.
  Operand tail = Tmp(), scaled = Tmp();
  b_.Lt(tail, y, F(-80.0f));
  ExpScaled(scaled, y, 64);
  b_.Mul(scaled, scaled, alpha);
  Launder(scaled);  // keeps the compiler from applying 2^-64 before Alpha
  b_.Mul(scaled, scaled, F(0x1p-64f));
  Softplus(y, y);
  b_.Mul(y, y, alpha);
  b_.Movc(y, tail, scaled, y);
  b_.Movc(y, alpha_inf, alpha, y);
  b_.Movc(v, large, lin, y);
}

}  // namespace dmls::gpu
