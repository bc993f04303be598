// MvnEmitter: the normalisation of groups packed one after another, by
// whole texels of the tensor (kMvnNormalise with kMvnVariantTexelSpan).
#include <vector>

#include "engine/kernels/mvn_emitter.h"

namespace dmls::gpu::mvn_emit {

absl::StatusOr<KernelInfo> MvnEmitter::SpanNormalise() {
  DeclareNormalise();
  GroupCoordinates();
  MvnStat st = LoadGroupStat(g_);
  // Input and output share their layout (the planner's condition), so the
  // group's first element is at the same offset in both.
  const Operand start = OuterOffsets({kIn})[0];
  Operand ref = Reference(start);
  const uint32_t lanes = texel_.lanes(), shift = texel_.shift();
  const uint32_t texels = elems_ / lanes;
  // The group owns texels [first, last]: those whose lane 0 is in it.
  // Where it ends inside a texel (split != 0), that texel, `edge`, holds
  // its last elements and the next group's first ones.
  Operand end = T(), first = T(), stop = T(), c0 = T(), split = T(), edge = T();
  b_.IAdd(end, start, CB0(0).z());
  b_.IAdd(first, start, U(lanes - 1));
  b_.UShr(first, first, U(shift));
  b_.IAdd(stop, end, U(lanes - 1));
  b_.UShr(stop, stop, U(shift));
  b_.IMad(c0, c_, U(chunk_ / lanes), first);
  b_.And(split, end, U(lanes - 1));
  b_.UShr(edge, end, U(shift));
  Operand no_edge = T();
  b_.IEq(no_edge, split, U(0));
  b_.Movc(edge, no_edge, U(0xffffffffu), edge);  // no texel is the edge

  // This thread's texels of the chunk, all loads first; the edge is left
  // to the branch below.
  std::vector<Elem> el(elems_);
  std::vector<Operand> v(texels);
  for (uint32_t k = 0; k < texels; ++k) {
    Elem& e = el[k * lanes];
    e.texel = T();
    e.ok = T();
    e.out_off = T();
    Operand addr = T(), not_edge = T();
    b_.IAdd(e.texel, c0, tid_);
    b_.IAdd(e.texel, e.texel, U(k * threads_));
    b_.ULt(e.ok, e.texel, stop);
    b_.Movc(addr, e.ok, e.texel, first);  // past the group: a texel of it, not stored
    b_.IAdd(e.out_off, addr, UavBase(0));
    b_.IAdd(addr, addr, SrvBase(0));
    v[k] = texel_.Load(0, addr);
    b_.INe(not_edge, e.texel, edge);
    b_.And(e.ok, e.ok, not_edge);
  }
  for (uint32_t j = 0; j < elems_; ++j) {
    Elem& e = el[j];
    const Elem& lead = el[j / lanes * lanes];
    if (j % lanes != 0) {
      e.ok = T();
      b_.Mov(e.ok, lead.ok);
      e.out_off = lead.out_off;
      e.texel = lead.texel;
    }
    e.y = T();
    texel_.Unpack(e.y, v[j / lanes], j % lanes);
  }
  // Scale and Bias by element (their layout is theirs: InnerOffsets of the
  // element's index in the group, clamped into it for lanes past its end).
  const std::vector<Tensor> sb = ScaleBiasTensors();
  Operand last = T();
  b_.IAdd(last, CB0(0).z(), I(-1));
  if (!sb.empty()) {
    const std::vector<Operand> sb_base = OuterOffsetsOf(g_, sb);
    for (uint32_t j = 0; j < elems_; ++j) {
      Operand n = T();
      b_.IMad(n, el[j].texel, U(lanes), U(j % lanes));
      b_.IAdd(n, n, start.Neg());
      b_.UMin(n, n, last);
      LoadScaleBias(el[j], n, sb, sb_base);
    }
  }
  NormaliseValues(st, ref, el, nullptr);
  StoreTexels(el);

  // The edge texel: lanes below `split` with this group's statistic, the
  // others with the next group's, by the thread whose texel it is.
  Operand d = T(), mine = T(), own = T();
  b_.IAdd(d, edge, c0.Neg());
  b_.ULt(mine, d, U(chunk_ / lanes));
  b_.And(own, d, U(threads_ - 1));
  b_.IEq(own, own, tid_);
  b_.And(mine, mine, own);
  b_.And(mine, mine, valid_);
  b_.IfNz(mine);
  {
    Operand addr = T();
    b_.IAdd(addr, edge, SrvBase(0));
    const Operand x = texel_.Load(0, addr);
    std::vector<Elem> here(lanes), next(lanes);
    for (uint32_t j = 0; j < lanes; ++j) {
      for (std::vector<Elem>* side : {&here, &next}) {
        Elem& e = (*side)[j];
        e.ok = T();
        b_.Mov(e.ok, U(0xffffffffu));
        e.y = T();
        texel_.Unpack(e.y, x, j);
      }
    }
    Operand g_next = T();
    b_.IAdd(g_next, g_, U(1));
    if (!sb.empty()) {
      const std::vector<Operand> base_here = OuterOffsetsOf(g_, sb);
      const std::vector<Operand> base_next = OuterOffsetsOf(g_next, sb);
      for (uint32_t j = 0; j < lanes; ++j) {
        // Lanes below `split` are this group's; the others the next one's
        // (a lane's index in the other group wraps and is clamped).
        Operand e = T(), n = T();
        b_.IMad(e, edge, U(lanes), U(j));
        b_.IAdd(n, e, start.Neg());
        b_.UMin(n, n, last);
        LoadScaleBias(here[j], n, sb, base_here);
        b_.IAdd(n, e, end.Neg());
        b_.UMin(n, n, last);
        LoadScaleBias(next[j], n, sb, base_next);
      }
    }
    NormaliseValues(st, ref, here, nullptr);
    MvnStat st_next = LoadGroupStat(g_next);
    Operand ref_next = Reference(end);
    NormaliseValues(st_next, ref_next, next, nullptr);
    std::vector<Operand> y(lanes);
    for (uint32_t j = 0; j < lanes; ++j) {
      Operand below = T();
      y[j] = T();
      b_.ULt(below, U(j), split);
      b_.Movc(y[j], below, here[j].y, next[j].y);
    }
    Operand out = T();
    b_.IAdd(out, edge, UavBase(0));
    b_.StoreUavTyped(Operand::Uav(0), out, texel_.Pack(y));
  }
  b_.EndIf();
  return Finish(b_, threads_);
}

std::vector<Tensor> MvnEmitter::ScaleBiasTensors() const {
  std::vector<Tensor> sb;
  if (key_.has_scale) sb.push_back(kScale);
  if (key_.has_bias) sb.push_back(kBias);
  return sb;
}

std::vector<Operand> MvnEmitter::OuterOffsetsOf(Operand g, const std::vector<Tensor>& tensors) {
  return DimOffsets(g, 0, kMaxRank - inner_, tensors, std::vector<Operand>(tensors.size(), U(0)));
}

void MvnEmitter::LoadScaleBias(Elem& e, Operand n, const std::vector<Tensor>& sb,
                               const std::vector<Operand>& base) {
  LoadScaleBiasAt(e, InnerOffsets(n, sb, base), 0);
}

void MvnEmitter::LoadScaleBiasAt(Elem& e, const std::vector<Operand>& off, size_t first) {
  size_t i = first;
  if (key_.has_scale) {
    e.s = T();
    Load(e.s, 1, off[i++]);
  }
  if (key_.has_bias) {
    e.bias = T();
    Load(e.bias, 2, off[i++]);
  }
}

}  // namespace dmls::gpu::mvn_emit
