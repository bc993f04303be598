#include "engine/dxbc/int_convert_emit.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace dmls::gpu {
namespace {

bool IsSignedInt(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt16 || t == DataType::kInt32;
}

// The whole sequence for one 32-bit component `x` (e.g. "r5.y").
//
// vkd3d 1.2 implements no double-precision instructions at all, so the
// double-precision g = x*Scale + Bias of the spec is reproduced with exact
// float32 arithmetic: x = xh*2^16 + xl (16-bit halves, exact in float), each
// product split into value + rounding error with a fused multiply-add
// (TwoProduct), and the five terms summed with TwoSum into s + e with
// |e| <= ulp(s)/2, so trunc(v) is decided on the exact value v. It differs
// from trunc(round_to_double(v)) only when v lies within 2^-53*|v| of a
// non-zero integer without being one (the double rounding would land on the
// integer); for 8/16-bit x with Bias = 0 that cannot happen (x*Scale has at
// most 40 significant bits, exact in double).
void ScalarScaleBias(MathEmitter& m, DataType type, Operand x, Operand scale,
                     Operand bias) {
  ShaderBuilder& b = m.builder();
  const bool is_signed = IsSignedInt(type);
  const uint32_t bits = ElementBits(type);
  auto t = [&]() { return b.NewTemp().x(); };
  // TwoSum: (s, e) = s + a exactly (Knuth, no magnitude precondition).
  auto two_sum = [&](Operand s, Operand e_acc, Operand a) {
    Operand sum = t(), bb = t(), err = t(), tmp = t();
    b.Add(sum, s, a);
    b.Add(bb, sum, s.Neg());
    b.Add(tmp, sum, bb.Neg());
    b.Add(tmp, s, tmp.Neg());   // s - (sum - bb)
    b.Add(err, a, bb.Neg());    // a - bb
    b.Add(err, tmp, err);
    b.Add(e_acc, e_acc, err);
    b.Mov(s, sum);
  };
  Operand xh = t(), xl = t(), xf = t();
  if (is_signed) {
    b.IShr(xh, x, U(16));
    b.Itof(xh, xh);
    b.Itof(xf, x);
  } else {
    b.UShr(xh, x, U(16));
    b.Utof(xh, xh);
    b.Utof(xf, x);
  }
  b.And(xl, x, U(0xffff));
  b.Utof(xl, xl);
  // Far outside the range (or NaN/inf) the rounded value decides alone.
  Operand g = t();
  b.Mad(g, xf, scale, bias);
  // Terms of v = xh*S*2^16 + xl*S + B.
  Operand p1 = t(), e1 = t(), p2 = t(), e2 = t();
  b.Mul(p1, xh, scale);
  b.Mad(e1, xh, scale, p1.Neg());
  b.Mul(p1, p1, F(65536.0f));
  b.Mul(e1, e1, F(65536.0f));
  b.Mul(p2, xl, scale);
  b.Mad(e2, xl, scale, p2.Neg());
  Operand s = t(), e = t();
  b.Mov(s, p1);
  b.Mov(e, F(0.0f));
  two_sum(s, e, p2);
  two_sum(s, e, bias);
  two_sum(s, e, e1);
  two_sum(s, e, e2);
  // Renormalise: s + e with |e| <= ulp(s)/2.
  Operand e0 = t();
  b.Mov(e0, F(0.0f));
  two_sum(s, e0, e);
  b.Mov(e, e0);
  // trunc(s + e): n = trunc(s); if s is an integer, e may step one towards 0.
  Operand n = t(), is_int = t(), adj = t(), c1 = t(), c2 = t();
  b.RoundZ(n, s);
  b.Eq(is_int, n, s);
  b.Lt(c1, F(0.0f), n);
  b.Lt(c2, e, F(0.0f));
  b.And(c1, c1, c2);
  b.Movc(adj, c1, I(-1), I(0));
  b.Lt(c1, n, F(0.0f));
  b.Lt(c2, F(0.0f), e);
  b.And(c1, c1, c2);
  b.Movc(adj, c1, I(1), adj);
  b.Movc(adj, is_int, adj, I(0));
  // Convert with saturation.
  int64_t lo = 0, hi = 0;
  if (is_signed) {
    lo = -(int64_t{1} << (bits - 1));
    hi = (int64_t{1} << (bits - 1)) - 1;
  } else {
    hi = (int64_t{1} << bits) - 1;
  }
  const float top = is_signed ? 2147483648.0f : 4294967296.0f;
  const float bottom = is_signed ? -2147483648.0f : 0.0f;
  Operand iv = t(), over = t(), under = t();
  b.Ge(over, n, F(top));
  b.Lt(under, n, F(bottom));
  b.Max(n, n, F(bottom));
  b.Min(n, n, F(is_signed ? 2147483520.0f : 4294967040.0f));
  if (is_signed) {
    b.Ftoi(iv, n);
  } else {
    b.Ftou(iv, n);
  }
  b.IAdd(iv, iv, adj);
  if (is_signed) {
    b.IMax(iv, iv, I(static_cast<int32_t>(lo)));
    b.IMin(iv, iv, I(static_cast<int32_t>(hi)));
  } else {
    b.UMin(iv, iv, U(static_cast<uint32_t>(hi)));
  }
  b.Movc(iv, over, U(static_cast<uint32_t>(hi)), iv);
  b.Movc(iv, under, U(static_cast<uint32_t>(lo)), iv);
  // Magnitudes >= 2^33 (incl. inf): saturate by the sign of g.
  Operand big = t(), gpos = t(), sat = t();
  b.Ge(big, g.Abs(), F(8589934592.0f));
  b.Lt(gpos, F(0.0f), g);
  b.Movc(sat, gpos, U(static_cast<uint32_t>(hi)), U(static_cast<uint32_t>(lo)));
  b.Movc(iv, big, sat, iv);
  // NaN (S or B NaN, 0*inf, inf-inf) -> 0.
  Operand nan = t();
  b.Ne(nan, g, g);
  b.Movc(x, nan, I(0), iv);
}

}  // namespace

void EmitIntScaleBias(MathEmitter& m, DataType type, Operand v, Operand scale,
                      Operand bias) {
  for (char c : m.comps()) {
    const char letter[2] = {c, 0};
    ScalarScaleBias(m, type, v.Comps(letter), scale, bias);
  }
}

}  // namespace dmls::gpu
