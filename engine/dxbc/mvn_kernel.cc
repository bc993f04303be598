#include "engine/dxbc/mvn_kernel.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/dxbc/activation_emit.h"
#include "engine/dxbc/mvn_stats_emit.h"
#include "engine/dxbc/mvn_texel_emit.h"
#include "engine/dxbc/shader_builder.h"
#include "engine/ops/schema.h"

namespace dmls::gpu {
namespace {

constexpr uint32_t kRegSizes = 4;
// Stride arrays of MvnArgs by tensor: input, output, scale, bias.
enum Tensor { kIn = 0, kOut = 1, kScale = 2, kBias = 3 };
constexpr uint32_t kRegStrides[4] = {6, 8, 10, 12};

const char* kLetters[] = {"x", "y", "z", "w"};
Operand CbWord(uint32_t reg, uint32_t k) { return CB0(reg + k / 4).Comps(kLetters[k % 4]); }

// Where a slot's tensor starts in its view (ViewBases, kernel_abi.h), in
// texels (words, or 16-byte texels for t0 and u0 with kMvnVariantVec4).
Operand SrvBase(uint32_t t) { return CbWord(kRegViewBases, ViewBaseWordSrv(t)); }
Operand UavBase(uint32_t u) { return CbWord(kRegViewBases, ViewBaseWordUav(u)); }

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
        stats_(b, CB0(2).y(), !key.normalize_variance),  // MvnArgs::pad[0] = 0
        texel_(b, key.data_type),
        lanes_(vec4_ ? texel_.lanes() : 1) {}

  static uint32_t ThreadsOf(const KernelKey& key) {
    if (key.stage == KernelStage::kMvnClear) return kMvnClearThreads;
    if ((key.variant & kMvnVariantWideRow) != 0) return kMvnWideRowThreads;
    return (key.variant & kMvnVariantSmallRow) != 0 ? kMvnSmallRowThreads : kMvnThreads;
  }
  static uint32_t ElementsOf(const KernelKey& key) {
    return (key.variant & kMvnVariantWideRow) != 0 ? kMvnWideRowElementsPerThread
                                                   : kMvnElementsPerThread;
  }

  Operand T() { return b_.NewTemp().x(); }

  // Group index W of the 2-D grid, clamped into range, its reduction group g
  // and chunk c; `valid` tells whether W was in range.
  void GroupCoordinates() {
    w_ = T();
    valid_ = T();
    g_ = T();
    c_ = T();
    Operand total = T();
    b_.IMad(w_, Operand::ThreadGroupId().y(), CB0(0).y(), Operand::ThreadGroupId().x());
    b_.IMul(total, CB0(0).x(), CB0(0).w());
    b_.ULt(valid_, w_, total);
    Operand wc = T();
    b_.Movc(wc, valid_, w_, U(0));
    b_.UDiv(g_, c_, wc, CB0(0).w());
    b_.IAdd(g_, g_, CB0(3).x());  // MvnArgs::first_group
    tid_ = Operand::ThreadIdInGroupFlattened();
  }

  // base[t] = offset of reduction group g's first element in tensor t.
  std::vector<Operand> OuterOffsets(const std::vector<Tensor>& tensors) {
    std::vector<Operand> base;
    for (size_t i = 0; i < tensors.size(); ++i) {
      base.push_back(T());
      b_.Mov(base.back(), U(0));
    }
    Operand rem = T(), coord = T();
    b_.Mov(rem, g_);
    const uint32_t outer = kMaxRank - inner_;
    for (uint32_t k = outer; k-- > 0;) {
      if (k > 0) {
        b_.UDiv(rem, coord, rem, CbWord(kRegSizes, k));
      } else {
        b_.Mov(coord, rem);
      }
      for (size_t i = 0; i < tensors.size(); ++i) {
        b_.IMad(base[i], coord, CbWord(kRegStrides[tensors[i]], k), base[i]);
      }
    }
    return base;
  }

