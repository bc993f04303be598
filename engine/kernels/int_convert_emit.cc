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
// from trunc(round_to_double(v)) only when v lies within half a double ulp
// below a non-zero integer in magnitude (the double rounding lands on the
// integer): that case is detected below from s and e, and for 8/16-bit x
// with Bias = 0 it cannot happen (x*Scale has at most 40 significant bits,
// exact in double).
void ScalarScaleBias(MathEmitter& m, DataType type, Operand x, Operand scale,
                     Operand bias) {
  ShaderBuilder& b = m.builder();
  const bool is_signed = IsSignedInt(type);
  const uint32_t bits = ElementBits(type);
  auto t = [&]() { return b.NewTemp().x(); };
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
  // v = s + e + f, each term added to s by TwoSum and its exact error added
  // to e by TwoSum again: a single error accumulator rounds away a small
  // Bias beside errors of a few units (1033557952 - 4 - 1e-7 kept only the
  // -4), and that Bias decides the truncation.
  Operand s = t(), e = t(), f = t(), term = t(), err = t();
  const MathEmitter::TwoSumScratch scratch{t(), t(), t(), t()};
  auto add_term = [&](Operand a) {
    b.Mov(err, F(0.0f));
    m.TwoSum(s, err, a, scratch);
    m.TwoSum(e, f, err, scratch);
  };
  b.Mul(s, xa, sh);
  b.Mul(s, s, F(16777216.0f));
  b.Mov(e, F(0.0f));
  b.Mov(f, F(0.0f));
  struct Piece { Operand x; float scale; };
  const Piece pieces[] = {{xa, 16777216.0f}, {xb, 4096.0f}, {xc, 1.0f}};
  bool first = true;
  for (const Piece& piece : pieces) {
    for (Operand part : {sh, sl}) {
      if (first) {  // xa*sh is already in s
        first = false;
        continue;
      }
      b.Mul(term, piece.x, part);
      if (piece.scale != 1.0f) b.Mul(term, term, F(piece.scale));
      add_term(term);
    }
  }
  add_term(bias_s);
  // Renormalise: v = s + e1 + e2 with |e1| about ulp(s)/2 at most and
  // |e2| <= ulp(e1)/2.
  Operand e1 = t(), e2 = t();
  b.Mov(e1, F(0.0f));
  m.TwoSum(s, e1, e, scratch);
  b.Mov(e2, F(0.0f));
  m.TwoSum(e1, e2, f, scratch);
  b.Mul(s, s, up);
  b.Mul(e1, e1, up);
  b.Mul(e2, e2, up);
  // trunc of v rounded to double. If s is not an integer (|s| < 2^23), the
  // small parts cannot move s across an integer, nor can rounding to double
  // (v stays about ulp(s)/2 from any integer, far beyond a double's half
  // ulp): the result is trunc(s). If s is an integer, work on
  // |v| = |s| + p + q with (p, q) = sign(s)*(e1, e2): trunc(|v|) is
  // |s| + floor(p + q), one more when |v| lies just below the integer
  // k = |s| + C, C = ceil(p + q), and rounds up to it in double, that is
  // when d = C - p - q is at most half the spacing of doubles below k:
  // 2^(E(k)-53), or 2^(E(k)-54) when k is a power of two (a tie goes to k,
  // whose last mantissa bit is 0). k is not always a float; K = fl(k) has
  // E(k) unless k is just below 2^m = K, where the power-of-two rule gives
  // the same 2^(m-54); so the spacing is taken from K, halved when K is a
  // power of two and k <= K (C <= K - |s|, an exact difference). (Found on
  // an H100, where lavapipe agreed: 2067115896 * 0.5 - 1e-7 gave 1033557948
  // where double gives 1033557947.99999988.)
  Operand n = t(), is_int = t(), adj = t(), fl = t(), d = t(), c1 = t(), c2 = t();
  Operand neg = huge, p = e, q = f, k = down, half = up, pow2 = bias_s;  // reused (dead)
  b.RoundZ(n, s);
  b.Eq(is_int, n, s);
  b.Lt(neg, s, F(0.0f));
  b.Movc(p, neg, e1.Neg(), e1);
  b.Movc(q, neg, e2.Neg(), e2);
  // floor and ceil of p + q: those of p, one further when p is an integer
  // and q goes past it.
  b.RoundNi(fl, p);
  b.RoundPi(d, p);
  b.Eq(c1, fl, p);
  b.Lt(c2, q, F(0.0f));
  b.And(c2, c2, c1);
  b.And(c2, c2, F(1.0f));
  b.Add(fl, fl, c2.Neg());
  b.Lt(c2, F(0.0f), q);
  b.And(c2, c2, c1);
  b.And(c2, c2, F(1.0f));
  b.Add(d, d, c2);  // C
  b.Add(k, s.Abs(), d);
  m.Launder(k);  // else (|s| + C) - |s| >= C folds to true (lavapipe)
  b.Add(c1, k, s.Abs().Neg());
  b.Ge(c1, c1, d);  // k <= K
  b.And(pow2, k, U(0x007fffffu));
  b.IEq(pow2, pow2, U(0));
  b.And(pow2, pow2, c1);
  b.And(half, k, U(0x7f800000u));  // 2^E(K)
  b.Mul(half, half, F(0x1p-53f));
  b.Mul(c1, half, F(0.5f));
  b.Movc(half, pow2, c1, half);
  b.Add(d, d, p.Neg());
  b.Add(d, d, q.Neg());
  b.Ge(c1, half, d);
  b.Lt(c2, F(0.0f), d);
  b.And(c1, c1, c2);
  b.And(c1, c1, F(1.0f));  // 1.0f where |v| rounds up to k, else 0
  b.Add(adj, fl, c1);
  b.Movc(adj, neg, adj.Neg(), adj);
  b.Movc(adj, is_int, adj, F(0.0f));
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
  Operand clamped = t(), w = t(), iv = t(), wi = t(), r = t(), far = t(), wpos = t();
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
