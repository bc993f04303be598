// MvnEmitter: emits one MVN/MVN1 kernel (mvn_kernel.h) for a KernelKey:
// the group coordinates, element and texel access of the input, output,
// Scale and Bias (mvn_emitter.cc), the normalisation with its
// overflow and cancellation branches (mvn_emitter_normalise.cc) and the
// kernels of each stage (mvn_emitter_stages.cc; an emitter builds one).
// Internal to the MVN kernels; the contract is MvnArgs in kernel_abi.h.
// Holds references to the builder and the key, which must outlive it;
// single-threaded like ShaderBuilder.
#ifndef DMLSERVE_ENGINE_KERNELS_MVN_EMITTER_H_
#define DMLSERVE_ENGINE_KERNELS_MVN_EMITTER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/kernels/activation_emit.h"
#include "engine/kernels/kernel_abi.h"
#include "engine/kernels/kernel_key.h"
#include "engine/kernels/kernel_info.h"
#include "engine/kernels/mvn_stats_emit.h"
#include "engine/kernels/mvn_texel_emit.h"
#include "engine/dxbc/operand.h"
#include "engine/dxbc/shader_builder.h"

namespace dmls::gpu::mvn_emit {

inline constexpr uint32_t kRegSizes = 4;
// Stride arrays of MvnArgs by tensor: input, output, scale, bias.
enum Tensor { kIn = 0, kOut = 1, kScale = 2, kBias = 3 };
inline constexpr uint32_t kRegStrides[4] = {6, 8, 10, 12};

// Word k of the constant-buffer registers starting at `reg`.
inline Operand CbWord(uint32_t reg, uint32_t k) {
  static constexpr const char* kLetters[] = {"x", "y", "z", "w"};
  return CB0(reg + k / 4).Comps(kLetters[k % 4]);
}

// Where a slot's tensor starts in its view (ViewBases, kernel_abi.h), in
// texels (words, or 16-byte texels for t0 and u0 with kMvnVariantVec4 and
// for t1 and t2 with kMvnVariantVec4ScaleBias).
inline Operand SrvBase(uint32_t t) { return CbWord(kRegViewBases, ViewBaseWordSrv(t)); }
inline Operand UavBase(uint32_t u) { return CbWord(kRegViewBases, ViewBaseWordUav(u)); }

class MvnEmitter {
 public:
  MvnEmitter(ShaderBuilder& b, const KernelKey& key)
      : b_(b),
        key_(key),
        inner_(key.variant & kMvnVariantRankMask),
        threads_(ThreadsOf(key)),
        elems_(ElementsOf(key)),
        chunk_(threads_ * elems_),
        vec4_((key.variant & kMvnVariantVec4) != 0),
        span_((key.stage == KernelStage::kMvnPartial || key.stage == KernelStage::kMvnNormalise) &&
              (key.variant & kMvnVariantTexelSpan) != 0),
        stats_(b, CB0(2).y(), !key.normalize_variance),  // MvnArgs::pad[0] = 0
        texel_(b, key.data_type),
        lanes_(vec4_ || (span_ && key.stage == KernelStage::kMvnNormalise) ? texel_.lanes() : 1) {}

  // kMvnRow's row bits (kMvnVariantSmallRow, kMvnVariantWideRow or both,
  // kMvnVariantMediumRow); 0 for the other stages, where the same bits
  // mean other things (kMvnVariantTexelSpan, kMvnVariantLongSpan).
  static uint8_t RowBits(const KernelKey& key) {
    return key.stage == KernelStage::kMvnRow ? key.variant & kMvnVariantMediumRow : 0;
  }
  static bool IsWideRow(const KernelKey& key) { return RowBits(key) == kMvnVariantWideRow; }

