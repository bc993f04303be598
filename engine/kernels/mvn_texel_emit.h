// MvnTexelEmitter: emits the 16-byte texel access of the MVN kernels with
// kMvnVariantVec4 (kernel_abi.h): which texels of a group a thread owns,
// their addresses and loads, the widening of their 4 FLOAT32 or 8 FLOAT16
// elements to float32 and the packing of results back into one texel.
// Holds a reference to the builder; single-threaded like ShaderBuilder.
#ifndef DMLSERVE_ENGINE_KERNELS_MVN_TEXEL_EMIT_H_
#define DMLSERVE_ENGINE_KERNELS_MVN_TEXEL_EMIT_H_

#include <cstdint>
#include <vector>

#include "engine/core/types.h"
#include "engine/dxbc/operand.h"
#include "engine/dxbc/shader_builder.h"

namespace dmls::gpu {

class MvnTexelEmitter {
 public:
  // `type`: FLOAT32 or FLOAT16.
  MvnTexelEmitter(ShaderBuilder& b, DataType type)
      : b_(b), type_(type), shift_(type == DataType::kFloat16 ? 3 : 2) {}

  // Elements per texel: 4 (FLOAT32) or 8 (FLOAT16).
  uint32_t lanes() const { return 1u << shift_; }
  // t = texel `first` + k * threads + tid of a group of `n` elements (a
  // multiple of lanes()), clamped to 0 past its last texel; `ok` says
  // whether it was in range. `first`: the chunk's first texel.
  void Index(Operand first, Operand tid, uint32_t k, uint32_t threads, Operand n, Operand t,
             Operand ok);
  // The address, in its view, of texel t of the group whose first element
  // is at element offset `base` (a multiple of lanes()) of a tensor that
  // starts `view_base` texels into the view.
  Operand Address(Operand base, Operand t, Operand view_base);
  // The texel at `address` of SRV t#`res` (all four words).
  Operand Load(uint32_t res, Operand address);
  // dst (.x) = element `lane` of `texel` as float32.
  void Unpack(Operand dst, Operand texel, uint32_t lane);
  // The same for a lane computed at run time (< lanes()).
  void UnpackLane(Operand dst, Operand texel, Operand lane);
  // log2(lanes()).
  uint32_t shift() const { return shift_; }
  // The texel holding lanes() float32 values (.x temps), converted to the
  // type (FLOAT16: even elements in the low halves).
  Operand Pack(const std::vector<Operand>& values);
  // dst = the binary16 word of float32 `lo` (low half) and `hi` (high half);
  // also the word stores of the FLOAT16 kernels without texels.
  void PackHalves(Operand dst, Operand lo, Operand hi);

 private:
  Operand T() { return b_.NewTemp().x(); }
  ShaderBuilder& b_;
  DataType type_;
  uint32_t shift_;  // log2(lanes())
};

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_KERNELS_MVN_TEXEL_EMIT_H_
