#include "engine/kernels/mvn_texel_emit.h"

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

void MvnTexelEmitter::UnpackLane(Operand dst, Operand texel, Operand lane) {
  // The word: w = lane (FLOAT32) or lane / 2 (FLOAT16).
  Operand w = T(), pick = T(), word = T();
  if (type_ == DataType::kFloat16) {
    b_.UShr(w, lane, U(1));
  } else {
    b_.Mov(w, lane);
  }
  b_.Mov(word, texel.Comps("w"));
  for (uint32_t k = 3; k-- > 0;) {
    b_.IEq(pick, w, U(k));
    b_.Movc(word, pick, texel.Comps(kComps[k]), word);
  }
  if (type_ == DataType::kFloat32) {
    b_.Mov(dst, word);
    return;
  }
  b_.And(pick, lane, U(1));
  b_.IShl(pick, pick, U(4));  // 0 or 16
  b_.UShr(word, word, pick);
  b_.F16ToF32(dst, word);  // the low half
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