  // Threads of the workgroup and elements a thread of `key`'s kernel. A
  // FLOAT16 kernel that loads whole texels (kMvnVariantVec4, a texel span),
  // and every FLOAT16 kMvnPartial, takes half the threads of its chunk with
  // twice the elements each (HalvesThreads), so that a thread holds as many
  // 16-byte texels as a FLOAT32 one: the chunk, and so the plan, is the
  // same. On the H200 that took FLOAT16 65,536 x 1,024 from 100.4 to 78.7
  // us, 16,384 x 8,192 from 215 to 165, 512 x 262,143 from 249.5 to about
  // 227; FLOAT32 lost with fewer threads, and FLOAT16 word loads lost in
  // every kernel but the statistics (docs/PERFORMANCE.md, session 34).
  static uint32_t ThreadsOf(const KernelKey& key) {
    const uint32_t t = ChunkThreadsOf(key);
    return HalvesThreads(key) ? t / 2 : t;
  }
  static uint32_t ElementsOf(const KernelKey& key) {
    const uint32_t e = ChunkElementsOf(key);
    return HalvesThreads(key) ? e * 2 : e;
  }
  static bool HalvesThreads(const KernelKey& key) {
    if (key.data_type != DataType::kFloat16) return false;
    switch (key.stage) {
      case KernelStage::kMvnPartial:
        return true;
      case KernelStage::kMvnRow:
      case KernelStage::kMvnApply:
        return (key.variant & kMvnVariantVec4) != 0;
      case KernelStage::kMvnNormalise:
        return (key.variant & (kMvnVariantVec4 | kMvnVariantTexelSpan)) != 0;
      default:
        return false;
    }
  }

  // The chunk of `key`'s kernel as threads x elements (kernel_abi.h's
  // constants), before HalvesThreads.
  static uint32_t ChunkThreadsOf(const KernelKey& key) {
    if (key.stage == KernelStage::kMvnClear) return kMvnClearThreads;
    switch (RowBits(key)) {
      case kMvnVariantSmallRow:
        return kMvnSmallRowThreads;
      case kMvnVariantWideRow:
        return kMvnWideRowThreads;
      case kMvnVariantMediumRow:
        return kMvnMediumRowThreads;
      default:
        return kMvnThreads;
    }
  }
  static uint32_t ChunkElementsOf(const KernelKey& key) {
    if (IsWideRow(key)) return kMvnWideRowElementsPerThread;
    const uint8_t long_span = kMvnVariantTexelSpan | kMvnVariantLongSpan;
    if (key.stage == KernelStage::kMvnPartial && (key.variant & long_span) == long_span) {
      return kMvnLongSpanElementsPerThread;
    }
    return kMvnElementsPerThread;
  }

  // kMvnPartial: the statistics of each (group, chunk) into scratch.
  absl::StatusOr<KernelInfo> Partial();

  // kMvnApply: combines the group's partials (Chan's formula) and
  // normalises the chunk; kMvnNormalise: the same with the group's
  // statistic read from scratch (kMvnCombine's).
  absl::StatusOr<KernelInfo> Apply();

  // kMvnCombine: one workgroup per group combines the group's partials
  // (as kMvnApply does) and stores the group's statistic at scratch word
  // partials_word + 4 * group (kernel_abi.h). At 512 x 262,143 each of
  // the 64 normalisation workgroups of a group repeated that combine (a
  // loop, then a reduction with barriers) before touching its elements.
  absl::StatusOr<KernelInfo> Combine();

  // The cooperative schedule in one dispatch (protocol: kernel_abi.h,
  // kMvnCoop). Tickets map to tasks in this order, with L = MvnArgs::lag
  // rows: the statistics tasks of groups 0..L-1; then for each group r >= L
  // those of group r followed by the normalisation tasks of group r - L;
  // then the normalisation tasks of the last L groups. A statistics task
  // loads its chunk, publishes its partial and counts itself in; the last
  // one in combines the group's partials and publishes the group's
  // statistic. A normalisation task waits for that (normally long done),
  // then reloads its chunk, which L groups of traffic have not yet pushed
  // out of the cache, and normalises it. Group-shared g1: word 0 the
  // ticket, word 1 a flag, bytes 16-31 the group's statistic, then one
  // statistic per chunk for a task that stops waiting.
  absl::StatusOr<KernelInfo> Coop();

