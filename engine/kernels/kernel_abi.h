// The contract between the DXBC kernel generators (engine/dxbc, owner of this
// file) and the Direct3D 12 runtime (engine/d3d12): how a kernel is keyed,
// how its resources are bound and what its constant block holds. Plain data;
// thread-compatible.
//
// Binding model (one root signature shared by every kernel):
//   root parameter 0: root CBV b0  -> KernelArgs (256-byte aligned block)
//   root parameter 1: descriptor table, SRV t0..t2 (input, scale, bias);
//                     unused slots get null descriptors of the same format
//   root parameter 2: descriptor table, UAV u0..u1 (output, scratch)
// Views are typed buffer views whose DXGI formats come from each View of the
// DispatchPlan (plan.h); each view holds at most 2^27 texels (vkd3d 1.2
// limit, DESIGN.md §3), and no dispatch dimension exceeds 65535 groups: the
// planner (planner.h) already splits large work into several dispatches,
// each with its own views and constant block, so the runtime binds exactly
// what a Dispatch names. A view may begin before its tensor (a whole-arena
// view): the constant block's ViewBases tail (below) says where in the view
// each slot's tensor starts.
//   Element-wise kernels: t0 = input, u0 = output.
//   MVN partial: t0 = input, u1 = scratch (R32_FLOAT, written).
//   MVN apply:   t0 = input, t1 = scale, t2 = bias (when the key has them),
//                u0 = output, u1 = scratch (R32_FLOAT, read with typed UAV
//                loads, which vkd3d 1.2 supports for R32 formats only).
// Kernels read only texels of their own tensor's range (from its view base:
// a view over a whole arena holds other requests' tensors too) and write
// only their own elements (for sub-32-bit strided outputs with atomic
// and/or on the containing word).
#ifndef DMLSERVE_ENGINE_KERNELS_KERNEL_ABI_H_
#define DMLSERVE_ENGINE_KERNELS_KERNEL_ABI_H_

#include <cstdint>

