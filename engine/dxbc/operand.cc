#include "engine/dxbc/operand.h"

#include <cassert>
#include <cstring>

#include "engine/dxbc/tpf.h"

namespace dmls::gpu {
namespace {

uint32_t Letter(char c) {
  switch (c) {
    case 'x': return D3D10_SB_4_COMPONENT_X;
    case 'y': return D3D10_SB_4_COMPONENT_Y;
    case 'z': return D3D10_SB_4_COMPONENT_Z;
    case 'w': return D3D10_SB_4_COMPONENT_W;
  }
  assert(false && "bad component letter");
  return 0;
}

// How an operand of each kind is encoded: its operand type, how many
// indices it takes, how many components it has (an immediate holding one
// value has one).
struct KindEncoding {
  Operand::Kind kind;
  uint32_t type;
  uint32_t index_dim;
  uint32_t components;
};

constexpr uint32_t k4Components = D3D10_SB_OPERAND_4_COMPONENT;
constexpr KindEncoding kKindEncodings[] = {
    {Operand::Kind::kTemp, D3D10_SB_OPERAND_TYPE_TEMP, 1, k4Components},
    {Operand::Kind::kConstantBuffer, D3D10_SB_OPERAND_TYPE_CONSTANT_BUFFER, 2, k4Components},
    {Operand::Kind::kResource, D3D10_SB_OPERAND_TYPE_RESOURCE, 1, k4Components},
    {Operand::Kind::kUav, D3D11_SB_OPERAND_TYPE_UNORDERED_ACCESS_VIEW, 1, k4Components},
    {Operand::Kind::kGroupShared, D3D11_SB_OPERAND_TYPE_THREAD_GROUP_SHARED_MEMORY, 1, k4Components},
    {Operand::Kind::kThreadId, D3D11_SB_OPERAND_TYPE_INPUT_THREAD_ID, 0, k4Components},
    {Operand::Kind::kThreadGroupId, D3D11_SB_OPERAND_TYPE_INPUT_THREAD_GROUP_ID, 0, k4Components},
    {Operand::Kind::kThreadIdInGroupFlattened,
     D3D11_SB_OPERAND_TYPE_INPUT_THREAD_ID_IN_GROUP_FLATTENED, 0, D3D10_SB_OPERAND_1_COMPONENT},
    {Operand::Kind::kImmediate, D3D10_SB_OPERAND_TYPE_IMMEDIATE32, 0, k4Components},
    {Operand::Kind::kNull, D3D10_SB_OPERAND_TYPE_NULL, 0, D3D10_SB_OPERAND_0_COMPONENT},
};

const KindEncoding& EncodingOf(Operand::Kind kind) {
  for (const KindEncoding& e : kKindEncodings) {
    if (e.kind == kind) return e;
  }
  assert(false && "every Kind has a row");
  return kKindEncodings[0];
}

}  // namespace

Operand Operand::Comps(const char* letters) const {
  Operand o = *this;
  assert(std::strlen(letters) >= 1 && std::strlen(letters) <= 4);
  o.comps_ = letters;
  return o;
}

Operand Operand::Neg() const {
  Operand o = *this;
  o.neg_ = !o.neg_;
  return o;
}

Operand Operand::Abs() const {
  Operand o = *this;
  o.abs_ = true;
  return o;
}

uint32_t Operand::MaskBits() const {
  uint32_t m = 0;
  for (char c : comps_) m |= 1u << Letter(c);
  return m;
}

Operand Operand::Temp(uint32_t index) { return Operand(Kind::kTemp, index); }
Operand Operand::Cb(uint32_t slot, uint32_t reg) {
  return Operand(Kind::kConstantBuffer, slot, reg);
}
Operand Operand::Resource(uint32_t index) { return Operand(Kind::kResource, index); }
Operand Operand::Uav(uint32_t index) { return Operand(Kind::kUav, index); }
Operand Operand::GroupShared(uint32_t index) { return Operand(Kind::kGroupShared, index); }
Operand Operand::ThreadId() { return Operand(Kind::kThreadId); }
Operand Operand::ThreadGroupId() { return Operand(Kind::kThreadGroupId); }
Operand Operand::ThreadIdInGroupFlattened() {
  Operand o(Kind::kThreadIdInGroupFlattened);
  o.comps_ = "x";
  return o;
}
Operand Operand::ImmF(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return ImmU(bits);
}
Operand Operand::ImmU(uint32_t v) {
  Operand o(Kind::kImmediate);
  o.imm_[0] = v;
  o.imm_count_ = 1;
  return o;
}
Operand Operand::ImmU4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  Operand o(Kind::kImmediate);
  o.imm_[0] = a;
  o.imm_[1] = b;
  o.imm_[2] = c;
  o.imm_[3] = d;
  o.imm_count_ = 4;
  return o;
}
Operand Operand::Null() { return Operand(); }