  // kMvnNormalise with kMvnVariantTexelSpan (mvn_emitter_span.cc): groups
  // packed one after another in the input and the output alike, N >= a
  // texel's elements, the group statistics in scratch for every group (the
  // two-pass schedule); Scale and Bias, if any, by element in their own
  // layout. Texel t of the tensor belongs
  // to the group of its lane 0: a thread loads and stores whole texels of
  // its chunk; the one texel where a group ends and the next begins is
  // normalised with both groups' statistics, lane by lane, by the thread
  // of the earlier group that owns it. Every texel is stored once, with a
  // plain store.
  absl::StatusOr<KernelInfo> SpanNormalise();

  // Zeroes scratch words [0, c0.x) (kMvnCoop's counters).
  absl::StatusOr<KernelInfo> Clear();

  // The whole group (N <= kMvnChunk) in one workgroup: its elements are
  // loaded once, reduced, then normalised from registers.
  absl::StatusOr<KernelInfo> Row();

 private:
  Operand T() { return b_.NewTemp().x(); }

  // Group index W of the 2-D grid, clamped into range (kMvnApply and
  // kMvnNormalise count it from the grid's end), its reduction group g and
  // chunk c; `valid` tells whether W was in range.
  void GroupCoordinates();

  // base[t] = offset of reduction group g's first element in tensor t.
  std::vector<Operand> OuterOffsets(const std::vector<Tensor>& tensors);

  // OuterOffsets of group `g` instead of g_.
  std::vector<Operand> OuterOffsetsOf(Operand g, const std::vector<Tensor>& tensors);

  // offs[t] = base[t] + offset of in-group element n (inner dimensions).
  std::vector<Operand> InnerOffsets(Operand n, const std::vector<Tensor>& tensors,
                                    const std::vector<Operand>& base);

  // offs[t] = start[t] + offset in tensor t of `index` decomposed over
  // dimensions [first, end) (the last one varying fastest).
  std::vector<Operand> DimOffsets(Operand index, uint32_t first, uint32_t end,
                                  const std::vector<Tensor>& tensors,
                                  const std::vector<Operand>& start);

  // FLOAT16 addressing: `word` = the view word holding the element at
  // element offset `off` of a tensor that starts `view_base` words into
  // its view, and `shift` = that element's bit position in it (0 or 16).
  void HalfWord(Operand word, Operand off, Operand view_base);
  void HalfShift(Operand shift, Operand off);

  // d = the binary16 at bit `shift` of the word in d, as float32.
  void UnpackHalf(Operand d, Operand shift);

  // dst = element at element offset `off` of SRV t#`res` as float32.
  void Load(Operand dst, uint32_t res, Operand off);

  // FLOAT16 elements j (even) and j+1 of this thread: one word load when
  // their offsets are the two halves of one word (ElementIndex pairs them
  // so wherever the group's start allows), else two.
  void LoadPair(Operand d0, Operand d1, uint32_t res, Operand off0, Operand off1);

  // The same pair as two word loads without a branch (the second one
  // usually reads the word the first did, from the cache), so that every
  // load of the thread is in flight at once. kMvnPartial FLOAT16 takes it:
  // on the H200 its statistics pass at 512 x 262,143 ran in 240 us against
  // 304 with LoadPair's branch per pair. kMvnApply keeps LoadPair (311 us
  // against 341 with this: its loads share the issue slots with the
  // normalisation and the stores; docs/perf/h200-mvn16-2026-11-28).
  void LoadBothWords(Operand d0, Operand d1, uint32_t res, Operand off0, Operand off1);

