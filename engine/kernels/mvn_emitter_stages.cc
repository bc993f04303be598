// MvnEmitter: the kernel of each MVN stage (kMvnPartial, kMvnApply,
// kMvnCombine, kMvnNormalise, kMvnCoop, kMvnClear, kMvnRow).
#include "engine/kernels/mvn_emitter.h"

#include <vector>

namespace dmls::gpu::mvn_emit {

absl::StatusOr<KernelInfo> MvnEmitter::Partial() {
  b_.DclConstantBuffer(kConstantBlockRegs);
  b_.DclBufferSrv(0, ReturnType::kUint);
  b_.DclTypedUav(1, ReturnType::kFloat);
  b_.DclGroupSharedRaw(0, threads_ * kMvnStatBytes);
  GroupCoordinates();
  std::vector<Operand> base = OuterOffsets({kIn});
  SetPairShift(base[0]);
  Operand ref = Reference(base[0]);
  MvnStat st = ChunkStat(base[0], ref);
  Operand first = T(), addr = T();
  b_.IEq(first, tid_, U(0));
  b_.And(first, first, valid_);
  b_.IfNz(first);
  // Global (group, chunk) index: first_group * chunks + w.
  b_.IMad(addr, CB0(3).x(), CB0(0).w(), w_);
  b_.IShl(addr, addr, U(2));
  b_.IAdd(addr, addr, UavBase(1));
  StoreScratchStat(addr, st);
  b_.EndIf();
  return Finish(b_, threads_);
}

MvnStat MvnEmitter::ChunkStat(Operand base_in, Operand ref) {
  std::vector<Operand> x(elems_), ok(elems_);
  if (vec4_) {
    const std::vector<Elem> el = LoadTexels({kIn}, {base_in});
    for (uint32_t j = 0; j < elems_; ++j) {
      x[j] = el[j].y;
      ok[j] = el[j].ok;
    }
    return ReducedStat(x, ok, ref, ChunkIsFull(), nullptr);
  } else if (span_) {
    // Most chunks of a long group lie wholly inside it.
    const SpanTexels sp = SpanElements(base_in, x);
    return ReducedStat(x, ok, ref, SpanInside(sp), &sp);
  } else {
    std::vector<Operand> off(elems_);
    for (uint32_t j = 0; j < elems_; ++j) {
      x[j] = T();
      ok[j] = T();
      Operand nj = T();
      ElementIndex(j, nj, ok[j]);
      off[j] = InnerOffsets(nj, {kIn}, {base_in})[0];
    }
    LoadInputs(x, off);
  }
  MvnStat st = stats_.Local(x, ok, ref);
  stats_.GroupReduce(st, tid_, threads_);
  return st;
}

Operand MvnEmitter::ChunkIsFull() {
  // Texels of chunk c_ are elements [c_ * chunk_, (c_ + 1) * chunk_) of the
  // group (kMvnVariantVec4: groups start on a texel); all inside when the
  // chunk's end is at most N. Uniform over the workgroup.
  Operand end = T(), full = T();
  b_.IMad(end, c_, U(chunk_), U(chunk_));
  b_.UGe(full, CB0(0).z(), end);  // MvnArgs: N
  return full;
}

MvnStat MvnEmitter::ReducedStat(const std::vector<Operand>& x, std::vector<Operand>& ok,
                                Operand ref, Operand inside, const SpanTexels* sp) {
  // Inside: no masks, and every thread counts elems_ elements, so the
  // reduction's weights are constants (GroupReduceFull). A branch on a
  // uniform value, barriers included.
  MvnStat st = stats_.NewStat();
  b_.IfNz(inside);
  stats_.LocalInto(st, x, {}, ref);
  stats_.GroupReduceFull(st, tid_, threads_, elems_);
  b_.Else();
  if (sp) SpanMasks(*sp, ok);
  stats_.LocalInto(st, x, ok, ref);
  stats_.GroupReduce(st, tid_, threads_);
  b_.EndIf();
  return st;
}

void MvnEmitter::StoreScratchStat(Operand addr, const MvnStat& q) {
  const Operand words[4] = {q.n, q.m, q.M, q.s};
  for (uint32_t k = 0; k < 4; ++k) {
    if (k > 0) b_.IAdd(addr, addr, U(1));
    b_.StoreUavTyped(Operand::Uav(1), addr, words[k]);
  }
}

void MvnEmitter::LoadScratchStat(const MvnStat& p, Operand addr) {
  const Operand words[4] = {p.n, p.m, p.M, p.s};
  for (uint32_t k = 0; k < 4; ++k) {
    if (k > 0) b_.IAdd(addr, addr, U(1));
    b_.LdUavTyped(words[k], addr, Operand::Uav(1));
  }
}

MvnStat MvnEmitter::CombinePartials() {
  // Thread t takes partials t, t+256, ... of group g_, then the workgroup
  // reduces them: kMvnApply and kMvnCombine combine in the same order, so
  // their group statistics are the same bits.
  MvnStat st = stats_.NewStat(), p = stats_.NewStat();
  Operand i = T(), stop = T(), addr = T();
  SetEmpty(st);
  b_.Mov(i, tid_);
  b_.Loop();
  b_.UGe(stop, i, CB0(0).w());
  b_.BreakcNz(stop);
  b_.IMad(addr, g_, CB0(0).w(), i);
  b_.IShl(addr, addr, U(2));
  b_.IAdd(addr, addr, UavBase(1));
  LoadScratchStat(p, addr);
  stats_.Combine(st, p);
  b_.IAdd(i, i, U(threads_));
  b_.EndLoop();
  stats_.GroupReduce(st, tid_, threads_, CB0(0).w());  // chunks: threads past it are empty
  return st;
}

Operand MvnEmitter::GroupStatWord(Operand g) {
  Operand addr = T();
  b_.IMad(addr, g, U(4), CB0(3).z());  // MvnArgs::partials_word: the group statistics
  b_.IAdd(addr, addr, UavBase(1));
  return addr;
}

MvnStat MvnEmitter::LoadGroupStat(Operand g) {
  MvnStat st = stats_.NewStat();
  Operand addr = GroupStatWord(g);
  LoadScratchStat(st, addr);
  return st;
}

absl::StatusOr<KernelInfo> MvnEmitter::Apply() {
  if (span_) return SpanNormalise();
  DeclareNormalise();
  GroupCoordinates();
  // 1. The group's statistic: its partials combined here (kMvnApply), or
  // as kMvnCombine left it in scratch (kMvnNormalise).
  MvnStat st = key_.stage == KernelStage::kMvnNormalise ? LoadGroupStat(g_) : CombinePartials();
  // 2. Normalise this thread's elements of the chunk.
  const std::vector<Tensor> tensors = NormaliseTensors();
  std::vector<Operand> base = OuterOffsets(tensors);
  SetPairShift(base[1]);  // the output's words
  Operand ref = Reference(base[0]);
  std::vector<Elem> el = LoadElements(tensors, base);
  Normalise(st, ref, el);
  return Finish(b_, threads_);
}

absl::StatusOr<KernelInfo> MvnEmitter::Combine() {
  b_.DclConstantBuffer(kConstantBlockRegs);
  b_.DclTypedUav(1, ReturnType::kFloat);
  b_.DclGroupSharedRaw(0, threads_ * kMvnStatBytes);
  // Workgroup W of the grid is group first_group + W.
  w_ = T();
  valid_ = T();
  g_ = T();
  b_.IMad(w_, Operand::ThreadGroupId().y(), CB0(0).y(), Operand::ThreadGroupId().x());
  b_.ULt(valid_, w_, CB0(0).x());
  b_.Movc(g_, valid_, w_, U(0));
  b_.IAdd(g_, g_, CB0(3).x());  // MvnArgs::first_group
  tid_ = Operand::ThreadIdInGroupFlattened();
  MvnStat st = CombinePartials();
  Operand first = T();
  b_.IEq(first, tid_, U(0));
  b_.And(first, first, valid_);
  b_.IfNz(first);
  Operand addr = GroupStatWord(g_);
  StoreScratchStat(addr, st);
  b_.EndIf();
  return Finish(b_, threads_);
}

absl::StatusOr<KernelInfo> MvnEmitter::Coop() {
  DeclareNormalise();
  b_.DclGroupSharedRaw(1, kMvnStatBytes * (2 + kMvnCoopMaxChunks));
  const Operand uav = Operand::Uav(1).x(), g1 = Operand::GroupShared(1);
  tid_ = Operand::ThreadIdInGroupFlattened();
  Operand leader = T(), tmp = T();
  b_.IEq(leader, tid_, U(0));
  // 1. Ticket -> task (group g_, chunk c_, normalisation or statistics).
  b_.IfNz(leader);
  b_.ImmAtomicIAdd(tmp, uav, UavBase(1), U(1));
  b_.StoreRaw(g1.x(), U(0), tmp);
  b_.EndIf();
  b_.SyncGroup();
  Operand t = T();
  b_.LdRaw(t, U(0), g1);
  const Operand chunks = CB0(0).w(), groups = CB0(0).x(), lag = CB0(3).w();
  Operand two_c = T(), lc = T(), total = T(), rest = T(), mid = T(), tp = T(), t3 = T();
  b_.IAdd(two_c, chunks, chunks);
  b_.IMul(lc, lag, chunks);
  b_.IMul(total, groups, two_c);  // tasks
  b_.INeg(rest, lag);
  b_.IAdd(rest, rest, groups);    // groups - L
  b_.IMul(mid, rest, two_c);      // tasks of the interleaved part
  b_.INeg(tp, lc);
  b_.IAdd(tp, tp, t);             // t - L*C
  b_.INeg(t3, mid);
  b_.IAdd(t3, t3, tp);            // t - L*C - mid
  Operand q1 = T(), r1 = T(), q2 = T(), r2 = T(), q3 = T(), r3 = T();
  b_.UDiv(q1, r1, t, chunks);
  b_.UDiv(q2, r2, tp, two_c);
  b_.UDiv(q3, r3, t3, chunks);
  Operand in1 = T(), in2 = T(), apply2 = T(), row2 = T(), chunk2 = T(), row3 = T();
  b_.ULt(in1, t, lc);
  b_.ULt(in2, tp, mid);
  b_.UGe(apply2, r2, chunks);
  b_.IAdd(row2, q2, lag);
  b_.Movc(row2, apply2, q2, row2);
  b_.INeg(chunk2, chunks);
  b_.IAdd(chunk2, chunk2, r2);
  b_.Movc(chunk2, apply2, chunk2, r2);
  b_.IAdd(row3, q3, rest);
  valid_ = T();
  g_ = T();
  c_ = T();
  Operand apply = T();
  b_.Movc(g_, in2, row2, row3);
  b_.Movc(g_, in1, q1, g_);
  b_.Movc(c_, in2, chunk2, r3);
  b_.Movc(c_, in1, r1, c_);
  b_.Movc(apply, in2, apply2, U(0xffffffffu));
  b_.Movc(apply, in1, U(0), apply);
  b_.ULt(valid_, t, total);
  b_.Movc(g_, valid_, g_, U(0));
  b_.Movc(c_, valid_, c_, U(0));
  const std::vector<Tensor> tensors = NormaliseTensors();
  std::vector<Operand> base = OuterOffsets(tensors);
  SetPairShift(base[1]);  // the output's words
  Operand ref = Reference(base[0]);
  Operand counter = T(), final_stat = T(), flag = T();
  b_.IAdd(counter, g_, U(1));
  b_.IAdd(counter, counter, UavBase(1));
  // The group statistics follow the partials: partials_word + 4 * G * C.
  b_.IMul(final_stat, groups, chunks);
  b_.IMad(final_stat, final_stat, U(4), CB0(3).z());
  b_.IMad(final_stat, g_, U(4), final_stat);
  b_.IAdd(final_stat, final_stat, UavBase(1));
  b_.IfNz(valid_);  // uniform, as is every branch below
  b_.IfZ(apply);
  {
    // 2. Statistics task.
    MvnStat st = ChunkStat(base[0], ref);
    Operand addr = T();
    b_.IMad(addr, g_, chunks, c_);
    b_.IMad(addr, addr, U(4), CB0(3).z());  // MvnArgs::partials_word
    b_.IAdd(addr, addr, UavBase(1));
    b_.IfNz(leader);
    PublishStat(addr, st);
    b_.EndIf();
    b_.SyncDevice();  // the partial is visible before the count says so
    b_.IfNz(leader);
    b_.ImmAtomicIAdd(tmp, uav, counter, U(1));
    b_.IAdd(tmp, tmp, U(1));
    b_.IEq(flag, tmp, chunks);  // the last one in
    b_.StoreRaw(g1.x(), U(4), flag);
    b_.EndIf();
    b_.SyncDevice();  // every partial counted is visible from here
    b_.LdRaw(flag, U(4), g1);
    b_.IfNz(flag);
    MvnStat p = stats_.NewStat();
    Operand mine = T(), paddr = T();
    SetEmpty(p);
    b_.ULt(mine, tid_, chunks);
    b_.IfNz(mine);
    b_.IMad(paddr, g_, chunks, tid_);
    b_.IMad(paddr, paddr, U(4), CB0(3).z());
    b_.IAdd(paddr, paddr, UavBase(1));
    ReadStat(p, paddr);
    b_.EndIf();
    b_.SyncGroup();  // g0's last statistic is read before it is reused
    stats_.GroupReduce(p, tid_, threads_, chunks);
    b_.IfNz(leader);
    PublishStat(final_stat, p);
    b_.EndIf();
    b_.SyncDevice();  // the statistic is visible before the count says so
    b_.IfNz(leader);
    b_.AtomicIAdd(uav, counter, chunks);  // 2C: the group's statistic is in
    b_.EndIf();
    b_.EndIf();
  }
  b_.Else();
  {
    // 3. Normalisation task: wait for the group's statistic.
    Operand polls = T(), stop = T();
    b_.IfNz(leader);
    b_.Mov(polls, U(0));
    b_.Loop();
    b_.ImmAtomicOr(tmp, uav, counter, U(0));
    b_.UGe(flag, tmp, two_c);
    b_.BreakcNz(flag);
    b_.UGe(stop, polls, CB0(3).y());  // MvnArgs::spin_limit
    b_.BreakcNz(stop);
    b_.IAdd(polls, polls, U(1));
    b_.EndLoop();
    b_.StoreRaw(g1.x(), U(4), flag);
    b_.EndIf();
    b_.SyncDevice();  // the statistic counted in is visible from here
    b_.LdRaw(flag, U(4), g1);
    MvnStat p = stats_.NewStat();
    b_.IfNz(flag);
    b_.IfNz(leader);
    MvnStat f = stats_.NewStat();
    ReadStat(f, final_stat);
    StoreSharedStat(U(16), f);
    b_.EndIf();
    b_.SyncGroup();
    LoadSharedStat(p, U(16));
    b_.Else();
    // Gave up waiting: every chunk's statistic from the input, as its own
    // task computed it, combined the same way.
    Operand own_chunk = c_, k = T(), more = T(), kaddr = T(), mine = T();
    c_ = k;
    b_.Mov(k, U(0));
    b_.Loop();
    b_.ULt(more, k, chunks);
    b_.BreakcZ(more);
    b_.SyncGroup();  // g0 is free again (the previous statistic was read)
    MvnStat q = ChunkStat(base[0], ref);
    b_.IfNz(leader);
    b_.IMad(kaddr, k, U(kMvnStatBytes), U(2 * kMvnStatBytes));
    StoreSharedStat(kaddr, q);
    b_.EndIf();
    b_.IAdd(k, k, U(1));
    b_.EndLoop();
    c_ = own_chunk;
    b_.SyncGroup();
    SetEmpty(p);
    b_.ULt(mine, tid_, chunks);
    b_.IfNz(mine);
    b_.IMad(kaddr, tid_, U(kMvnStatBytes), U(2 * kMvnStatBytes));
    LoadSharedStat(p, kaddr);
    b_.EndIf();
    b_.SyncGroup();  // g0's last statistic is read before it is reused
    stats_.GroupReduce(p, tid_, threads_, chunks);
    b_.EndIf();
    // 4. Reload the chunk (from the cache) and normalise it.
    std::vector<Elem> el = LoadElements(tensors, base);
    Normalise(p, ref, el);
  }
  b_.EndIf();
  b_.EndIf();
  return Finish(b_, threads_);
}

absl::StatusOr<KernelInfo> MvnEmitter::Clear() {
  b_.DclConstantBuffer(kConstantBlockRegs);
  b_.DclTypedUav(1, ReturnType::kUint);
  Operand i = T(), in = T();
  b_.IMad(i, Operand::ThreadGroupId().y(), CB0(0).y(), Operand::ThreadGroupId().x());
  b_.IMad(i, i, U(kMvnClearThreads), Operand::ThreadIdInGroupFlattened());
  b_.ULt(in, i, CB0(0).x());
  b_.IfNz(in);
  b_.IAdd(i, i, UavBase(1));
  b_.StoreUavTyped(Operand::Uav(1), i, U(0));
  b_.EndIf();
  return Finish(b_, kMvnClearThreads);
}

absl::StatusOr<KernelInfo> MvnEmitter::Row() {
  DeclareNormalise();
  GroupCoordinates();
  const std::vector<Tensor> tensors = NormaliseTensors();
  std::vector<Operand> base = OuterOffsets(tensors);
  SetPairShift(base[1]);  // the output's words
  Operand ref = Reference(base[0]);
  // Scale/Bias texels once the statistics are in, a texel at a time
  // (Normalise): they are not live through the reduction (the wide
  // row's registers).
  const bool defer = ScaleBiasAreTexels();  // implies kMvnVariantVec4
  std::vector<Elem> el = LoadElements(tensors, base, defer);
  std::vector<Operand> x, ok;
  for (const Elem& e : el) {
    x.push_back(e.y);
    ok.push_back(e.ok);
  }
  // A row that fills the workgroup's texels (N = 1,024 in a small row)
  // counts every lane.
  MvnStat st;
  if (vec4_) {
    st = ReducedStat(x, ok, ref, ChunkIsFull(), nullptr);
  } else {
    st = stats_.Local(x, ok, ref);
    stats_.GroupReduce(st, tid_, threads_);
  }
  Normalise(st, ref, el, defer ? &base : nullptr);
  return Finish(b_, threads_);
}
}  // namespace dmls::gpu::mvn_emit
