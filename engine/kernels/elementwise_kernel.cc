#include "engine/kernels/elementwise_kernel.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "engine/kernels/activation_emit.h"
#include "engine/kernels/int_convert_emit.h"
#include "engine/dxbc/shader_builder.h"

namespace dmls::gpu {
namespace {

constexpr uint32_t kRegFloat = 1;  // c1, c2: f[0..7]
constexpr uint32_t kRegInt = 3;    // c3
constexpr uint32_t kRegSizes = 4;
constexpr uint32_t kRegInStrides = 6;
constexpr uint32_t kRegOutStrides = 8;

const char* kLetters[] = {"x", "y", "z", "w"};

// Word `k` of a cb array starting at register `reg`.
Operand CbWord(uint32_t reg, uint32_t k) { return CB0(reg + k / 4).Comps(kLetters[k % 4]); }

// Where the tensors start in their views (ViewBases, kernel_abi.h), in
// texels: t0 = input, u0 = output.
Operand InBase() { return CbWord(kRegViewBases, ViewBaseWordSrv(0)); }
Operand OutBase() { return CbWord(kRegViewBases, ViewBaseWordUav(0)); }

bool IsSignedInt(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt16 || t == DataType::kInt32;
}

// Whether EmitOp(key) uses MathEmitter::FusedMad.
bool UsesFusedMad(const KernelKey& key) {
  return MathEmitter::UsesFusedMad(key.op) || (key.scale_bias && IsFloat(key.data_type));
}

// Applies the operator of `key` to v (components m.comps()), v holding
// float32 values for float types and 32-bit integers otherwise.
void EmitOp(MathEmitter& m, const KernelKey& key, Operand v) {
  ShaderBuilder& b = m.builder();
  const bool is_float = IsFloat(key.data_type);
  const Operand fmin = CbWord(kRegFloat, kArgMin), fmax = CbWord(kRegFloat, kArgMax);
  const Operand imin = CbWord(kRegInt, kArgIntMin), imax = CbWord(kRegInt, kArgIntMax);
  const Operand iaux = CbWord(kRegInt, kArgIntAux);
  const Operand scale = CbWord(kRegFloat, kArgScale), bias = CbWord(kRegFloat, kArgBias);
  switch (key.op) {
    case OperatorType::kElementWiseThreshold:
    case OperatorType::kElementWiseClip: {
      const bool clip = key.op == OperatorType::kElementWiseClip;
      if (is_float) {
        if (key.scale_bias) m.FusedMad(v, v, scale, bias);
        m.MaxNum(v, v, fmin);
        if (clip) m.MinNum(v, v, fmax);
        return;
      }
      if (key.scale_bias) EmitIntScaleBias(m, key.data_type, v, scale, bias);
      if (clip) {
        EmitIntClip(b, key.data_type, v, imin, imax);
      } else {
        EmitIntThreshold(b, key.data_type, v, imin);
      }
      return;
    }
    case OperatorType::kActivationRelu:
      if (!is_float) return EmitIntRelu(b, v);
      break;
    case OperatorType::kActivationShrink:
      if (!is_float) return EmitIntShrink(m, key.data_type, v, imin, imax, iaux);
      break;
    default:
      break;
  }
  ActivationParams p{CbWord(kRegFloat, kArgP0), CbWord(kRegFloat, kArgP1),
                     CbWord(kRegFloat, kArgD0), CbWord(kRegFloat, kArgD1)};
  m.Activation(key.op, v, p);
}

bool Is64(DataType t) { return t == DataType::kInt64 || t == DataType::kUint64; }

// CLIP on one 64-bit element held as (lo, hi) components: exact compares on
// the word pair against Min (c3.xy) and Max (c2.xy).
void EmitClip64(ShaderBuilder& b, bool is_signed, Operand lo, Operand hi) {
  auto less = [&](Operand c, Operand alo, Operand ahi, Operand blo, Operand bhi) {
    Operand t1 = b.NewTemp().x(), t2 = b.NewTemp().x();
    if (is_signed) {
      b.ILt(c, ahi, bhi);
    } else {
      b.ULt(c, ahi, bhi);
    }
    b.IEq(t1, ahi, bhi);
    b.ULt(t2, alo, blo);
    b.And(t1, t1, t2);
    b.Or(c, c, t1);
  };
  const Operand min_lo = CB0(kRegInt).x(), min_hi = CB0(kRegInt).y();
  const Operand max_lo = CB0(2).x(), max_hi = CB0(2).y();
  Operand c = b.NewTemp().x();
  less(c, lo, hi, min_lo, min_hi);  // x < Min -> Min
  b.Movc(lo, c, min_lo, lo);
  b.Movc(hi, c, min_hi, hi);
  less(c, max_lo, max_hi, lo, hi);  // Max < x -> Max
  b.Movc(lo, c, max_lo, lo);
  b.Movc(hi, c, max_hi, hi);
}

// Processes the 32-bit words in `w` (components m.comps()) in place: unpacks
// the 1, 2 or 4 elements of each word, applies the operator, repacks.
void EmitWords(MathEmitter& m, const KernelKey& key, Operand w) {
  ShaderBuilder& b = m.builder();
  const DataType t = key.data_type;
  const uint32_t bits = ElementBits(t);
  // IDENTITY is a copy of the bits for every type: no unpacking. (FLOAT16
  // used to convert each half to float32 and back: 4 conversions and 4
  // shifts/ors per word for nothing; 57% of the copy bandwidth on the H100.)
  if (key.op == OperatorType::kActivationIdentity) return;
  if (bits == 32) {
    EmitOp(m, key, w);
    return;
  }
  if (bits == 64) {  // CLIP only; a texel holds two (lo, hi) elements
    EmitClip64(b, t == DataType::kInt64, w.x(), w.y());
    EmitClip64(b, t == DataType::kInt64, w.z(), w.w());
    return;
  }
  if (t == DataType::kFloat16) {
    Operand lo = m.Tmp(), hi = m.Tmp();
    b.F16ToF32(lo, w);
    b.UShr(hi, w, U(16));
    b.F16ToF32(hi, hi);
    EmitOp(m, key, lo);
    EmitOp(m, key, hi);
    b.F32ToF16(lo, lo);
    b.F32ToF16(hi, hi);
    b.IShl(hi, hi, U(16));
    b.Or(w, lo, hi);
    return;
  }
  Operand out = m.Tmp();
  b.Mov(out, w);
  for (uint32_t lane = 0; lane < 32 / bits; ++lane) {
    Operand e = m.Tmp();
    if (IsSignedInt(t)) {
      b.Ibfe(e, U(bits), U(lane * bits), w);
    } else {
      b.Ubfe(e, U(bits), U(lane * bits), w);
    }
    EmitOp(m, key, e);
    b.Bfi(out, U(bits), U(lane * bits), e, out);
  }
  b.Mov(w, out);
}

// Flat thread index of the 2-D grid: (gid.y * groups_x + gid.x) * T + tid.
Operand FlatThreadIndex(ShaderBuilder& b, uint32_t items_per_group) {
  Operand r = b.NewTemp().x();
  b.IMad(r, Operand::ThreadGroupId().y(), CB0(0).y(), Operand::ThreadGroupId().x());
  b.IMad(r, r, U(items_per_group), Operand::ThreadIdInGroupFlattened());
  return r;
}

absl::StatusOr<KernelInfo> Contiguous(const KernelKey& key) {
  ShaderBuilder b(kElementwiseThreads);
  b.DclConstantBuffer(kConstantBlockRegs);
  b.DclBufferSrv(0, ReturnType::kUint);
  b.DclTypedUav(0, ReturnType::kUint);
  const std::string comps = key.variant == kVariantVec4 ? "xyzw" : "x";
  MathEmitter m(b, comps, CbWord(kRegInt, kArgIntZero));
  // FLOAT16 needs 2 binary16 ulp: the cheaper math (no exp compensation,
  // shorter fits) keeps the 8 halves of a texel from making GELU/TANH
  // ALU-bound.
  m.set_half_precision(key.data_type == DataType::kFloat16);
  if (UsesFusedMad(key)) m.PrepareFusedMad();

  Operand base = FlatThreadIndex(b, kElementwiseThreads * kTexelsPerThread);
  Operand last = b.NewTemp().x();
  b.IAdd(last, CB0(0).x(), I(-1));
  Operand addr[kTexelsPerThread];
  Operand val[kTexelsPerThread];
  // All loads first (addresses clamped into the tensor, then moved to where
  // it starts in the view), then the math, then guarded stores: keeps
  // several loads in flight per thread.
  for (uint32_t j = 0; j < kTexelsPerThread; ++j) {
    addr[j] = b.NewTemp().x();
    b.IAdd(addr[j], base, U(j * kElementwiseThreads));
    Operand clamped = b.NewTemp().x();
    b.UMin(clamped, addr[j], last);
    b.IAdd(clamped, clamped, InBase());
    val[j] = m.Tmp();
    b.Ld(val[j], clamped, Operand::Resource(0));
  }
  for (uint32_t j = 0; j < kTexelsPerThread; ++j) EmitWords(m, key, val[j]);
  for (uint32_t j = 0; j < kTexelsPerThread; ++j) {
    Operand in = b.NewTemp().x(), at = b.NewTemp().x();
    b.ULt(in, addr[j], CB0(0).x());
    b.IfNz(in);
    b.IAdd(at, addr[j], OutBase());
    b.StoreUavTyped(Operand::Uav(0), at, val[j]);
    b.EndIf();
  }
  return Finish(b, kElementwiseThreads);
}

absl::StatusOr<KernelInfo> Strided(const KernelKey& key) {
  ShaderBuilder b(kElementwiseThreads);
  b.DclConstantBuffer(kConstantBlockRegs);
  b.DclBufferSrv(0, ReturnType::kUint);
  b.DclTypedUav(0, ReturnType::kUint);
  MathEmitter m(b, "x", CbWord(kRegInt, kArgIntZero));
  m.set_half_precision(key.data_type == DataType::kFloat16);
  if (UsesFusedMad(key)) m.PrepareFusedMad();
  const uint32_t rank = key.variant;
  const uint32_t bits = ElementBits(key.data_type);

  Operand idx = FlatThreadIndex(b, kElementwiseThreads);
  Operand in_range = b.NewTemp().x();
  b.ULt(in_range, idx, CB0(0).x());
  b.IfNz(in_range);
  Operand in_off = b.NewTemp().x(), out_off = b.NewTemp().x();
  b.Mov(in_off, CB0(0).z());
  b.Mov(out_off, CB0(0).w());
  Operand rem = b.NewTemp().x(), coord = b.NewTemp().x();
  b.Mov(rem, idx);
  for (uint32_t k = rank; k-- > 0;) {
    if (k > 0) {
      b.UDiv(rem, coord, rem, CbWord(kRegSizes, k));
    } else {
      b.Mov(coord, rem);
    }
    b.IMad(in_off, coord, CbWord(kRegInStrides, k), in_off);
    b.IMad(out_off, coord, CbWord(kRegOutStrides, k), out_off);
  }
  Operand v = b.NewTemp().x();
  if (bits == 64) {
    // 64-bit: the planner gives strides and biases in words.
    Operand hi = b.NewTemp().x(), in_hi = b.NewTemp().x(), out_hi = b.NewTemp().x();
    b.IAdd(in_off, in_off, InBase());
    b.IAdd(out_off, out_off, OutBase());
    b.IAdd(in_hi, in_off, U(1));
    b.IAdd(out_hi, out_off, U(1));
    b.Ld(v, in_off, Operand::Resource(0));
    b.Ld(hi, in_hi, Operand::Resource(0));
    EmitClip64(b, key.data_type == DataType::kInt64, v, hi);
    b.StoreUavTyped(Operand::Uav(0), out_off, v);
    b.StoreUavTyped(Operand::Uav(0), out_hi, hi);
  } else if (bits == 32) {
    b.IAdd(in_off, in_off, InBase());
    b.IAdd(out_off, out_off, OutBase());
    b.Ld(v, in_off, Operand::Resource(0));
    EmitOp(m, key, v);
    b.StoreUavTyped(Operand::Uav(0), out_off, v);
  } else {
    // Sub-word elements: word = off / per_word, bit shift = (off % per_word) * bits;
    // the base applies to the word (a texel of the R32 view).
    const uint32_t per_word = 32 / bits;
    const uint32_t log_per_word = per_word == 2 ? 1 : 2;
    const uint32_t log_bits = bits == 16 ? 4 : 3;
    auto locate = [&](Operand off, Operand word, Operand shift) {
      b.UShr(word, off, U(log_per_word));
      b.And(shift, off, U(per_word - 1));
      b.IShl(shift, shift, U(log_bits));
    };
    Operand word = b.NewTemp().x(), shift = b.NewTemp().x();
    locate(in_off, word, shift);
    b.IAdd(word, word, InBase());
    b.Ld(v, word, Operand::Resource(0));
    if (key.data_type == DataType::kFloat16) {
      b.UShr(v, v, shift);
      b.F16ToF32(v, v);
    } else if (IsSignedInt(key.data_type)) {
      b.Ibfe(v, U(bits), shift, v);
    } else {
      b.Ubfe(v, U(bits), shift, v);
    }
    EmitOp(m, key, v);
    if (key.data_type == DataType::kFloat16) b.F32ToF16(v, v);
    const uint32_t lane_mask = (1u << bits) - 1;
    locate(out_off, word, shift);
    b.IAdd(word, word, OutBase());
    Operand clear = b.NewTemp().x();
    b.And(v, v, U(lane_mask));
    b.IShl(v, v, shift);
    b.IShl(clear, U(lane_mask), shift);
    b.Not(clear, clear);
    // Neighbouring elements of one word belong to other threads: update
    // only this element's bits, atomically.
    b.AtomicAnd(Operand::Uav(0).x(), word, clear);
    b.AtomicOr(Operand::Uav(0).x(), word, v);
  }
  b.EndIf();
  return Finish(b, kElementwiseThreads);
}

}  // namespace

absl::StatusOr<KernelInfo> BuildElementwiseKernel(const KernelKey& key) {
  if (key.layout == LayoutClass::kContiguous) {
    if ((key.variant != kVariantVec4 && key.variant != kVariantWord) ||
        (Is64(key.data_type) && key.variant != kVariantVec4)) {
      return absl::InvalidArgumentError(absl::StrCat("bad variant: ", key.DebugString()));
    }
    return Contiguous(key);
  }
  if (key.variant < 1 || key.variant > kMaxRank) {
    return absl::InvalidArgumentError(absl::StrCat("bad rank: ", key.DebugString()));
  }
  return Strided(key);
}

}  // namespace dmls::gpu