  // kMvnVariantVec4: texel k of this thread in chunk c_ (texel t of the
  // group, kernel_abi.h), clamped to 0 past the group's last texel (`ok` 0
  // there).
  void TexelIndex(uint32_t k, Operand t, Operand ok);

  // Stores float32 `v` as the output element at element offset `off`.
  void Store(Operand v, Operand off);

  // FLOAT16 elements j (even) and j+1 of this thread: when both are in range
  // and their output offsets are the two halves of one word, one plain
  // store of the packed word; otherwise each in-range element through
  // Store's atomics.
  void StorePair(Operand v0, Operand off0, Operand ok0, Operand v1, Operand off1, Operand ok1);

  // The statistic of group g_ combined from its chunks' partials in
  // scratch (u1), held by every thread.
  MvnStat CombinePartials();

  // The scratch word (in u1) of group g's statistic (kMvnCombine).
  Operand GroupStatWord(Operand g);

  // Group g's statistic as kMvnCombine stored it (every thread loads it).
  MvnStat LoadGroupStat(Operand g);

  // The group's first element (0 when not finite). Statistics are computed
  // on x - ref: for data with a large common offset (1e4 + U(0, 0.1)) the
  // mean itself is not representable closely enough in float32, but x - ref
  // is exact and its mean is (OPERATORS.md §7.6). A finite ref keeps the
  // ±inf members of a NormalizeVariance FALSE group meaningful (§4.3.1).
  Operand Reference(Operand base_in);

  // FLOAT16 without texels: the chunks of the group whose first element
  // is at element offset `base` (of the tensor whose words a pair should
  // share: the output where the kernel stores, the input in kMvnPartial)
  // start one element early when that element is the high half of a word
  // (pair_shift_ = 1), so that each pair of a thread (ElementIndex) is one
  // word: one load (LoadPair) and one plain store (StorePair) instead of
  // two loads and four atomics (groups of odd N, 512 x 262,143: every
  // other group). Only where the chunks have room for the extra element
  // (chunks * chunk > N: always for odd N; 0 otherwise, which is correct,
  // only slower).
  void SetPairShift(Operand base);

  // Element index of the j-th element of this thread; `ok` when in [0, N).
  // FLOAT16: elements 2i and 2i+1 of the chunk (less pair_shift_) go to the
  // same thread (j even and odd), so that a packed word is loaded once and
  // written by one thread with a plain store (StorePair) instead of two
  // atomics per element.
  void ElementIndex(uint32_t j, Operand n_clamped, Operand ok);

  // kMvnVariantTexelSpan: this thread's texels of chunk c_ of the group
  // whose first element is at element offset `base_in`.
  struct SpanTexels {
    Operand base_in;
    Operand end;  // past the group's last element
    Operand c0;   // the chunk's first texel
    std::vector<Operand> t;  // this thread's texels
  };
  // Loads the texels (all loads first) and unpacks x[j]; lanes outside the
  // group hold neighbours' values or repeats, which SpanMasks masks.
  SpanTexels SpanElements(Operand base_in, std::vector<Operand>& x);
  // Whether the whole chunk lies inside the group (a uniform value): then
  // every lane counts and no mask is needed.
  Operand SpanInside(const SpanTexels& sp);
  // ok[j]: whether x[j] is inside the group.
  void SpanMasks(const SpanTexels& sp, std::vector<Operand>& ok);

  // kMvnVariantVec4: whether chunk c_ lies wholly inside the group (a
  // uniform value).
  Operand ChunkIsFull();

  // The workgroup's statistic of x[j] (every thread holds it): where
  // `inside` (uniform) with no masks and the reduction's constant weights,
  // elsewhere with `ok` (filled by SpanMasks first when `sp` is given).
  MvnStat ReducedStat(const std::vector<Operand>& x, std::vector<Operand>& ok, Operand ref,
                      Operand inside, const SpanTexels* sp);

