// Operand: one SM 5.0 operand (register, immediate, resource) as a value,
// encoded into tokens with DirectX-Headers' D3D10_SB_*/D3D11_SB_* macros.
// The same Operand can serve as destination (component mask) or source
// (swizzle): `Comps("xy")` stores the letters and Encode() picks mask or
// swizzle by role. Plain value type; thread-compatible.
#ifndef DMLSERVE_ENGINE_DXBC_OPERAND_H_
#define DMLSERVE_ENGINE_DXBC_OPERAND_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dmls::gpu {

enum class OperandRole { kDst, kSrc };

class Operand {
 public:
  enum class Kind : uint8_t {
    kTemp,
    kConstantBuffer,
    kResource,        // t#
    kUav,             // u#
    kGroupShared,     // g#
    kThreadId,        // vThreadID
    kThreadGroupId,   // vThreadGroupID
    kThreadIdInGroupFlattened,  // vThreadIDInGroupFlattened (1 component)
    kImmediate,
    kNull,
  };

  Operand() = default;  // the null operand (Null())

  Kind kind() const { return kind_; }
  uint32_t index0() const { return idx_[0]; }
  uint32_t index1() const { return idx_[1]; }

  // Component letters, e.g. "x", "xy", "xyzw", "wzyx" (source) or "xz"
  // (destination mask: letters in order, no repeats).
  Operand Comps(const char* letters) const;
  Operand x() const { return Comps("x"); }
  Operand y() const { return Comps("y"); }
  Operand z() const { return Comps("z"); }
  Operand w() const { return Comps("w"); }
  Operand Neg() const;  // source modifier -x
  Operand Abs() const;  // source modifier |x|

  // Appends the operand tokens; role decides mask vs swizzle.
  void Encode(OperandRole role, std::vector<uint32_t>& out) const;
  // Disassembly-like text for debugging ("r3.xy", "cb0[2].z", "l(1.0)").
  std::string ToString() const;

  // Factories.
  static Operand Temp(uint32_t index);
  static Operand Cb(uint32_t slot, uint32_t reg);
  static Operand Resource(uint32_t index);
  static Operand Uav(uint32_t index);
  static Operand GroupShared(uint32_t index);
  static Operand ThreadId();
  static Operand ThreadGroupId();
  static Operand ThreadIdInGroupFlattened();
  static Operand ImmF(float v);
  static Operand ImmU(uint32_t v);
  static Operand ImmI(int32_t v) { return ImmU(static_cast<uint32_t>(v)); }
  static Operand ImmU4(uint32_t a, uint32_t b, uint32_t c, uint32_t d);
  static Operand Null();

  // Number of 4-component sources the dst mask covers (for debugging).
  uint32_t MaskBits() const;

 private:
  explicit Operand(Kind kind, uint32_t index0 = 0, uint32_t index1 = 0)
      : kind_(kind), idx_{index0, index1} {}

  Kind kind_ = Kind::kNull;
  uint32_t idx_[2] = {0, 0};
  std::string comps_ = "xyzw";
  uint32_t imm_[4] = {0, 0, 0, 0};
  uint32_t imm_count_ = 0;
  bool neg_ = false;
  bool abs_ = false;
};

// Shorthands used by kernel generators.
inline Operand R(uint32_t i) { return Operand::Temp(i); }
inline Operand CB0(uint32_t reg) { return Operand::Cb(0, reg); }
inline Operand F(float v) { return Operand::ImmF(v); }
inline Operand U(uint32_t v) { return Operand::ImmU(v); }
inline Operand I(int32_t v) { return Operand::ImmI(v); }

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_DXBC_OPERAND_H_