  // offs[t] = base[t] + offset of in-group element n (inner dimensions).
  std::vector<Operand> InnerOffsets(Operand n, const std::vector<Tensor>& tensors,
                                    const std::vector<Operand>& base) {
    std::vector<Operand> offs;
    for (size_t i = 0; i < tensors.size(); ++i) {
      offs.push_back(T());
      b_.Mov(offs.back(), base[i]);
    }
    Operand rem = T(), coord = T();
    b_.Mov(rem, n);
    const uint32_t first = kMaxRank - inner_;
    for (uint32_t k = kMaxRank; k-- > first;) {
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

  // FLOAT16 addressing: `word` = the view word holding the element at
  // element offset `off` of a tensor that starts `view_base` words into
  // its view, and `shift` = that element's bit position in it (0 or 16).
  void HalfWord(Operand word, Operand off, Operand view_base) {
    b_.UShr(word, off, U(1));
    b_.IAdd(word, word, view_base);
  }
  void HalfShift(Operand shift, Operand off) {
    b_.And(shift, off, U(1));
    b_.IShl(shift, shift, U(4));
  }
  // d = the binary16 at bit `shift` of the word in d, as float32.
  void UnpackHalf(Operand d, Operand shift) {
    b_.UShr(d, d, shift);
    b_.F16ToF32(d, d);
  }

  // dst = element at element offset `off` of SRV t#`res` as float32.
  void Load(Operand dst, uint32_t res, Operand off) {
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

  // FLOAT16 elements j (even) and j+1 of this thread: one word load when
  // their offsets are the two halves of one word (ElementIndex pairs them
  // so wherever the group's start allows), else two.
  void LoadPair(Operand d0, Operand d1, uint32_t res, Operand off0, Operand off1) {
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

  // kMvnVariantVec4: texel k of this thread in chunk c_ (texel t of the
  // group, kernel_abi.h), clamped to 0 past the group's last texel (`ok` 0
  // there).
  void TexelIndex(uint32_t k, Operand t, Operand ok) {
    Operand first = T();
    b_.IMul(first, c_, U(chunk_ / lanes_));
    texel_.Index(first, tid_, k, threads_, CB0(0).z(), t, ok);
  }

  // Stores float32 `v` as the output element at element offset `off`.
  void Store(Operand v, Operand off) {
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

  // FLOAT16 elements j (even) and j+1 of this thread: when both are in range
  // and their output offsets are the two halves of one word, one plain
  // store of the packed word; otherwise each in-range element through
  // Store's atomics.
  void StorePair(Operand v0, Operand off0, Operand ok0, Operand v1, Operand off1, Operand ok1) {
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

  // The group's first element (0 when not finite). Statistics are computed
  // on x - ref: for data with a large common offset (1e4 + U(0, 0.1)) the
  // mean itself is not representable closely enough in float32, but x - ref
  // is exact and its mean is (OPERATORS.md §7.6). A finite ref keeps the
  // ±inf members of a NormalizeVariance FALSE group meaningful (§4.3.1).
  Operand Reference(Operand base_in) {
    Operand ref = T();
    if (vec4_) {
      texel_.Unpack(ref, texel_.Load(0, texel_.Address(base_in, U(0), SrvBase(0))), 0);
    } else {
      Load(ref, 0, base_in);
    }
    stats_.MakeFinite(ref);
    return ref;
  }

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
  void SetPairShift(Operand base) {
    pair_shift_ = T();
    if (key_.data_type != DataType::kFloat16 || vec4_) {
      b_.Mov(pair_shift_, U(0));
      return;
    }
    Operand room = T();
    b_.IMul(room, CB0(0).w(), U(chunk_));
    b_.ULt(room, CB0(0).z(), room);
    b_.And(pair_shift_, base, U(1));
    b_.And(pair_shift_, pair_shift_, room);
  }

  // Element index of the j-th element of this thread; `ok` when in [0, N).
  // FLOAT16: elements 2i and 2i+1 of the chunk (less pair_shift_) go to the
  // same thread (j even and odd), so that a packed word is loaded once and
  // written by one thread with a plain store (StorePair) instead of two
  // atomics per element.
  void ElementIndex(uint32_t j, Operand n_clamped, Operand ok) {
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

  absl::StatusOr<KernelInfo> Partial() {
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
    const Operand words[4] = {st.n, st.m, st.M, st.s};
    for (uint32_t k = 0; k < 4; ++k) {
      if (k > 0) b_.IAdd(addr, addr, U(1));
      b_.StoreUavTyped(Operand::Uav(1), addr, words[k]);
    }
    b_.EndIf();
    return Finish(b_, threads_);
  }

  // The statistic of chunk c_ of the group whose input starts at `base_in`
  // (loaded, reduced over the workgroup: every thread holds it).
  MvnStat ChunkStat(Operand base_in, Operand ref) {
    std::vector<Operand> x(elems_), ok(elems_);
    if (vec4_) {
      const std::vector<Elem> el = LoadTexels({kIn}, {base_in});
      for (uint32_t j = 0; j < elems_; ++j) {
        x[j] = el[j].y;
        ok[j] = el[j].ok;
      }
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

  // Declarations shared by kMvnApply, kMvnRow and kMvnCoop.
  void DeclareNormalise() {
    b_.DclConstantBuffer(kConstantBlockRegs);
    b_.DclBufferSrv(0, ReturnType::kUint);
    if (key_.has_scale) b_.DclBufferSrv(1, ReturnType::kUint);
    if (key_.has_bias) b_.DclBufferSrv(2, ReturnType::kUint);
    b_.DclTypedUav(0, ReturnType::kUint);
    if (key_.stage == KernelStage::kMvnApply) b_.DclTypedUav(1, ReturnType::kFloat);
    if (key_.stage == KernelStage::kMvnCoop) b_.DclTypedUav(1, ReturnType::kUint);
    b_.DclGroupSharedRaw(0, threads_ * kMvnStatBytes);
  }

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
                                 bool defer_scale_bias = false) {
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
      size_t next = 2;
      if (key_.has_scale) {
        e.s = T();
        Load(e.s, 1, off[next++]);
      }
      if (key_.has_bias) {
        e.bias = T();
        Load(e.bias, 2, off[next++]);
      }
    }
    LoadInputs(y, in_off);
    return el;
  }

  // x[j] = the input element at element offset off[j] (t0), FLOAT16 by
  // pairs (LoadPair).
  void LoadInputs(const std::vector<Operand>& x, const std::vector<Operand>& off) {
    for (size_t j = 0; j < x.size(); ++j) {
      if (key_.data_type == DataType::kFloat16) {
        LoadPair(x[j], x[j + 1], 0, off[j], off[j + 1]);
        ++j;
      } else {
        Load(x[j], 0, off[j]);
      }
    }
  }

  // LoadElements of kMvnVariantVec4 (`tensors`: kIn alone, or
  // NormaliseTensors()): this thread's texels of the input, all loads
  // first (el[j]: element j % lanes_ of texel j / lanes_, whose `ok`,
  // texel index and out_off, the output texel's address in u0, its
  // elements share: N is whole texels), then Scale/Bias: the texels beside
  // the input's with kMvnVariantVec4ScaleBias (ScaleBiasTexels; none with
  // `defer_scale_bias`, for the caller to load later), else per element
  // through InnerOffsets.
  std::vector<Elem> LoadTexels(const std::vector<Tensor>& tensors,
                               const std::vector<Operand>& base, bool defer_scale_bias = false) {
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
    const size_t first_sb = std::min<size_t>(2, tensors.size());
    const std::vector<Tensor> sb(tensors.begin() + first_sb, tensors.end());
    const std::vector<Operand> sb_base(base.begin() + first_sb, base.end());
    if (ScaleBiasAreTexels()) {
      if (!defer_scale_bias) ScaleBiasTexels(el, base);
    } else {
      for (uint32_t j = 0; j < elems_ && !sb.empty(); ++j) {
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

  // Whether Scale/Bias load as texels (kMvnVariantVec4ScaleBias; the key
  // has one of them).
  bool ScaleBiasAreTexels() const { return (key_.variant & kMvnVariantVec4ScaleBias) != 0; }

  // el[j].s and .bias from the Scale/Bias texels beside input texels
  // [first, first + count) of this thread (all of them by default;
  // kMvnVariantVec4ScaleBias): all loads, then the unpacking. `base`:
  // OuterOffsets(NormaliseTensors()).
  void ScaleBiasTexels(std::vector<Elem>& el, const std::vector<Operand>& base,
                       uint32_t first = 0, uint32_t count = ~0u) {
    const uint32_t end = std::min(elems_ / lanes_, first + std::min(count, elems_ / lanes_));
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

  // kMvnVariantVec4: this thread's results as whole output texels (N is
  // whole texels, so every texel in range is this thread's alone).
  void StoreTexels(const std::vector<Elem>& el) {
    for (uint32_t k = 0; k < elems_ / lanes_; ++k) StoreTexel(el, k);
  }
  // The output texel k of this thread.
  void StoreTexel(const std::vector<Elem>& el, uint32_t k) {
    const Elem& e = el[k * lanes_];
    std::vector<Operand> y;
    for (uint32_t j = 0; j < lanes_; ++j) y.push_back(el[k * lanes_ + j].y);
    const Operand v = texel_.Pack(y);
    b_.IfNz(e.ok);
    b_.StoreUavTyped(Operand::Uav(0), e.out_off, v);
    b_.EndIf();
  }

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
                 const std::vector<Operand>* sb_base = nullptr) {
    const uint32_t sb_batch =
        (key_.variant & kMvnVariantWideRow) != 0 && key_.data_type == DataType::kFloat16 ? 4 : 1;
    Operand inv = T(), rs = T(), rstd = T();
    stats_.InverseScale(st.s, inv);
    if (!stats_.exact_mean()) stats_.ScaledRef(rs, ref, inv);  // exact: no shift
    MathEmitter math(b_, "x", CB0(2).y());  // MvnArgs::pad[0], always 0
    if (MathEmitter::UsesFusedMad(key_.fused)) math.PrepareFusedMad();
    if (key_.normalize_variance) {
      // eps/s^2 as two products, laundered in between: 1/s reaches 2^126,
      // and a compiler that reassociated eps*(1/s * 1/s) would make
      // 0*inf = NaN of Epsilon 0. The first takes a denormal Epsilon
      // exactly (ScaledProduct): the H100 flushed Epsilon = 1.4e-45 to 0
      // (random/2997 of a fresh seed; for values at most 2^-126, 1/s =
      // 2^126 and eps/s is normal).
      Operand eps = T(), fin = T(), alt = T();
      math.ScaledProduct(eps, CB0(1).x(), inv);
      math.Launder(eps);
      b_.Mul(eps, eps, inv);
      math.IsFinite(fin, eps);
      b_.Div(rstd, st.M, st.n);
      b_.Add(rstd, rstd, eps);
      b_.Sqrt(rstd, rstd);
      b_.Div(rstd, F(1.0f), rstd);
      // eps/s^2 overflows for small values and a huge Epsilon (0.1 and
      // FLT_MAX, random/0674): the variance (M/n < 16) is then negligible
      // beside it, and rstd = s/sqrt(eps), not 0 (a fused activation may
      // scale the tiny result back up: LEAKY_RELU with Alpha = inf).
      b_.Sqrt(alt, CB0(1).x());
      b_.Div(alt, st.s, alt);
      b_.Movc(rstd, fin, rstd, alt);
      // A nonzero Epsilon lost to underflow or flushing (eps/s^2 below the
      // float range: a constant group of huge values, or a denormal eps/s^2
      // on the H100) leaves 1/sqrt(0) = inf only where M = 0, a constant
      // group whose deviations are all 0: FLT_MAX keeps 0 * rstd = 0.
      // Epsilon 0 keeps 0/0 = NaN (§4.3.1).
      Operand lost = T(), nz = T();
      math.IsInf(lost, rstd);
      b_.And(nz, CB0(1).x(), U(0x7fffffffu));
      b_.INe(nz, nz, U(0));
      b_.And(lost, lost, nz);
      b_.Movc(rstd, lost, F(std::numeric_limits<float>::max()), rstd);
    } else {
      b_.Mov(rstd, st.s);
    }
    const ActivationParams params{CB0(1).y(), CB0(1).z(), CB0(1).w(), CB0(2).x()};
    std::optional<ExactMean> exact;
    if (stats_.exact_mean()) {
      exact = ExactMean{inv, T(), T()};
      stats_.MeanOf(exact->c_hi, exact->c_lo, st);
    }
    for (size_t j = 0; j < el.size(); ++j) {
      Elem& e = el[j];
      const uint32_t k = static_cast<uint32_t>(j / lanes_);
      if (sb_base && j % (lanes_ * sb_batch) == 0) ScaleBiasTexels(el, *sb_base, k, sb_batch);
      if (exact) {
        e.x = e.y;
        e.y = T();
        stats_.Deviation(e.y, e.x, inv, exact->c_hi, exact->c_lo);
      } else {
        stats_.Shifted(e.y, e.y, inv, rs);
        b_.Add(e.y, e.y, st.m.Neg());
      }
      Affine(math, e, rstd, params, exact ? &*exact : nullptr);
      b_.And(e.ok, e.ok, valid_);
      if (sb_base && j % lanes_ == lanes_ - 1) StoreTexel(el, k);
    }
    if (vec4_) {
      if (!sb_base) StoreTexels(el);
      return;
    }
    for (size_t j = 0; j < el.size(); ++j) {
      if (key_.data_type == DataType::kFloat16) {
        StorePair(el[j].y, el[j].out_off, el[j].ok, el[j + 1].y, el[j + 1].out_off, el[j + 1].ok);
        ++j;
        continue;
      }
      b_.IfNz(el[j].ok);
      Store(el[j].y, el[j].out_off);
      b_.EndIf();
    }
  }

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
              const ExactMean* exact) {
    const OperatorType op = key_.fused;
    // `beyond`: FLOAT32 overflow that matters: something after the product
    // can bring it back (Bias, an activation), and the product can overflow
    // at all (d*rstd stays below sqrt(N) when NormalizeVariance is TRUE:
    // only Scale takes it further). Elsewhere an overflow is the true
    // result's, and the branch cost plain MVN1 2-4% on the H100 (run 8),
    // except in the FLOAT32 wide row kernel (32 elements a thread), which
    // ran 7% faster with it (2,214 against 2,062 GB/s at 4,096 x 32,768,
    // runs 8 and 9; our reading: without the branches the compiler
    // interleaves the 32 elements and spills): it keeps the branch.
    const bool fp32 = key_.data_type == DataType::kFloat32;
    const bool wide = (key_.variant & kMvnVariantWideRow) != 0;
    const bool beyond = fp32 && (wide || ((key_.has_bias || op != OperatorType::kInvalid) &&
                                          (!key_.normalize_variance || key_.has_scale)));
    const bool result = beyond && MathEmitter::BeyondRangeResult(op);
    const bool cancels = key_.has_bias && (exact || (fp32 && key_.has_scale));
    const int param = beyond ? MathEmitter::BeyondRangeParam(op) : -1;
    Operand pre = T();
    MathEmitter::BeyondRangeIo io{pre, params, Operand(), Operand()};
    if (param >= 0) {
      Operand& c = param == 0 ? io.params.p0 : io.params.p1;
      Operand own = T();
      b_.Mov(own, c);
      c = own;
    }
    if (result) {
      io.done = T();
      io.result = T();
      b_.Mov(io.done, U(0));
    }
    const uint32_t mark = b_.TempMark();
    Operand q = T(), p = q;
    b_.Mul(q, e.y, rstd);
    if (key_.has_scale) {
      p = T();
      b_.Mul(p, q, e.s);
    }
    if (key_.has_bias) {
      b_.Add(pre, p, e.bias);
    } else {
      b_.Mov(pre, p);
    }
    if (beyond || cancels) {
      Operand slow = T();
      if (beyond) {
        math.IsFinite(slow, pre);
        b_.Not(slow, slow);
      } else {
        b_.Mov(slow, U(0));
      }
      if (cancels) {
        Operand half = T();
        b_.Mul(half, p.Abs(), F(0.5f));
        b_.Lt(half, pre.Abs(), half);
        b_.Or(slow, slow, half);
      }
      b_.IfNz(slow);
      if (cancels) {
        Operand sum = T(), ok = T(), lo = T();
        const Operand scale = key_.has_scale ? e.s : F(1.0f);
        if (exact) {
          stats_.DeviationLow(lo, e.y, e.x, exact->inv, exact->c_hi, exact->c_lo);
          b_.Mul(lo, lo, rstd);
          b_.Mul(lo, lo, scale);
        } else {
          b_.Mov(lo, F(0.0f));
        }
        math.ExactMad(sum, q, scale, e.bias, &lo);
        math.IsFinite(ok, sum);
        b_.Movc(pre, ok, sum, pre);
      }
      if (beyond) {
        Operand finite = T();
        math.IsFinite(finite, pre);
        b_.IfZ(finite);
        MathEmitter::AffineTerms terms{e.y, rstd};
        if (key_.has_scale) terms.s = &e.s;
        if (key_.has_bias) terms.b = &e.bias;
        math.AffineBeyondRange(op, terms, io);
        b_.EndIf();
      }
      b_.EndIf();
    }
    b_.RewindTemps(mark);
    if (op != OperatorType::kInvalid) math.Activation(op, pre, io.params);
    b_.RewindTemps(mark);
    if (result) b_.Movc(pre, io.done, io.result, pre);
    e.y = pre;
  }

  std::vector<Tensor> NormaliseTensors() const {
    std::vector<Tensor> tensors = {kIn, kOut};
    if (key_.has_scale) tensors.push_back(kScale);
    if (key_.has_bias) tensors.push_back(kBias);
    return tensors;
  }

  // An empty statistic: Combine's identity (its scale is never used).
  void SetEmpty(const MvnStat& p) {
    b_.Mov(p.n, F(0.0f));
    b_.Mov(p.m, F(0.0f));
    b_.Mov(p.M, F(0.0f));
    b_.Mov(p.s, F(1.0f));
  }

  absl::StatusOr<KernelInfo> Apply() {
    DeclareNormalise();
    GroupCoordinates();
    // 1. Combine the group's chunk partials (thread t takes t, t+256, ...).
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
    const Operand words[4] = {p.n, p.m, p.M, p.s};
    for (uint32_t k = 0; k < 4; ++k) {
      if (k > 0) b_.IAdd(addr, addr, U(1));
      b_.LdUavTyped(words[k], addr, Operand::Uav(1));
    }
    stats_.Combine(st, p);
    b_.IAdd(i, i, U(threads_));
    b_.EndLoop();
    stats_.GroupReduce(st, tid_, threads_, CB0(0).w());  // chunks: threads past it are empty
    // 2. Normalise this thread's elements of the chunk.
    const std::vector<Tensor> tensors = NormaliseTensors();
    std::vector<Operand> base = OuterOffsets(tensors);
    SetPairShift(base[1]);  // the output's words
    Operand ref = Reference(base[0]);
    std::vector<Elem> el = LoadElements(tensors, base);
    Normalise(st, ref, el);
    return Finish(b_, threads_);
  }

  // The statistic at byte `byte_addr` of group-shared g1 into `p`, and back.
  void LoadSharedStat(const MvnStat& p, Operand byte_addr) {
    Operand pv = b_.NewTemp();
    b_.LdRaw(pv.Comps("xyzw"), byte_addr, Operand::GroupShared(1));
    b_.Mov(p.n, pv.x());
    b_.Mov(p.m, pv.y());
    b_.Mov(p.M, pv.z());
    b_.Mov(p.s, pv.w());
  }
  void StoreSharedStat(Operand byte_addr, const MvnStat& q) {
    Operand pk = b_.NewTemp();
    b_.Mov(pk.x(), q.n);
    b_.Mov(pk.y(), q.m);
    b_.Mov(pk.z(), q.M);
    b_.Mov(pk.w(), q.s);
    b_.StoreRaw(Operand::GroupShared(1).Comps("xyzw"), byte_addr, pk);
  }
  // Scratch word `first` + k of u1 for k < 4: atomically exchanged with
  // (store) or read into (load) the statistic's words.
  void PublishStat(Operand first, const MvnStat& q) {
    const Operand w[4] = {q.n, q.m, q.M, q.s};
    Operand old = T();
    for (uint32_t k = 0; k < 4; ++k) {
      Operand a = T();
      b_.IAdd(a, first, U(k));
      b_.ImmAtomicExch(old, Operand::Uav(1).x(), a, w[k]);
    }
  }
  void ReadStat(const MvnStat& p, Operand first) {
    const Operand w[4] = {p.n, p.m, p.M, p.s};
    for (uint32_t k = 0; k < 4; ++k) {
      Operand a = T();
      b_.IAdd(a, first, U(k));
      b_.ImmAtomicOr(w[k], Operand::Uav(1).x(), a, U(0));
    }
  }

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
  absl::StatusOr<KernelInfo> Coop() {
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

  // Zeroes scratch words [0, c0.x) (kMvnCoop's counters).
  absl::StatusOr<KernelInfo> Clear() {
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

  // The whole group (N <= kMvnChunk) in one workgroup: its elements are
  // loaded once, reduced, then normalised from registers.
  absl::StatusOr<KernelInfo> Row() {
    DeclareNormalise();
    GroupCoordinates();
    const std::vector<Tensor> tensors = NormaliseTensors();
    std::vector<Operand> base = OuterOffsets(tensors);
    SetPairShift(base[1]);  // the output's words
    Operand ref = Reference(base[0]);
    // Scale/Bias texels once the statistics are in, a texel at a time
    // (Normalise): they are not live through the reduction (the wide
    // row's registers).
    const bool defer = vec4_ && ScaleBiasAreTexels();
    std::vector<Elem> el = LoadElements(tensors, base, defer);
    std::vector<Operand> x, ok;
    for (const Elem& e : el) {
      x.push_back(e.y);
      ok.push_back(e.ok);
    }
    MvnStat st = stats_.Local(x, ok, ref);
    stats_.GroupReduce(st, tid_, threads_);
    Normalise(st, ref, el, defer ? &base : nullptr);
    return Finish(b_, threads_);
  }

 private:
  ShaderBuilder& b_;
  const KernelKey& key_;
  uint32_t inner_;
  uint32_t threads_;
  uint32_t elems_;  // elements per thread
  uint32_t chunk_;
  bool vec4_;  // kMvnVariantVec4
  MvnStatsEmitter stats_;
  MvnTexelEmitter texel_;
  uint32_t lanes_;  // elements per texel (1 without kMvnVariantVec4)
  Operand w_, valid_, g_, c_, tid_;
  Operand pair_shift_;  // SetPairShift: 0 or 1
};

static_assert(kMvnElementsPerThread % 8 == 0 && kMvnWideRowElementsPerThread % 8 == 0,
              "FLOAT16 elements go in pairs, and in whole texels with kMvnVariantVec4");

bool IsMvnType(DataType t) { return t == DataType::kFloat32 || t == DataType::kFloat16; }

}  // namespace

absl::StatusOr<KernelInfo> BuildMvnKernel(const KernelKey& key) {
  if (key.op != OperatorType::kMeanVarianceNormalization1 || !IsMvnType(key.data_type) ||
      key.layout != LayoutClass::kStrided ||
      (key.variant & ~(kMvnVariantRankMask | kMvnVariantSmallRow | kMvnVariantWideRow |
                       kMvnVariantVec4 | kMvnVariantVec4ScaleBias)) != 0 ||
      (key.variant & kMvnVariantRankMask) < 1 || (key.variant & kMvnVariantRankMask) > kMaxRank ||
      key.scale_bias ||
      (key.fused != OperatorType::kInvalid && !IsSupportedActivation(key.fused))) {
    return absl::InvalidArgumentError(absl::StrCat("no MVN kernel for ", key.DebugString()));
  }
  const uint8_t row_bits = key.variant & (kMvnVariantSmallRow | kMvnVariantWideRow);
  if (row_bits != 0 && (key.stage != KernelStage::kMvnRow ||
                        row_bits == (kMvnVariantSmallRow | kMvnVariantWideRow))) {
    return absl::InvalidArgumentError(absl::StrCat("small rows are kMvnRow only: ",
                                                   key.DebugString()));
  }
  if ((key.variant & kMvnVariantVec4) != 0 && key.stage != KernelStage::kMvnPartial &&
      key.stage != KernelStage::kMvnApply && key.stage != KernelStage::kMvnRow) {
    return absl::InvalidArgumentError(
        absl::StrCat("texel loads are kMvnPartial/Apply/Row only: ", key.DebugString()));
  }
  if ((key.variant & kMvnVariantVec4ScaleBias) != 0 &&
      ((key.variant & kMvnVariantVec4) == 0 || (!key.has_scale && !key.has_bias) ||
       (key.stage != KernelStage::kMvnApply && key.stage != KernelStage::kMvnRow))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Scale/Bias texels need texel loads, a Scale or Bias, kMvnApply/Row: ",
        key.DebugString()));
  }
  if (key.stage == KernelStage::kMvnClear && key != MvnClearKey()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the MVN clear kernel has one key: ", key.DebugString()));
  }
  ShaderBuilder b(MvnEmitter::ThreadsOf(key));
  MvnEmitter e(b, key);
  if (key.stage == KernelStage::kMvnClear) return e.Clear();
  if (key.stage == KernelStage::kMvnCoop) return e.Coop();
  if (key.stage == KernelStage::kMvnPartial) {
    if (key.has_scale || key.has_bias || key.fused != OperatorType::kInvalid) {
      return absl::InvalidArgumentError(
          absl::StrCat("MVN partial keys carry no apply options: ", key.DebugString()));
    }
    return e.Partial();
  }
  return key.stage == KernelStage::kMvnRow ? e.Row() : e.Apply();
}

KernelKey MvnClearKey() {
  KernelKey k;
  k.stage = KernelStage::kMvnClear;
  k.op = OperatorType::kMeanVarianceNormalization1;
  k.data_type = DataType::kFloat32;
  k.layout = LayoutClass::kStrided;
  k.variant = 1;
  return k;
}

void AppendMvnKernelKeys(std::vector<KernelKey>& keys) {
  keys.push_back(MvnClearKey());
  // No fused activation, then every activation the schema lets MVN fuse.
  std::vector<OperatorType> fused = {OperatorType::kInvalid};
  for (const ops::OperatorSchema& s : ops::AllOperators()) {
    if (s.fusable_from.has_value()) fused.push_back(s.type);
  }
  for (DataType t : {DataType::kFloat32, DataType::kFloat16}) {
    for (uint8_t r = 1; r <= kMaxRank; ++r) {
      KernelKey k;
      k.op = OperatorType::kMeanVarianceNormalization1;
      k.data_type = t;
      k.layout = LayoutClass::kStrided;
      k.variant = r;
      k.stage = KernelStage::kMvnPartial;
      for (bool vec4 : {false, true}) {
        k.variant = vec4 ? static_cast<uint8_t>(r | kMvnVariantVec4) : r;
        for (bool nv : {false, true}) {
          k.normalize_variance = nv;  // false: exact-mean statistics
          keys.push_back(k);
        }
      }
      const uint8_t row_bits[] = {0, kMvnVariantSmallRow, kMvnVariantWideRow};
      // Apply, the three row kernels, coop; then apply and the row kernels
      // with texel loads (kMvnVariantVec4), with a Scale or Bias also with
      // their texel loads (kMvnVariantVec4ScaleBias).
      for (int stage = 0; stage < 9; ++stage) {
        const int s = stage < 5 ? stage : stage - 5;
        k.stage = s == 0   ? KernelStage::kMvnApply
                  : s == 4 ? KernelStage::kMvnCoop
                           : KernelStage::kMvnRow;
        k.variant = s == 0 || s == 4 ? r : static_cast<uint8_t>(r | row_bits[s - 1]);
        if (stage >= 5) k.variant |= kMvnVariantVec4;
        for (bool nv : {false, true}) {
          for (bool hs : {false, true}) {
            for (bool hb : {false, true}) {
              for (OperatorType f : fused) {
                k.normalize_variance = nv;
                k.has_scale = hs;
                k.has_bias = hb;
                k.fused = f;
                keys.push_back(k);
                if (stage >= 5 && (hs || hb)) {
                  KernelKey sb = k;  // and with Scale/Bias texels
                  sb.variant |= kMvnVariantVec4ScaleBias;
                  keys.push_back(sb);
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace dmls::gpu