  // The statistic of chunk c_ of the group whose input starts at `base_in`
  // (loaded, reduced over the workgroup: every thread holds it).
  MvnStat ChunkStat(Operand base_in, Operand ref);

  // Declarations shared by kMvnApply, kMvnRow and kMvnCoop.
  void DeclareNormalise();

  struct Elem {
    Operand ok, y, s, bias, out_off;
    Operand x;  // exact-mean mode: the input, kept once y is its deviation
    Operand texel;  // kMvnVariantVec4: the index of the element's texel
  };

  // Exact-mean mode: the group's mean of x/s as c_hi + c_lo, and 1/s.
  struct ExactMean {
    Operand inv, c_hi, c_lo;
  };

  // Loads this thread's elements of the chunk (indices clamped into the
  // group) and their Scale/Bias: all loads first, so that every load of a
  // thread is in flight at once. `ok` excludes out-of-range work groups.
  std::vector<Elem> LoadElements(const std::vector<Tensor>& tensors,
                                 const std::vector<Operand>& base,
                                 bool defer_scale_bias = false);

  // x[j] = the input element at element offset off[j] (t0), FLOAT16 by
  // pairs (LoadBothWords in kMvnPartial, LoadPair elsewhere).
  void LoadInputs(const std::vector<Operand>& x, const std::vector<Operand>& off);

  // LoadElements of kMvnVariantVec4 (`tensors`: kIn alone, or
  // NormaliseTensors()): this thread's texels of the input, all loads
  // first (el[j]: element j % lanes_ of texel j / lanes_, whose `ok`,
  // texel index and out_off, the output texel's address in u0, its
  // elements share: N is whole texels), then Scale/Bias: the texels beside
  // the input's with kMvnVariantVec4ScaleBias (ScaleBiasTexels; none with
  // `defer_scale_bias`, for the caller to load later), else per element
  // through InnerOffsets.
  std::vector<Elem> LoadTexels(const std::vector<Tensor>& tensors,
                               const std::vector<Operand>& base, bool defer_scale_bias = false);

  // Whether Scale/Bias load as texels (kMvnVariantVec4ScaleBias; the key
  // has one of them).
  bool ScaleBiasAreTexels() const { return (key_.variant & kMvnVariantVec4ScaleBias) != 0; }

  // el[j].s and .bias from the Scale/Bias texels beside input texels
  // [first, first + count) of this thread (all of them by default;
  // kMvnVariantVec4ScaleBias): all loads, then the unpacking. `base`:
  // OuterOffsets(NormaliseTensors()).
  void ScaleBiasTexels(std::vector<Elem>& el, const std::vector<Operand>& base,
                       uint32_t first = 0, uint32_t count = ~0u);

  // kMvnVariantVec4: this thread's results as whole output texels (N is
  // whole texels, so every texel in range is this thread's alone).
  void StoreTexels(const std::vector<Elem>& el);

  // The output texel k of this thread.
  void StoreTexel(const std::vector<Elem>& el, uint32_t k);

  // out = act(((x - ref)/s - m) * rstd * Scale + Bias) for the group
  // statistic `st`; rstd = 1/sqrt(M/n + eps/s^2) (s/sqrt(eps) where eps/s^2
  // overflows), or s when NormalizeVariance is FALSE (undoing the scale).
  // `sb_base` (the row kernels with kMvnVariantVec4ScaleBias: their
  // OuterOffsets): Scale/Bias are loaded here a texel at a time (four in
  // the FLOAT16 wide row), just before that texel's elements, and each
  // output texel is stored once computed, so that few are live at once
  // (the wide row's 32 a thread). On the H100 (run 23) one at a time was
  // the fastest or within 1% elsewhere; four took the FLOAT16 wide row at
  // 4,096 x 32,768 from 282 to 268 us (two: 300).
  void Normalise(const MvnStat& st, Operand ref, std::vector<Elem>& el,
                 const std::vector<Operand>* sb_base = nullptr);

