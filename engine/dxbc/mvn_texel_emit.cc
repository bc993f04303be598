#include "engine/dxbc/mvn_texel_emit.h"

namespace dmls::gpu {
namespace {

const char* kComps[] = {"x", "y", "z", "w"};

}  // namespace

void MvnTexelEmitter::Index(Operand first, Operand tid, Operand step, Operand n, Operand t,
                            Operand ok) {
  Operand raw = T(), texels = T();
  b_.IAdd(raw, first, tid);
  b_.IAdd(raw, raw, step);
  b_.UShr(texels, n, U(shift_));
  b_.ULt(ok, raw, texels);
  b_.Movc(t, ok, raw, U(0));
}

Operand MvnTexelEmitter::Address(Operand base, Operand t, Operand view_base) {
  Operand a = T();
  b_.UShr(a, base, U(shift_));
  b_.IAdd(a, a, t);
  b_.IAdd(a, a, view_base);
  return a;
}

Operand MvnTexelEmitter::Load(uint32_t res, Operand address) {
  Operand v = b_.NewTemp().Comps("xyzw");
  b_.Ld(v, address, Operand::Resource(res));
  return v;
}

void MvnTexelEmitter::Unpack(Operand dst, Operand texel, uint32_t lane) {
  if (type_ == DataType::kFloat32) {
    b_.Mov(dst, texel.Comps(kComps[lane]));
    return;
  }
  const Operand word = texel.Comps(kComps[lane / 2]);
  if (lane % 2 == 0) {
    b_.F16ToF32(dst, word);  // the low half
    return;
  }
  b_.UShr(dst, word, U(16));
  b_.F16ToF32(dst, dst);
}

void MvnTexelEmitter::Unpack(Operand dst, Operand texel, Operand lane) {
  Operand word = T(), sel = T();
  if (type_ == DataType::kFloat32) {
    b_.Mov(word, lane);
  } else {
    b_.UShr(word, lane, U(1));
  }
  b_.Mov(dst, texel.Comps(kComps[0]));
  for (uint32_t w = 1; w < 4; ++w) {
    b_.IEq(sel, word, U(w));
    b_.Movc(dst, sel, texel.Comps(kComps[w]), dst);
  }
  if (type_ == DataType::kFloat32) return;
  b_.And(sel, lane, U(1));
  b_.IShl(sel, sel, U(4));
  b_.UShr(dst, dst, sel);
  b_.F16ToF32(dst, dst);  // of the low half, as the static form
}

Operand MvnTexelEmitter::Pack(const std::vector<Operand>& values) {
  Operand v = b_.NewTemp();
  for (uint32_t w = 0; w < 4; ++w) {
    const Operand dst = v.Comps(kComps[w]);
    if (type_ == DataType::kFloat32) {
      b_.Mov(dst, values[w]);
      continue;
    }
    PackHalves(dst, values[2 * w], values[2 * w + 1]);
  }
  return v.Comps("xyzw");
}

void MvnTexelEmitter::PackHalves(Operand dst, Operand lo, Operand hi) {
  Operand l = T(), h = T();
  b_.F32ToF16(l, lo);
  b_.F32ToF16(h, hi);
  b_.IShl(h, h, U(16));
  b_.Or(dst, h, l);
}

}  // namespace dmls::gpu