void Operand::Encode(OperandRole role, std::vector<uint32_t>& out) const {
  const KindEncoding& encoding = EncodingOf(kind_);
  const uint32_t type = encoding.type;
  const uint32_t index_dim = encoding.index_dim;
  uint32_t num_components = encoding.components;
  if (kind_ == Kind::kImmediate && imm_count_ == 1) {
    num_components = D3D10_SB_OPERAND_1_COMPONENT;
  }
  const bool extended = role == OperandRole::kSrc && (neg_ || abs_);
  uint32_t tok = ENCODE_D3D10_SB_OPERAND_NUM_COMPONENTS(num_components) |
                 ENCODE_D3D10_SB_OPERAND_TYPE(type) |
                 ENCODE_D3D10_SB_OPERAND_INDEX_DIMENSION(index_dim) |
                 ENCODE_D3D10_SB_OPERAND_EXTENDED(extended);
  for (uint32_t d = 0; d < index_dim; ++d) {
    tok |= ENCODE_D3D10_SB_OPERAND_INDEX_REPRESENTATION(
        d, D3D10_SB_OPERAND_INDEX_IMMEDIATE32);
  }
  if (num_components == D3D10_SB_OPERAND_4_COMPONENT && kind_ != Kind::kImmediate) {
    if (role == OperandRole::kDst) {
      tok |= ENCODE_D3D10_SB_OPERAND_4_COMPONENT_SELECTION_MODE(
                 D3D10_SB_OPERAND_4_COMPONENT_MASK_MODE) |
             ENCODE_D3D10_SB_OPERAND_4_COMPONENT_MASK(MaskBits()
                                                       << D3D10_SB_OPERAND_4_COMPONENT_MASK_SHIFT);
    } else {
      uint32_t s[4];
      for (size_t i = 0; i < 4; ++i) {
        s[i] = Letter(comps_[i < comps_.size() ? i : comps_.size() - 1]);
      }
      tok |= ENCODE_D3D10_SB_OPERAND_4_COMPONENT_SELECTION_MODE(
                 D3D10_SB_OPERAND_4_COMPONENT_SWIZZLE_MODE) |
             ENCODE_D3D10_SB_OPERAND_4_COMPONENT_SWIZZLE(s[0], s[1], s[2], s[3]);
    }
  }
  out.push_back(tok);
  if (extended) {
    uint32_t mod = D3D10_SB_OPERAND_MODIFIER_NONE;
    if (neg_ && abs_) {
      mod = D3D10_SB_OPERAND_MODIFIER_ABSNEG;
    } else if (neg_) {
      mod = D3D10_SB_OPERAND_MODIFIER_NEG;
    } else {
      mod = D3D10_SB_OPERAND_MODIFIER_ABS;
    }
    out.push_back(ENCODE_D3D10_SB_EXTENDED_OPERAND_TYPE(D3D10_SB_EXTENDED_OPERAND_MODIFIER) |
                  ENCODE_D3D10_SB_EXTENDED_OPERAND_MODIFIER(mod));
  }
  for (uint32_t d = 0; d < index_dim; ++d) out.push_back(idx_[d]);
  if (kind_ == Kind::kImmediate) {
    for (uint32_t i = 0; i < imm_count_; ++i) out.push_back(imm_[i]);
  }
}

std::string Operand::ToString() const {
  std::string s;
  switch (kind_) {
    case Kind::kTemp: s = "r" + std::to_string(idx_[0]); break;
    case Kind::kConstantBuffer:
      s = "cb" + std::to_string(idx_[0]) + "[" + std::to_string(idx_[1]) + "]";
      break;
    case Kind::kResource: s = "t" + std::to_string(idx_[0]); break;
    case Kind::kUav: s = "u" + std::to_string(idx_[0]); break;
    case Kind::kGroupShared: s = "g" + std::to_string(idx_[0]); break;
    case Kind::kThreadId: s = "vThreadID"; break;
    case Kind::kThreadGroupId: s = "vThreadGroupID"; break;
    case Kind::kThreadIdInGroupFlattened: return "vThreadIDInGroupFlattened";
    case Kind::kImmediate: {
      s = "l(";
      for (uint32_t i = 0; i < imm_count_; ++i) {
        if (i) s += ", ";
        s += std::to_string(imm_[i]);
      }
      return s + ")";
    }
    case Kind::kNull: return "null";
  }
  s += "." + comps_;
  if (abs_) s = "|" + s + "|";
  if (neg_) s = "-" + s;
  return s;
}

}  // namespace dmls::gpu