  // Normalise without the stores (except those of the `sb_base` texels,
  // interleaved): e.y holds each result, e.ok is and-ed with valid_.
  void NormaliseValues(const MvnStat& st, Operand ref, std::vector<Elem>& el,
                       const std::vector<Operand>* sb_base);

  // e.y = act(d * rstd * Scale + Bias) for d = e.y (+ its rounding error,
  // DeviationLow, in exact-mean mode). A branch, taken by the elements that need it only, where
  //  * Bias cancelled more than a bit of the rest (|p| > 2|y|): the
  //    rounding errors of the product (FLOAT32 with Scale: x - mean =
  //    3e7, Scale 1.1f, Bias -float(3.3e7) gave 0 for 0.715) and of d
  //    (exact-mean mode) are then more than an ulp of y, so the sum is
  //    redone with the product exact and d's low part (ExactMad);
  //  * FLOAT32: the product or sum overflows: AffineBeyondRange.
  // FLOAT16 cannot overflow here (d*rstd stays below 2^92, Scale and Bias
  // below 2^16), and the product of two binary16 values is exact.
  // Temps: those of this element's product, branch and activation are
  // reused by the next element (ShaderBuilder::RewindTemps): only pre and
  // what the activation reads live on.
  void Affine(MathEmitter& math, Elem& e, Operand rstd, const ActivationParams& params,
              const ExactMean* exact);

  // The Scale and Bias present, and e.s / e.bias loaded for in-group
  // element n of the group whose OuterOffsetsOf(g, sb) is `base`.
  std::vector<Tensor> ScaleBiasTensors() const;
  void LoadScaleBias(Elem& e, Operand n, const std::vector<Tensor>& sb,
                     const std::vector<Operand>& base);
  // The same from offsets already computed: off[first] is the Scale's (if
  // any), then the Bias's.
  void LoadScaleBiasAt(Elem& e, const std::vector<Operand>& off, size_t first);

  // The tensors the normalising kernels address: input, output, and the
  // Scale and Bias present (OuterOffsets, LoadElements).
  std::vector<Tensor> NormaliseTensors() const;

  // An empty statistic: Combine's identity (its scale is never used).
  void SetEmpty(const MvnStat& p);

  // The statistic at byte `byte_addr` of group-shared g1 into `p`, and back.
  void LoadSharedStat(const MvnStat& p, Operand byte_addr);
  void StoreSharedStat(Operand byte_addr, const MvnStat& q);

  // The statistic's four words to / from typed scratch words addr..addr+3
  // of u1 (R32_FLOAT; `addr` is advanced to the last).
  void StoreScratchStat(Operand addr, const MvnStat& q);
  void LoadScratchStat(const MvnStat& p, Operand addr);

  // Scratch word `first` + k of u1 for k < 4: atomically exchanged with
  // (store) or read into (load) the statistic's words.
  void PublishStat(Operand first, const MvnStat& q);
  void ReadStat(const MvnStat& p, Operand first);

  ShaderBuilder& b_;
  const KernelKey& key_;
  uint32_t inner_;
  uint32_t threads_;
  uint32_t elems_;  // elements per thread
  uint32_t chunk_;
  bool vec4_;  // kMvnVariantVec4
  bool span_;  // kMvnVariantTexelSpan (kMvnPartial, kMvnNormalise)
  MvnStatsEmitter stats_;
  MvnTexelEmitter texel_;
  uint32_t lanes_;  // elements per texel (1 without kMvnVariantVec4 or a span normalisation)
  Operand w_, valid_, g_, c_, tid_;
  Operand pair_shift_;  // SetPairShift: 0 or 1
};

}  // namespace dmls::gpu::mvn_emit

#endif  // DMLSERVE_ENGINE_KERNELS_MVN_EMITTER_H_
