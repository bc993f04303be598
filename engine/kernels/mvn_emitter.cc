#include "engine/kernels/mvn_emitter.h"

#include <algorithm>
#include <vector>

namespace dmls::gpu::mvn_emit {

void MvnEmitter::GroupCoordinates() {
  w_ = T();
  valid_ = T();
  g_ = T();
  c_ = T();
  Operand total = T();
  b_.IMad(w_, Operand::ThreadGroupId().y(), CB0(0).y(), Operand::ThreadGroupId().x());
  b_.IMul(total, CB0(0).x(), CB0(0).w());
  b_.ULt(valid_, w_, total);
  Operand wc = T();
  if (key_.stage == KernelStage::kMvnApply || key_.stage == KernelStage::kMvnNormalise) {
    // The second pass walks the dispatch from its end: it first reads
    // what the statistics pass read last, some of it still in the L2
    // (H200: 2-4 us less at 2^27 FLOAT16 elements, docs/PERFORMANCE.md).
    Operand r = T();
    b_.IAdd(r, total, U(0xffffffffu));
    b_.IAdd(r, r, w_.Neg());
    b_.Movc(wc, valid_, r, U(0));
  } else {
    b_.Movc(wc, valid_, w_, U(0));
  }
  b_.UDiv(g_, c_, wc, CB0(0).w());
  b_.IAdd(g_, g_, CB0(3).x());  // MvnArgs::first_group
  tid_ = Operand::ThreadIdInGroupFlattened();
}

std::vector<Operand> MvnEmitter::OuterOffsets(const std::vector<Tensor>& tensors) {
  return OuterOffsetsOf(g_, tensors);
}

std::vector<Operand> MvnEmitter::InnerOffsets(Operand n, const std::vector<Tensor>& tensors,
                                              const std::vector<Operand>& base) {
  return DimOffsets(n, kMaxRank - inner_, kMaxRank, tensors, base);
}

std::vector<Operand> MvnEmitter::DimOffsets(Operand index, uint32_t first, uint32_t end,
                                            const std::vector<Tensor>& tensors,
                                            const std::vector<Operand>& start) {
  std::vector<Operand> offs;
  for (size_t i = 0; i < tensors.size(); ++i) {
    offs.push_back(T());
    b_.Mov(offs.back(), start[i]);
  }
  Operand rem = T(), coord = T();
  b_.Mov(rem, index);
  for (uint32_t k = end; k-- > first;) {
    if (k > first) {
      b_.UDiv(rem, coord, rem, CbWord(kRegSizes, k));
    } else {
      b_.Mov(coord, rem);
    }
    for (size_t i = 0; i < tensors.size(); ++i) {
      b_.IMad(offs[i], coord, CbWord(kRegStrides[tensors[i]], k), offs[i]);
    }
  }
  return offs;
}

void MvnEmitter::HalfWord(Operand word, Operand off, Operand view_base) {
  b_.UShr(word, off, U(1));
  b_.IAdd(word, word, view_base);
}

void MvnEmitter::HalfShift(Operand shift, Operand off) {
  b_.And(shift, off, U(1));
  b_.IShl(shift, shift, U(4));
}

void MvnEmitter::UnpackHalf(Operand d, Operand shift) {
  b_.UShr(d, d, shift);
  b_.F16ToF32(d, d);
}

void MvnEmitter::Load(Operand dst, uint32_t res, Operand off) {
  Operand word = T();
  if (key_.data_type == DataType::kFloat32) {
    b_.IAdd(word, off, SrvBase(res));
    b_.Ld(dst, word, Operand::Resource(res));
    return;
  }
  Operand shift = T();
  HalfWord(word, off, SrvBase(res));
  HalfShift(shift, off);
  b_.Ld(dst, word, Operand::Resource(res));
  UnpackHalf(dst, shift);
}

void MvnEmitter::LoadPair(Operand d0, Operand d1, uint32_t res, Operand off0, Operand off1) {
  Operand w0 = T(), w1 = T(), differ = T(), shift = T();
  HalfWord(w0, off0, SrvBase(res));
  HalfWord(w1, off1, SrvBase(res));
  b_.Ld(d0, w0, Operand::Resource(res));
  b_.INe(differ, w0, w1);
  b_.Mov(d1, d0);
  b_.IfNz(differ);
  b_.Ld(d1, w1, Operand::Resource(res));
  b_.EndIf();
  for (auto [d, off] : {std::pair{d0, off0}, std::pair{d1, off1}}) {
    HalfShift(shift, off);
    UnpackHalf(d, shift);
  }
}

void MvnEmitter::LoadBothWords(Operand d0, Operand d1, uint32_t res, Operand off0,
                               Operand off1) {
  Operand w0 = T(), w1 = T(), shift = T();
  HalfWord(w0, off0, SrvBase(res));
  HalfWord(w1, off1, SrvBase(res));
  b_.Ld(d0, w0, Operand::Resource(res));
  b_.Ld(d1, w1, Operand::Resource(res));
  for (auto [d, off] : {std::pair{d0, off0}, std::pair{d1, off1}}) {
    HalfShift(shift, off);
    UnpackHalf(d, shift);
  }
}

void MvnEmitter::TexelIndex(uint32_t k, Operand t, Operand ok) {
  Operand first = T();
  b_.IMul(first, c_, U(chunk_ / lanes_));
  texel_.Index(first, tid_, k, threads_, CB0(0).z(), t, ok);
}

void MvnEmitter::Store(Operand v, Operand off) {
  Operand word = T();
  if (key_.data_type == DataType::kFloat32) {
    b_.IAdd(word, off, UavBase(0));
    b_.StoreUavTyped(Operand::Uav(0), word, v);
    return;
  }
  // FLOAT16: the other half of the word belongs to another thread.
  Operand shift = T(), h = T(), clear = T();
  HalfWord(word, off, UavBase(0));
  HalfShift(shift, off);
  b_.F32ToF16(h, v);
  b_.IShl(h, h, shift);
  b_.IShl(clear, U(0xffff), shift);
  b_.Not(clear, clear);
  b_.AtomicAnd(Operand::Uav(0).x(), word, clear);
  b_.AtomicOr(Operand::Uav(0).x(), word, h);
}

void MvnEmitter::StorePair(Operand v0, Operand off0, Operand ok0, Operand v1, Operand off1,
                           Operand ok1) {
  Operand pair = T(), t = T(), word = T(), h = T();
  b_.And(pair, ok0, ok1);
  b_.IAdd(t, off0, U(1));
  b_.IEq(t, t, off1);
  b_.And(pair, pair, t);
  b_.And(t, off0, U(1));
  b_.IEq(t, t, U(0));
  b_.And(pair, pair, t);
  b_.IfNz(pair);
  HalfWord(word, off0, UavBase(0));
  texel_.PackHalves(h, v0, v1);
  b_.StoreUavTyped(Operand::Uav(0), word, h);
  b_.Else();
  b_.IfNz(ok0);
  Store(v0, off0);
  b_.EndIf();
  b_.IfNz(ok1);
  Store(v1, off1);
  b_.EndIf();
  b_.EndIf();
}

Operand MvnEmitter::Reference(Operand base_in) {
  Operand ref = T();
  if (vec4_) {
    texel_.Unpack(ref, texel_.Load(0, texel_.Address(base_in, U(0), SrvBase(0))), 0);
  } else if (span_) {
    Operand addr = T(), lane = T();
    b_.UShr(addr, base_in, U(texel_.shift()));
    b_.IAdd(addr, addr, SrvBase(0));
    b_.And(lane, base_in, U(texel_.lanes() - 1));
    texel_.UnpackLane(ref, texel_.Load(0, addr), lane);
  } else {
    Load(ref, 0, base_in);
  }
  stats_.MakeFinite(ref);
  return ref;
}

MvnEmitter::SpanTexels MvnEmitter::SpanElements(Operand base_in, std::vector<Operand>& x) {
  const uint32_t lanes = texel_.lanes(), shift = texel_.shift();
  SpanTexels sp{base_in, T(), T(), {}};
  Operand first = T(), t_end = T();
  b_.UShr(first, base_in, U(shift));  // the texel of the group's first element
  b_.IAdd(sp.end, base_in, CB0(0).z());  // past its last element
  b_.IAdd(t_end, sp.end, U(lanes - 1));
  b_.UShr(t_end, t_end, U(shift));
  b_.IMad(sp.c0, c_, U(chunk_ / lanes), first);
  std::vector<Operand> v;
  for (uint32_t k = 0; k < elems_ / lanes; ++k) {
    Operand in = T(), addr = T(), t = T();
    b_.IAdd(t, sp.c0, tid_);
    b_.IAdd(t, t, U(k * threads_));
    b_.ULt(in, t, t_end);
    b_.Movc(addr, in, t, first);  // past the group: a texel of it, all masked
    b_.IAdd(addr, addr, SrvBase(0));
    v.push_back(texel_.Load(0, addr));
    sp.t.push_back(t);
  }
  for (uint32_t j = 0; j < elems_; ++j) {
    x[j] = T();
    texel_.Unpack(x[j], v[j / lanes], j % lanes);
  }
  return sp;
}

Operand MvnEmitter::SpanInside(const SpanTexels& sp) {
  // The chunk's elements [e, e + chunk_) with e = c0 * lanes: inside the
  // group [base_in, end) when base_in <= e < end and end - e >= chunk_
  // (no sum that could wrap). Uniform over the workgroup.
  Operand e = T(), inside = T(), t = T();
  b_.IShl(e, sp.c0, U(texel_.shift()));
  b_.UGe(inside, e, sp.base_in);
  b_.ULt(t, e, sp.end);
  b_.And(inside, inside, t);
  b_.IAdd(t, sp.end, e.Neg());
  b_.UGe(t, t, U(chunk_));
  b_.And(inside, inside, t);
  return inside;
}

void MvnEmitter::SpanMasks(const SpanTexels& sp, std::vector<Operand>& ok) {
  // Per texel, the mask of its lanes inside the group: lanes [lo, hi) with
  // lo = base_in - first element of the texel and hi = end - the same,
  // both clamped to [0, lanes]; a lane's ok is its bit (nonzero, not ~0).
  // Signed differences: both ends are within a chunk of the texel.
  const uint32_t lanes = texel_.lanes(), shift = texel_.shift();
  std::vector<Operand> mask(sp.t.size());
  for (uint32_t k = 0; k < sp.t.size(); ++k) {
    Operand e0 = T(), lo = T(), hi = T();
    mask[k] = T();
    b_.IShl(e0, sp.t[k], U(shift));
    b_.IAdd(lo, sp.base_in, e0.Neg());
    b_.IAdd(hi, sp.end, e0.Neg());
    b_.IMax(lo, lo, I(0));
    b_.IMin(lo, lo, I(static_cast<int32_t>(lanes)));
    b_.IMax(hi, hi, lo);  // an empty texel: hi <= lo, no lane
    b_.IMin(hi, hi, I(static_cast<int32_t>(lanes)));
    b_.IShl(hi, U(1), hi);
    b_.IShl(lo, U(1), lo);
    b_.IAdd(mask[k], hi, lo.Neg());  // bits [lo, hi)
  }
  for (uint32_t j = 0; j < elems_; ++j) {
    ok[j] = T();
    b_.And(ok[j], mask[j / lanes], U(1u << (j % lanes)));
  }
}

void MvnEmitter::SetPairShift(Operand base) {
  pair_shift_ = T();
  if (key_.data_type != DataType::kFloat16 || vec4_ || span_) {
    b_.Mov(pair_shift_, U(0));
    return;
  }
  Operand room = T();
  b_.IMul(room, CB0(0).w(), U(chunk_));
  b_.ULt(room, CB0(0).z(), room);
  b_.And(pair_shift_, base, U(1));
  b_.And(pair_shift_, pair_shift_, room);
}

void MvnEmitter::ElementIndex(uint32_t j, Operand n_clamped, Operand ok) {
  Operand n = T();
  if (key_.data_type == DataType::kFloat16) {
    b_.IMad(n, tid_, U(2), U(j / 2 * 2 * threads_ + j % 2));
    b_.IMad(n, c_, U(chunk_), n);
    b_.IAdd(n, n, pair_shift_.Neg());  // -1 for the first: out of range
  } else {
    b_.IMad(n, c_, U(chunk_), tid_);
    b_.IAdd(n, n, U(j * threads_));
  }
  b_.ULt(ok, n, CB0(0).z());
  b_.Movc(n_clamped, ok, n, U(0));
}

void MvnEmitter::DeclareNormalise() {
  b_.DclConstantBuffer(kConstantBlockRegs);
  b_.DclBufferSrv(0, ReturnType::kUint);
  if (key_.has_scale) b_.DclBufferSrv(1, ReturnType::kUint);
  if (key_.has_bias) b_.DclBufferSrv(2, ReturnType::kUint);
  b_.DclTypedUav(0, ReturnType::kUint);
  const bool reads_scratch =
      key_.stage == KernelStage::kMvnApply || key_.stage == KernelStage::kMvnNormalise;
  if (reads_scratch) b_.DclTypedUav(1, ReturnType::kFloat);
  if (key_.stage == KernelStage::kMvnCoop) b_.DclTypedUav(1, ReturnType::kUint);
  // kMvnNormalise reduces nothing.
  if (key_.stage != KernelStage::kMvnNormalise) {
    b_.DclGroupSharedRaw(0, threads_ * kMvnStatBytes);
  }
}

std::vector<MvnEmitter::Elem> MvnEmitter::LoadElements(const std::vector<Tensor>& tensors,
                                                       const std::vector<Operand>& base,
                                                       bool defer_scale_bias) {
  if (vec4_) return LoadTexels(tensors, base, defer_scale_bias);
  std::vector<Elem> el(elems_);
  std::vector<Operand> y(elems_), in_off(elems_);
  for (uint32_t j = 0; j < elems_; ++j) {
    Elem& e = el[j];
    Operand nj = T();
    e.ok = T();
    e.y = y[j] = T();
    ElementIndex(j, nj, e.ok);
    std::vector<Operand> off = InnerOffsets(nj, tensors, base);
    in_off[j] = off[0];
    e.out_off = off[1];
    LoadScaleBiasAt(e, off, 2);
  }
  LoadInputs(y, in_off);
  return el;
}

void MvnEmitter::LoadInputs(const std::vector<Operand>& x, const std::vector<Operand>& off) {
  const bool both_words =
      key_.data_type == DataType::kFloat16 && key_.stage == KernelStage::kMvnPartial;
  for (size_t j = 0; j < x.size(); ++j) {
    if (both_words) {
      LoadBothWords(x[j], x[j + 1], 0, off[j], off[j + 1]);
      ++j;
    } else if (key_.data_type == DataType::kFloat16) {
      LoadPair(x[j], x[j + 1], 0, off[j], off[j + 1]);
      ++j;
    } else {
      Load(x[j], 0, off[j]);
    }
  }
}

std::vector<MvnEmitter::Elem> MvnEmitter::LoadTexels(const std::vector<Tensor>& tensors,
                                                     const std::vector<Operand>& base,
                                                     bool defer_scale_bias) {
  std::vector<Elem> el(elems_);
  std::vector<Operand> v;
  for (uint32_t k = 0; k < elems_ / lanes_; ++k) {
    Elem& e = el[k * lanes_];
    e.texel = T();
    e.ok = T();
    TexelIndex(k, e.texel, e.ok);
    v.push_back(texel_.Load(0, texel_.Address(base[0], e.texel, SrvBase(0))));
    if (tensors.size() > 1) e.out_off = texel_.Address(base[1], e.texel, UavBase(0));
  }
  for (uint32_t j = 0; j < elems_; ++j) {
    const Elem& first = el[j / lanes_ * lanes_];
    el[j].ok = first.ok;
    el[j].texel = first.texel;
    el[j].out_off = first.out_off;
  }
  if (ScaleBiasAreTexels()) {
    if (!defer_scale_bias) ScaleBiasTexels(el, base);
  } else if (tensors.size() > 2) {
    const std::vector<Tensor> sb(tensors.begin() + 2, tensors.end());
    const std::vector<Operand> sb_base(base.begin() + 2, base.end());
    for (uint32_t j = 0; j < elems_; ++j) {
      Elem& e = el[j];
      Operand nj = T();
      b_.IMad(nj, e.texel, U(lanes_), U(j % lanes_));
      std::vector<Operand> off = InnerOffsets(nj, sb, sb_base);
      if (key_.has_scale) {
        e.s = T();
        Load(e.s, 1, off.front());
      }
      if (key_.has_bias) {
        e.bias = T();
        Load(e.bias, 2, off.back());
      }
    }
  }
  for (uint32_t j = 0; j < elems_; ++j) {
    el[j].y = T();
    texel_.Unpack(el[j].y, v[j / lanes_], j % lanes_);
  }
  return el;
}

void MvnEmitter::ScaleBiasTexels(std::vector<Elem>& el, const std::vector<Operand>& base,
                                 uint32_t first, uint32_t count) {
  const uint32_t texels = elems_ / lanes_;
  const uint32_t end = first + std::min(count, texels - first);
  std::vector<Operand> vs, vb;
  for (uint32_t k = first; k < end; ++k) {
    const Operand t = el[k * lanes_].texel;
    if (key_.has_scale) vs.push_back(texel_.Load(1, texel_.Address(base[2], t, SrvBase(1))));
    if (key_.has_bias) vb.push_back(texel_.Load(2, texel_.Address(base.back(), t, SrvBase(2))));
  }
  for (uint32_t j = first * lanes_; j < end * lanes_; ++j) {
    const uint32_t k = j / lanes_ - first;
    if (key_.has_scale) {
      el[j].s = T();
      texel_.Unpack(el[j].s, vs[k], j % lanes_);
    }
    if (key_.has_bias) {
      el[j].bias = T();
      texel_.Unpack(el[j].bias, vb[k], j % lanes_);
    }
  }
}

void MvnEmitter::StoreTexels(const std::vector<Elem>& el) {
  for (uint32_t k = 0; k < elems_ / lanes_; ++k) StoreTexel(el, k);
}

void MvnEmitter::StoreTexel(const std::vector<Elem>& el, uint32_t k) {
  const Elem& e = el[k * lanes_];
  std::vector<Operand> y;
  for (uint32_t j = 0; j < lanes_; ++j) y.push_back(el[k * lanes_ + j].y);
  const Operand v = texel_.Pack(y);
  b_.IfNz(e.ok);
  b_.StoreUavTyped(Operand::Uav(0), e.out_off, v);
  b_.EndIf();
}

std::vector<Tensor> MvnEmitter::NormaliseTensors() const {
  std::vector<Tensor> tensors = {kIn, kOut};
  if (key_.has_scale) tensors.push_back(kScale);
  if (key_.has_bias) tensors.push_back(kBias);
  return tensors;
}

void MvnEmitter::SetEmpty(const MvnStat& p) {
  b_.Mov(p.n, F(0.0f));
  b_.Mov(p.m, F(0.0f));
  b_.Mov(p.M, F(0.0f));
  b_.Mov(p.s, F(1.0f));
}

void MvnEmitter::LoadSharedStat(const MvnStat& p, Operand byte_addr) {
  Operand pv = b_.NewTemp();
  b_.LdRaw(pv.Comps("xyzw"), byte_addr, Operand::GroupShared(1));
  b_.Mov(p.n, pv.x());
  b_.Mov(p.m, pv.y());
  b_.Mov(p.M, pv.z());
  b_.Mov(p.s, pv.w());
}

void MvnEmitter::StoreSharedStat(Operand byte_addr, const MvnStat& q) {
  Operand pk = b_.NewTemp();
  b_.Mov(pk.x(), q.n);
  b_.Mov(pk.y(), q.m);
  b_.Mov(pk.z(), q.M);
  b_.Mov(pk.w(), q.s);
  b_.StoreRaw(Operand::GroupShared(1).Comps("xyzw"), byte_addr, pk);
}

void MvnEmitter::PublishStat(Operand first, const MvnStat& q) {
  const Operand w[4] = {q.n, q.m, q.M, q.s};
  Operand old = T();
  for (uint32_t k = 0; k < 4; ++k) {
    Operand a = T();
    b_.IAdd(a, first, U(k));
    b_.ImmAtomicExch(old, Operand::Uav(1).x(), a, w[k]);
  }
}

void MvnEmitter::ReadStat(const MvnStat& p, Operand first) {
  const Operand w[4] = {p.n, p.m, p.M, p.s};
  for (uint32_t k = 0; k < 4; ++k) {
    Operand a = T();
    b_.IAdd(a, first, U(k));
    b_.ImmAtomicOr(w[k], Operand::Uav(1).x(), a, U(0));
  }
}
}  // namespace dmls::gpu::mvn_emit