namespace dmls::gpu {

inline constexpr uint32_t kMaxViewTexels = 1u << 27;
inline constexpr uint32_t kMaxDispatchGroups = 65535;
inline constexpr uint32_t kMaxRank = 8;

// How a kernel addresses its tensors.
enum class LayoutClass : uint8_t {
  kContiguous = 0,  // packed input and output, same shape: vectorised path
  kStrided = 1,     // general: strides, zero-stride broadcast, padding
};

// DXGI_FORMAT values used for views (numerically equal to dxgiformat.h).
enum class ViewFormat : uint32_t {
  kUnknown = 0,
  kR32G32B32A32Float = 2,
  kR32G32B32A32Uint = 3,
  kR32Float = 41,
  kR32Uint = 42,
  kR32Sint = 43,
};

// Bytes per texel of a view format (0 for kUnknown).
inline constexpr uint32_t TexelBytes(ViewFormat format) {
  switch (format) {
    case ViewFormat::kR32G32B32A32Float:
    case ViewFormat::kR32G32B32A32Uint:
      return 16;
    case ViewFormat::kR32Float:
    case ViewFormat::kR32Uint:
    case ViewFormat::kR32Sint:
      return 4;
    case ViewFormat::kUnknown:
      return 0;
  }
  return 0;
}

// ---- Constant blocks (cb0, bound as a root CBV; each <= 256 bytes) ----
// Registers are vec4s: cN.x is word 4N. All views are typed *UINT* views
// (R32G32B32A32_UINT or R32_UINT): kernels reinterpret the bits, so IDENTITY
// and integer data pass through bit-exactly (no float canonicalisation).

// Elementwise kernels (KernelStage::kElementwise).
//   Contiguous layout: thread work item = one texel (4 words for variant
//   kVariantVec4, 1 word for kVariantWord) of the packed tensor; the words
//   hold 1, 2 or 4 elements by type. A partial last word is computed whole:
//   its extra lanes are padding within TotalTensorSizeInBytes, which an
//   output may have overwritten (OPERATORS.md §2.3).
//   Strided layout (variant = rank 1..8 after dimension coalescing): one
//   logical element per thread; offsets from sizes/strides below.
struct ElementwiseArgs {
  uint32_t count = 0;     // c0.x: work items in this dispatch
  uint32_t groups_x = 0;  // c0.y: groups in x (2-D grids are flattened)
  uint32_t in_bias = 0;   // c0.z: strided: element offset of the view start
  uint32_t out_bias = 0;  // c0.w
  // c1, c2: float parameters, see kArg* below.
  float f[8] = {0, 0, 1, 0, 0, 0, 0, 0};
  // c3: integer parameters (converted with trunc/saturate/NaN->0).
  int32_t i[4] = {0, 0, 0, 0};
  uint32_t sizes[kMaxRank] = {};        // c4, c5 (innermost dimension last)
  uint32_t in_strides[kMaxRank] = {};   // c6, c7 (elements)
  uint32_t out_strides[kMaxRank] = {};  // c8, c9
};
static_assert(sizeof(ElementwiseArgs) == 160, "cb layout");

// Float parameter slots of ElementwiseArgs::f.
inline constexpr int kArgMin = 0;      // THRESHOLD/CLIP Min
inline constexpr int kArgMax = 1;      // CLIP Max
inline constexpr int kArgScale = 2;    // ScaleBias scale (1 when absent)
inline constexpr int kArgBias = 3;     // ScaleBias bias (0 when absent)
inline constexpr int kArgP0 = 4;       // activation param 1 (Alpha, Steepness, Bias...)
inline constexpr int kArgP1 = 5;       // activation param 2 (Beta, Gamma, Threshold)
inline constexpr int kArgD0 = 6;       // derived: 1/Alpha (CELU), 1/Steepness (SOFTPLUS)
inline constexpr int kArgD1 = 7;       // derived: -Threshold (SHRINK)

// Integer slots of ElementwiseArgs::i.
inline constexpr int kArgIntMin = 0;   // THRESHOLD/CLIP Min; SHRINK Bias
inline constexpr int kArgIntMax = 1;   // CLIP Max; SHRINK Threshold
inline constexpr int kArgIntAux = 2;   // SHRINK -Threshold
inline constexpr int kArgIntZero = 3;  // always 0: an optimisation barrier
// CLIP on INT64/UINT64 (no ScaleBias): Min as (lo, hi) words in i[0..1]
// (c3.xy) and Max as (lo, hi) words in f[4..5] (c2.xy), bit patterns. Its
// strided kernels take strides and biases in 32-bit words, and an odd
// element count's last element is a rank-1 strided dispatch.

// Contiguous-layout variants.
inline constexpr uint8_t kVariantVec4 = 0;  // R32G32B32A32_UINT views
inline constexpr uint8_t kVariantWord = 1;  // R32_UINT views (the < 4-word tail)

// MVN/MVN1 kernels (kMvnPartial, kMvnApply, kMvnRow). A reduction group is one index
// of the "outer" (not reduced) dimensions; its N elements are the indices of
// the "inner" (reduced) dimensions. dims [0, 8 - inner_rank) are outer
// (unused ones have size 1), dims [8 - inner_rank, 8) are inner, with
// inner_rank = KernelKey::variant & kMvnVariantRankMask (1..8). Views are
// R32_UINT (whole tensors; t0 and u0 R32G32B32A32_UINT with kMvnVariantVec4,
// t1 and t2 too with kMvnVariantVec4ScaleBias);
// scratch holds four R32_FLOAT texels per (group, chunk): (count, mean, M2,
// scale), the statistics of (x - ref) / scale with scale a power of two
// (mvn_stats_emit.h). A dispatch covers groups [first_group, first_group +
// group_count); scratch is indexed by the global (group, chunk), so that the
// dispatches of a blocked plan never share scratch.
// kMvnCombine (one workgroup per group of the dispatch) combines group g's
// partials and stores its statistic, the same four words, at scratch word
// partials_word + 4 * g (after every group's partials); kMvnNormalise (the
// grid and work of kMvnApply) reads it there instead of combining.
// kMvnCoop (one dispatch over every group, first_group 0; two workgroups
// per (group, chunk): a statistics task and a normalisation task): scratch
// is an R32_UINT view accessed by atomics only (never through a cache that
// another workgroup's writes bypass): word 0 is a ticket counter, word 1 + g
// group g's count, the partials start at word partials_word (four per
// (group, chunk) as above), and the group statistics follow them (four per
// group). A workgroup takes its task from the ticket it draws, so tasks
// start in this order: the statistics tasks of the first `lag` groups,
// then for each later group g its statistics tasks followed by the
// normalisation tasks of group g - lag, then the last `lag` groups'
// normalisation tasks. A statistics task publishes its chunk's partial and
// counts itself in; the last one in combines the group's partials,
// publishes the group's statistic and adds `chunks` to the count. A
// normalisation task polls the count (at most spin_limit polls) until
// that is done, normally long before, then reloads its chunk, read `lag`
// groups earlier and so normally still in the GPU's cache, and normalises
// it: DRAM sees the input once when `lag` groups fit the cache. A task
// that gives up waiting computes its group's statistics itself, from the
// input (the same partials, combined the same way), so a device that runs
// few workgroups at once is slow, never hung. The counters must be zero
// first: kMvnClear zeroes scratch words [0, group_count) (c0.x: words;
// c0.y: groups in x; workgroups of kMvnClearThreads).
struct MvnArgs {
  uint32_t group_count = 0;  // c0.x: reduction groups of this dispatch
  uint32_t groups_x = 0;     // c0.y: dispatch groups in x
  uint32_t n = 0;            // c0.z: elements per reduction group
  uint32_t chunks = 0;       // c0.w: chunks per reduction group
  float epsilon = 0;         // c1.x
  float fused_p0 = 0;        // c1.y: fused activation param 1
  float fused_p1 = 0;        // c1.z: fused activation param 2
  float fused_d0 = 0;        // c1.w: derived (as ElementwiseArgs kArgD0)
  float fused_d1 = 0;        // c2.x: derived (as ElementwiseArgs kArgD1)
  uint32_t pad[3] = {};      // c2.yzw; pad[0] must stay 0 (optimisation barrier)
  uint32_t first_group = 0;  // c3.x: first reduction group of this dispatch
  uint32_t spin_limit = 0;     // c3.y: kMvnCoop: polls of a group's counter before
                               // the workgroup computes the group's statistics alone
  uint32_t partials_word = 0;  // c3.z: kMvnCoop: where partials start in scratch;
                               // kMvnCombine/kMvnNormalise: where the group
                               // statistics start
  uint32_t lag = 0;            // c3.w: kMvnCoop: groups between a group's statistics
                               // and its normalisation (1..group_count)
  uint32_t sizes[kMaxRank] = {};          // c4, c5
  uint32_t in_strides[kMaxRank] = {};     // c6, c7
  uint32_t out_strides[kMaxRank] = {};    // c8, c9
  uint32_t scale_strides[kMaxRank] = {};  // c10, c11
  uint32_t bias_strides[kMaxRank] = {};   // c12, c13
};
static_assert(sizeof(MvnArgs) == 224, "cb layout");

// ---- View bases (the fixed tail of every constant block) ----
// Views may cover a whole buffer arena shared by many requests (created
// once, one per format); a request's tensor then starts `base` texels into
// the view. Every kernel adds its slot's base to every typed load, store,
// atomic and typed UAV load address on that slot, after the clamping it
// does within [0, count). All bases 0 = the view starts at the tensor.
// c14.xyzw = base of t0, t1, t2, u0; c15.x = base of u1; in texels of that
// slot's view format.
struct ViewBases {
  uint32_t t[3] = {};
  uint32_t u0 = 0;
  uint32_t u1 = 0;
  uint32_t pad[3] = {};
};
inline constexpr uint32_t kViewBasesOffset = 224;  // bytes
// Kernels declare the whole 256-byte block (cb0[16]), whatever their args
// struct, so that the bases are inside the declared size.
inline constexpr uint32_t kConstantBlockRegs = 16;
static_assert(kViewBasesOffset + sizeof(ViewBases) == kConstantBlockRegs * 16, "cb layout");
static_assert(sizeof(ElementwiseArgs) <= kViewBasesOffset && sizeof(MvnArgs) <= kViewBasesOffset,
              "args structs end before the view bases");
// Word k of ViewBases is register c(kRegViewBases + k / 4), component k % 4.
inline constexpr uint32_t kRegViewBases = kViewBasesOffset / 16;
inline constexpr uint32_t ViewBaseWordSrv(uint32_t t) { return t; }      // t0..t2
inline constexpr uint32_t ViewBaseWordUav(uint32_t u) { return 3 + u; }  // u0..u1

// Threads per group and work per thread of the generated kernels. The
// MVN ones are each chunk's shape; FLOAT16 MVN kernels that load whole
// texels (and its statistics kernels) run half the threads with twice the
// elements each, over the same chunk (MvnEmitter::HalvesThreads,
// MvnKernelThreads).
inline constexpr uint32_t kElementwiseThreads = 128;
inline constexpr uint32_t kTexelsPerThread = 4;    // contiguous path
inline constexpr uint32_t kMvnThreads = 256;
inline constexpr uint32_t kMvnElementsPerThread = 16;
inline constexpr uint32_t kMvnChunk = kMvnThreads * kMvnElementsPerThread;
// kMvnRow for short groups (N <= kMvnSmallRowChunk): workgroups of
// kMvnSmallRowThreads, marked by this bit in KernelKey::variant (whose low
// bits hold the inner rank), so that no thread of a 1,024-element row idles.
inline constexpr uint32_t kMvnSmallRowThreads = 64;
inline constexpr uint32_t kMvnSmallRowChunk = kMvnSmallRowThreads * kMvnElementsPerThread;
inline constexpr uint8_t kMvnVariantSmallRow = 0x10;
// kMvnRow for groups up to kMvnWideRowChunk elements (e.g. 4,096 x 32,768):
// workgroups of kMvnWideRowThreads holding kMvnWideRowElementsPerThread
// elements each in registers, so that such a row is read from memory once.
inline constexpr uint32_t kMvnWideRowThreads = 1024;
inline constexpr uint32_t kMvnWideRowElementsPerThread = 32;
inline constexpr uint32_t kMvnWideRowChunk = kMvnWideRowThreads * kMvnWideRowElementsPerThread;
inline constexpr uint8_t kMvnVariantWideRow = 0x20;
// kMvnRow for groups of kMvnChunk to kMvnMediumRowChunk elements (e.g.
// 16,384 x 8,192): workgroups of kMvnMediumRowThreads threads of
// kMvnElementsPerThread elements, the 256-thread row's work a thread with
// twice the threads; marked by both row bits.
inline constexpr uint32_t kMvnMediumRowThreads = 512;
inline constexpr uint32_t kMvnMediumRowChunk = kMvnMediumRowThreads * kMvnElementsPerThread;
inline constexpr uint8_t kMvnVariantMediumRow = kMvnVariantSmallRow | kMvnVariantWideRow;
// kMvnPartial, kMvnApply and kMvnRow over groups packed in the input and
// the output, N a multiple of a texel's elements and every group's first
// element 16 bytes into its tensor times a whole number (the planner's
// condition, mvn_plan.cc): t0 and u0 are R32G32B32A32_UINT views and each
// thread loads and stores whole 16-byte texels (4 FLOAT32 or 8 FLOAT16
// elements; kMvnElementsPerThread elements, or kMvnWideRowElementsPerThread,
// are whole texels), texel k of a thread being texel k * threads + tid of
// the chunk; the view bases of t0 and u0 are in texels. Scale and Bias keep
// their R32_UINT views and per-element loads, unless kMvnVariantVec4ScaleBias.
inline constexpr uint8_t kMvnVariantVec4 = 0x40;
// With kMvnVariantVec4, in kMvnApply and kMvnRow that have a Scale or Bias:
// every Scale/Bias present is packed over the inner dimensions like the
// input (element n of a group at the group's first element + n) and each
// group's first element is 16 bytes into its tensor times a whole number
// (mvn_plan.cc). t1/t2 are then R32G32B32A32_UINT views too, view bases in
// texels, and a thread loads the Scale/Bias texel of each input texel:
// one load per 4 (FLOAT32) or 8 (FLOAT16) elements instead of one each.
// kMvnPartial over groups packed in the input (inner dimensions packed,
// any N, any group start): the input as R32G32B32A32_UINT texels of the
// whole tensor, whose bytes are a multiple of 16; chunk c of a group is
// texels [T0 + c * kMvnChunk / lanes, ...) with T0 the texel of its first
// element, lanes outside the group masked, so the group takes
// ceil((N + lanes - 1) / kMvnChunk) chunks (MvnArgs::chunks; the others
// read 0 to lanes - 1 elements of the texel before the group's first).
// Shares its bit with kMvnVariantSmallRow, which is kMvnRow's only.
// kMvnNormalise with the same bit: groups back to back in the input and the
// output (N >= lanes; the two passes, so that every group's statistic is in
// scratch): t0 and u0 are R32G32B32A32_UINT views of the whole tensors,
// texel t belongs to the group holding its lane 0 (chunk c of a group is
// its texels from ceil(first element / lanes) + c * kMvnChunk / lanes on),
// and the texel where a group ends takes the next group's statistic for
// its lanes past the end. Scale and Bias keep their R32_UINT views.
inline constexpr uint8_t kMvnVariantTexelSpan = 0x10;
// kMvnPartial with kMvnVariantTexelSpan: kMvnLongSpanElementsPerThread
// elements a thread, so a group takes
// ceil((N + lanes - 1) / kMvnLongSpanChunk) chunks, half as many workgroups
// (each with its reduction and its partial) for the same bytes. Shares its
// bit with kMvnVariantWideRow, which is kMvnRow's only; used where the
// group statistics are combined once (kMvnCombine), whose chunks are then
// the long ones while the normalisation keeps kMvnChunk.
inline constexpr uint8_t kMvnVariantLongSpan = 0x20;
inline constexpr uint32_t kMvnLongSpanElementsPerThread = 32;
inline constexpr uint32_t kMvnLongSpanChunk = kMvnThreads * kMvnLongSpanElementsPerThread;
// The last free bit of KernelKey::variant for MVN.
inline constexpr uint8_t kMvnVariantVec4ScaleBias = 0x80;
inline constexpr uint8_t kMvnVariantRankMask = 0x0f;
// kMvnCoop: at most this many chunks per group (one partial per thread in
// the combine; the planner's limit is PlannerOptions::mvn_coop_max_chunks).
inline constexpr uint32_t kMvnCoopMaxChunks = kMvnThreads;
inline constexpr uint32_t kMvnClearThreads = 64;

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_KERNELS_KERNEL_ABI_H_
