#include "engine/dxbc/mvn_texel_emit.h"

namespace dmls::gpu {
namespace {

const char* kComps[] = {"x", "y", "z", "w"};

}  // namespace

void MvnTexelEmitter::Index(Operand first, Operand tid, uint32_t k, uint32_t threads, Operand n,
                            Operand t, Operand ok) {
  Operand raw = T(), texels = T();
  b_.IAdd(raw, first, tid);
  b_.IAdd(raw, raw, U(k * threads));
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

Operand MvnTexelEmitter::Pack(const std::vector<Operand>& values) {
  Operand v = b_.NewTemp();
  for (uint32_t w = 0; w < 4; ++w) {
    const Operand dst = v.Comps(kComps[w]);
    if (type_ == DataType::kFloat32) {
      b_.Mov(dst, values[w]);
      continue;
    }
    Operand lo = T(), hi = T();
    b_.F32ToF16(lo, values[2 * w]);
    b_.F32ToF16(hi, values[2 * w + 1]);
    b_.IShl(hi, hi, U(16));
    b_.Or(dst, hi, lo);
  }
  return v.Comps("xyzw");
}

}  // namespace dmls::gpu
