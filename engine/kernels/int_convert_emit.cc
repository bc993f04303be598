#include "engine/kernels/int_convert_emit.h"

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
// float32 arithmetic: x and Scale are cut into pieces whose products are
// exact, and the seven terms are summed with TwoSum into s + e with
// |e| <= ulp(s)/2, so trunc(v) is decided on (nearly) the exact value v. It differs
// from trunc(round_to_double(v)) only when v lies within 2^-52*|v| of a
// non-zero integer without being one (the double rounding would land on the
// integer); within 2^-53*|v| that case is detected and handled below, and
// for 8/16-bit x with Bias = 0 it cannot happen (x*Scale has at most 40
// significant bits, exact in double).
void ScalarScaleBias(MathEmitter& m, DataType type, Operand x, Operand scale,
                     Operand bias) {
  ShaderBuilder& b = m.builder();
  const bool is_signed = IsSignedInt(type);
  const uint32_t bits = ElementBits(type);
  auto t = [&]() { return b.NewTemp().x(); };
  auto two_sum = [&](Operand s, Operand e_acc, Operand a) { m.TwoSum(s, e_acc, a); };
  // x = xa*2^24 + xb*2^12 + xc with 8/12/12-bit pieces (exact floats);
  // Scale = sh + sl with 12 significant bits each (bit mask, exact): the six
  // products are exact (<= 24 bits), so neither a fused multiply-add nor a
  // driver contracting mul+add into one can change them.
  Operand xa = t(), xb = t(), xc = t(), xf = t();
  if (is_signed) {
    b.IShr(xa, x, U(24));
    b.Itof(xa, xa);
    b.Itof(xf, x);
  } else {
    b.UShr(xa, x, U(24));
    b.Utof(xa, xa);
    b.Utof(xf, x);
  }
  b.Ubfe(xb, U(12), U(12), x);
  b.Utof(xb, xb);
  b.And(xc, x, U(0xfff));
  b.Utof(xc, xc);
  Operand sh = t(), sl = t();
  b.And(sh, scale, U(0xfffff000u));
  b.Add(sl, scale, sh.Neg());
  // With |Scale| >= 2^64 a piece product such as xa*2^24*sh can overflow
  // float32 although x*Scale + Bias is small (Scale = Bias = -FLT_MAX, x = -1
  // gave -2 instead of 0; found by tests/robustness). Scale and Bias are
  // then taken times 2^-64 (exact: powers of two, no underflow that could
  // matter) and the sum scaled back by 2^64 before truncation; an overflow
  // there means |v| >= FLT_MAX, which the |g| test below saturates anyway.
  // These four temps are reused below once dead: an 8-bit kernel emits this
  // sequence for 16 elements and must stay under 4096 temps.
  Operand huge = t(), down = t(), up = t(), bias_s = t();
  b.And(huge, scale, U(0x7fffffffu));
  b.UGe(huge, huge, U(0x5f800000u));  // |Scale| >= 2^64 (inf, NaN too)
  b.Movc(down, huge, F(0x1p-64f), F(1.0f));
  b.Movc(up, huge, F(0x1p64f), F(1.0f));
  b.Mul(sh, sh, down);
  b.Mul(sl, sl, down);
  b.Mul(bias_s, bias, down);
  // Far outside the range (or NaN/inf) the rounded value decides alone.
  // In double, x*Scale (|x| < 2^32) never overflows, so an infinite Bias
  // with a finite Scale gives g = Bias; in float32 the product can
  // overflow to the opposite infinity and make inf - inf = NaN (found by
  // tests/robustness: Scale -3.4e38, Bias inf gave 0 instead of saturating).
  Operand g = t(), bias_only = t(), sfin = t();
  b.Mad(g, xf, scale, bias);
  b.And(bias_only, bias, U(0x7fffffffu));
  b.IEq(bias_only, bias_only, U(0x7f800000u));  // Bias is +-inf
  b.And(sfin, scale, U(0x7fffffffu));
  b.ULt(sfin, sfin, U(0x7f800000u));             // Scale is finite
  b.And(bias_only, bias_only, sfin);
  b.Movc(g, bias_only, bias, g);
  Operand s = t(), e = t(), term = t();
  b.Mul(s, xa, sh);
  b.Mul(s, s, F(16777216.0f));
  b.Mov(e, F(0.0f));
  struct Piece { Operand x; float scale; };
  const Piece pieces[] = {{xa, 16777216.0f}, {xb, 4096.0f}, {xc, 1.0f}};
  bool first = true;
  for (const Piece& piece : pieces) {
    for (Operand half : {sh, sl}) {
      if (first) {  // xa*sh is already in s
        first = false;
        continue;
      }
      b.Mul(term, piece.x, half);
      if (piece.scale != 1.0f) b.Mul(term, term, F(piece.scale));
      two_sum(s, e, term);
    }
  }
  two_sum(s, e, bias_s);
  // Renormalise: s + e with |e| <= ulp(s)/2.
  Operand e0 = t();
  b.Mov(e0, F(0.0f));
  two_sum(s, e0, e);
  b.Mul(s, s, up);
  b.Mul(e, e0, up);
  // trunc(s + e). If s is not an integer (|s| < 2^23), e cannot move s
  // across an integer: trunc(v) = trunc(s). If s is an integer, v = s + e
  // and trunc(v) = s + floor(e) for s > 0, s + ceil(e) for s < 0, and 0 for
  // s = 0 (|e| < 1 then).
  Operand n = t(), is_int = t(), adj = t(), fl = t(), ce = t(), c1 = t();
  b.RoundZ(n, s);
  b.Eq(is_int, n, s);
  b.RoundNi(fl, e);
  b.RoundPi(ce, e);
  b.Lt(c1, F(0.0f), s);
  b.Movc(adj, c1, fl, F(0.0f));
  b.Lt(c1, s, F(0.0f));
  b.Movc(adj, c1, ce, adj);
  b.Movc(adj, is_int, adj, F(0.0f));
  // The reference rounds v to double first: when |e| < 2^-53*|s|, v rounds
  // to the integer s itself, so trunc gives s (found by tests/robustness:
  // -1 + 1e-31 is -1 in double, not -0.99...).
  Operand tiny = huge;  // reused (dead)
  b.Mul(tiny, s.Abs(), F(0x1p-53f));
  b.Lt(tiny, e.Abs(), tiny);
  b.Movc(adj, tiny, F(0.0f), adj);
  // Convert n + adj with saturation. n is clamped into the range ftoi/ftou
  // convert exactly; the clamped-off excess joins adj (w); a |w| >= 2^24
  // saturates by its sign; otherwise iv + int(w) with overflow detection.
  int64_t lo = 0, hi = 0;
  if (is_signed) {
    lo = -(int64_t{1} << (bits - 1));
    hi = (int64_t{1} << (bits - 1)) - 1;
  } else {
    hi = (int64_t{1} << bits) - 1;
  }
  const uint32_t hi32 = is_signed ? 0x7fffffffu : 0xffffffffu;
  const uint32_t lo32 = is_signed ? 0x80000000u : 0u;
  Operand clamped = t(), w = t(), iv = t(), wi = t(), r = t(), far = t(), wpos = t(), c2 = t();
  b.Max(clamped, n, F(is_signed ? -2147483648.0f : 0.0f));
  b.Min(clamped, clamped, F(is_signed ? 2147483520.0f : 4294967040.0f));
  b.Add(w, n, clamped.Neg());
  b.Add(w, w, adj);
  if (is_signed) {
    b.Ftoi(iv, clamped);
  } else {
    b.Ftou(iv, clamped);
  }
  b.Ftoi(wi, w);
  b.IAdd(r, iv, wi);
  b.ILt(wpos, I(0), wi);
  if (is_signed) {
    // Overflow iff iv and wi have the same sign and r's sign differs.
    Operand x1 = t(), x2 = t();
    b.Xor(x1, iv, wi);
    b.Not(x1, x1);
    b.Xor(x2, iv, r);
    b.And(x1, x1, x2);
    b.ILt(c1, x1, I(0));
  } else {
    // Wrap-around above (wi > 0, r < iv) or below (wi < 0, r > iv).
    b.ULt(c1, r, iv);
    b.And(c1, c1, wpos);
    b.ILt(c2, wi, I(0));
    Operand c3 = t();
    b.ULt(c3, iv, r);
    b.And(c2, c2, c3);
    b.Or(c1, c1, c2);
  }
  Operand sat = down;  // reused (dead)
  b.Movc(sat, wpos, U(hi32), U(lo32));
  b.Movc(r, c1, sat, r);
  b.Ge(far, w.Abs(), F(16777216.0f));
  b.Lt(c2, F(0.0f), w);
  b.Movc(sat, c2, U(hi32), U(lo32));
  b.Movc(r, far, sat, r);
  if (bits < 32) {
    if (is_signed) {
      b.IMax(r, r, I(static_cast<int32_t>(lo)));
      b.IMin(r, r, I(static_cast<int32_t>(hi)));
    } else {
      b.UMin(r, r, U(static_cast<uint32_t>(hi)));
    }
  }
  b.Mov(iv, r);
  // Magnitudes >= 2^33 (incl. inf): saturate by the sign of g.
  Operand big = bias_s, gpos = up;  // reused (dead)
  b.And(big, g, U(0x7fffffffu));
  b.UGe(big, big, U(0x50000000u));  // |g| >= 2^33, inf included, as integers
  b.Lt(gpos, F(0.0f), g);
  b.Movc(sat, gpos, U(static_cast<uint32_t>(hi)), U(static_cast<uint32_t>(lo)));
  b.Movc(iv, big, sat, iv);
  // NaN (S or B NaN, 0*inf, inf-inf) -> 0.
  Operand nan = t();
  b.And(nan, g, U(0x7fffffffu));
  b.ULt(nan, U(0x7f800000u), nan);  // integer NaN test (no fast-math folding)
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
