#include "engine/dxbc/shader_builder.h"

#include <algorithm>

#include "engine/dxbc/container.h"
#include "engine/dxbc/tpf.h"

namespace dmls::gpu {
namespace {

uint32_t OpcodeToken(uint32_t opcode, uint32_t length, uint32_t extra) {
  return ENCODE_D3D10_SB_OPCODE_TYPE(opcode) |
         ENCODE_D3D10_SB_TOKENIZED_INSTRUCTION_LENGTH(length) | extra;
}

uint32_t ReturnTypeToken(ReturnType rt) {
  D3D10_SB_RESOURCE_RETURN_TYPE t = D3D10_SB_RETURN_TYPE_FLOAT;
  if (rt == ReturnType::kUint) t = D3D10_SB_RETURN_TYPE_UINT;
  if (rt == ReturnType::kSint) t = D3D10_SB_RETURN_TYPE_SINT;
  return ENCODE_D3D10_SB_RESOURCE_RETURN_TYPE(t, D3D10_SB_4_COMPONENT_X) |
         ENCODE_D3D10_SB_RESOURCE_RETURN_TYPE(t, D3D10_SB_4_COMPONENT_Y) |
         ENCODE_D3D10_SB_RESOURCE_RETURN_TYPE(t, D3D10_SB_4_COMPONENT_Z) |
         ENCODE_D3D10_SB_RESOURCE_RETURN_TYPE(t, D3D10_SB_4_COMPONENT_W);
}

// Resource-declaration operands (t#, u#, g#) carry no component selection.
uint32_t DeclOperandToken(uint32_t type) {
  return ENCODE_D3D10_SB_OPERAND_NUM_COMPONENTS(D3D10_SB_OPERAND_0_COMPONENT) |
         ENCODE_D3D10_SB_OPERAND_TYPE(type) |
         ENCODE_D3D10_SB_OPERAND_INDEX_DIMENSION(D3D10_SB_OPERAND_INDEX_1D) |
         ENCODE_D3D10_SB_OPERAND_INDEX_REPRESENTATION(0, D3D10_SB_OPERAND_INDEX_IMMEDIATE32);
}

}  // namespace

ShaderBuilder::ShaderBuilder(uint32_t tx, uint32_t ty, uint32_t tz)
    : threads_{tx, ty, tz} {}

void ShaderBuilder::EmitDecl(std::vector<uint32_t> tokens) {
  tokens[0] |= ENCODE_D3D10_SB_TOKENIZED_INSTRUCTION_LENGTH(tokens.size());
  decls_.insert(decls_.end(), tokens.begin(), tokens.end());
}

void ShaderBuilder::DclConstantBuffer(uint32_t vec4_count) {
  cb_regs_ = vec4_count;
  std::vector<uint32_t> t = {ENCODE_D3D10_SB_OPCODE_TYPE(D3D10_SB_OPCODE_DCL_CONSTANT_BUFFER) |
                             ENCODE_D3D10_SB_D3D10_SB_CONSTANT_BUFFER_ACCESS_PATTERN(
                                 D3D10_SB_CONSTANT_BUFFER_IMMEDIATE_INDEXED)};
  Operand::Cb(0, vec4_count).Encode(OperandRole::kSrc, t);
  EmitDecl(std::move(t));
}

void ShaderBuilder::DclBufferSrv(uint32_t index, ReturnType rt) {
  srv_declared_.insert(index);
  EmitDecl({ENCODE_D3D10_SB_OPCODE_TYPE(D3D10_SB_OPCODE_DCL_RESOURCE) |
                ENCODE_D3D10_SB_RESOURCE_DIMENSION(D3D10_SB_RESOURCE_DIMENSION_BUFFER),
            DeclOperandToken(D3D10_SB_OPERAND_TYPE_RESOURCE), index, ReturnTypeToken(rt)});
}

void ShaderBuilder::DclTypedUav(uint32_t index, ReturnType rt) {
  uav_declared_.insert(index);
  EmitDecl({ENCODE_D3D10_SB_OPCODE_TYPE(D3D11_SB_OPCODE_DCL_UNORDERED_ACCESS_VIEW_TYPED) |
                ENCODE_D3D10_SB_RESOURCE_DIMENSION(D3D10_SB_RESOURCE_DIMENSION_BUFFER),
            DeclOperandToken(D3D11_SB_OPERAND_TYPE_UNORDERED_ACCESS_VIEW), index,
            ReturnTypeToken(rt)});
}

void ShaderBuilder::DclGroupSharedRaw(uint32_t g, uint32_t bytes) {
  g_declared_.insert(g);
  EmitDecl({ENCODE_D3D10_SB_OPCODE_TYPE(D3D11_SB_OPCODE_DCL_THREAD_GROUP_SHARED_MEMORY_RAW),
            DeclOperandToken(D3D11_SB_OPERAND_TYPE_THREAD_GROUP_SHARED_MEMORY), g, bytes});
}

Operand ShaderBuilder::NewTemp() { return Operand::Temp(next_temp_++); }

void ShaderBuilder::Note(const Operand& o) {
  switch (o.kind()) {
    case Operand::Kind::kTemp:
      temp_count_ = std::max(temp_count_, o.index0() + 1);
      next_temp_ = std::max(next_temp_, o.index0() + 1);
      break;
    case Operand::Kind::kThreadId: uses_thread_id_ = true; break;
    case Operand::Kind::kThreadGroupId: uses_group_id_ = true; break;
    case Operand::Kind::kThreadIdInGroupFlattened: uses_flat_id_ = true; break;
    case Operand::Kind::kResource: srv_used_.insert(o.index0()); break;
    case Operand::Kind::kUav: uav_used_.insert(o.index0()); break;
    case Operand::Kind::kGroupShared: g_used_.insert(o.index0()); break;
    case Operand::Kind::kConstantBuffer:
      cb_used_ = true;
      max_cb_reg_used_ = std::max(max_cb_reg_used_, o.index1());
      break;
    default: break;
  }
}

void ShaderBuilder::Emit(uint32_t opcode, std::initializer_list<Operand> dsts,
                         std::initializer_list<Operand> srcs, uint32_t extra) {
  std::vector<uint32_t> ops;
  for (const Operand& d : dsts) {
    Note(d);
    d.Encode(OperandRole::kDst, ops);
  }
  for (const Operand& s : srcs) {
    Note(s);
    s.Encode(OperandRole::kSrc, ops);
  }
  body_.push_back(OpcodeToken(opcode, static_cast<uint32_t>(1 + ops.size()), extra));
  body_.insert(body_.end(), ops.begin(), ops.end());
}

void ShaderBuilder::Mov(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_MOV, {d}, {a}); }
void ShaderBuilder::Movc(Operand d, Operand c, Operand a, Operand b) {
  Emit(D3D10_SB_OPCODE_MOVC, {d}, {c, a, b});
}
void ShaderBuilder::Add(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_ADD, {d}, {a, b}); }
void ShaderBuilder::Mul(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_MUL, {d}, {a, b}); }
void ShaderBuilder::Mad(Operand d, Operand a, Operand b, Operand c) {
  Emit(D3D10_SB_OPCODE_MAD, {d}, {a, b, c});
}
void ShaderBuilder::Div(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_DIV, {d}, {a, b}); }
void ShaderBuilder::Min(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_MIN, {d}, {a, b}); }
void ShaderBuilder::Max(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_MAX, {d}, {a, b}); }
void ShaderBuilder::Exp2(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_EXP, {d}, {a}); }
void ShaderBuilder::Log2(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_LOG, {d}, {a}); }
void ShaderBuilder::Sqrt(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_SQRT, {d}, {a}); }
void ShaderBuilder::Rsq(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_RSQ, {d}, {a}); }
void ShaderBuilder::RoundZ(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_ROUND_Z, {d}, {a}); }
void ShaderBuilder::RoundNe(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_ROUND_NE, {d}, {a}); }
void ShaderBuilder::RoundNi(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_ROUND_NI, {d}, {a}); }
void ShaderBuilder::RoundPi(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_ROUND_PI, {d}, {a}); }
void ShaderBuilder::Lt(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_LT, {d}, {a, b}); }
void ShaderBuilder::Ge(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_GE, {d}, {a, b}); }
void ShaderBuilder::Eq(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_EQ, {d}, {a, b}); }
void ShaderBuilder::Ne(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_NE, {d}, {a, b}); }
void ShaderBuilder::Ftoi(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_FTOI, {d}, {a}); }
void ShaderBuilder::Ftou(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_FTOU, {d}, {a}); }
void ShaderBuilder::Itof(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_ITOF, {d}, {a}); }
void ShaderBuilder::Utof(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_UTOF, {d}, {a}); }
void ShaderBuilder::F16ToF32(Operand d, Operand a) { Emit(D3D11_SB_OPCODE_F16TOF32, {d}, {a}); }
void ShaderBuilder::F32ToF16(Operand d, Operand a) { Emit(D3D11_SB_OPCODE_F32TOF16, {d}, {a}); }

void ShaderBuilder::IAdd(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_IADD, {d}, {a, b}); }
void ShaderBuilder::IMul(Operand d, Operand a, Operand b) {
  Emit(D3D10_SB_OPCODE_IMUL, {Operand::Null(), d}, {a, b});
}
void ShaderBuilder::IMad(Operand d, Operand a, Operand b, Operand c) {
  Emit(D3D10_SB_OPCODE_IMAD, {d}, {a, b, c});
}
void ShaderBuilder::UDiv(Operand q, Operand r, Operand a, Operand b) {
  Emit(D3D10_SB_OPCODE_UDIV, {q, r}, {a, b});
}
void ShaderBuilder::IMin(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_IMIN, {d}, {a, b}); }
void ShaderBuilder::IMax(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_IMAX, {d}, {a, b}); }
void ShaderBuilder::UMin(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_UMIN, {d}, {a, b}); }
void ShaderBuilder::UMax(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_UMAX, {d}, {a, b}); }
void ShaderBuilder::ILt(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_ILT, {d}, {a, b}); }
void ShaderBuilder::IGe(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_IGE, {d}, {a, b}); }
void ShaderBuilder::IEq(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_IEQ, {d}, {a, b}); }
void ShaderBuilder::INe(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_INE, {d}, {a, b}); }
void ShaderBuilder::ULt(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_ULT, {d}, {a, b}); }
void ShaderBuilder::UGe(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_UGE, {d}, {a, b}); }
void ShaderBuilder::INeg(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_INEG, {d}, {a}); }
void ShaderBuilder::And(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_AND, {d}, {a, b}); }
void ShaderBuilder::Or(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_OR, {d}, {a, b}); }
void ShaderBuilder::Xor(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_XOR, {d}, {a, b}); }
void ShaderBuilder::Not(Operand d, Operand a) { Emit(D3D10_SB_OPCODE_NOT, {d}, {a}); }
void ShaderBuilder::IShl(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_ISHL, {d}, {a, b}); }
void ShaderBuilder::IShr(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_ISHR, {d}, {a, b}); }
void ShaderBuilder::UShr(Operand d, Operand a, Operand b) { Emit(D3D10_SB_OPCODE_USHR, {d}, {a, b}); }
void ShaderBuilder::Ubfe(Operand d, Operand w, Operand o, Operand a) {
  Emit(D3D11_SB_OPCODE_UBFE, {d}, {w, o, a});
}
void ShaderBuilder::Ibfe(Operand d, Operand w, Operand o, Operand a) {
  Emit(D3D11_SB_OPCODE_IBFE, {d}, {w, o, a});
}
void ShaderBuilder::Bfi(Operand d, Operand w, Operand o, Operand ins, Operand base) {
  Emit(D3D11_SB_OPCODE_BFI, {d}, {w, o, ins, base});
}



void ShaderBuilder::Ld(Operand d, Operand addr, Operand res) {
  Emit(D3D10_SB_OPCODE_LD, {d}, {addr, res});
}
void ShaderBuilder::StoreUavTyped(Operand uav, Operand addr, Operand value) {
  Emit(D3D11_SB_OPCODE_STORE_UAV_TYPED, {uav}, {addr, value});
}
void ShaderBuilder::LdUavTyped(Operand d, Operand addr, Operand uav) {
  Emit(D3D11_SB_OPCODE_LD_UAV_TYPED, {d}, {addr, uav});
}
void ShaderBuilder::LdRaw(Operand d, Operand addr, Operand g) {
  Emit(D3D11_SB_OPCODE_LD_RAW, {d}, {addr, g});
}
void ShaderBuilder::StoreRaw(Operand g, Operand addr, Operand value) {
  Emit(D3D11_SB_OPCODE_STORE_RAW, {g}, {addr, value});
}
void ShaderBuilder::AtomicAnd(Operand uav, Operand addr, Operand value) {
  Emit(D3D11_SB_OPCODE_ATOMIC_AND, {uav}, {addr, value});
}
void ShaderBuilder::AtomicOr(Operand uav, Operand addr, Operand value) {
  Emit(D3D11_SB_OPCODE_ATOMIC_OR, {uav}, {addr, value});
}
void ShaderBuilder::AtomicIAdd(Operand uav, Operand addr, Operand value) {
  Emit(D3D11_SB_OPCODE_ATOMIC_IADD, {uav}, {addr, value});
}
void ShaderBuilder::ImmAtomicIAdd(Operand old, Operand uav, Operand addr, Operand value) {
  Emit(D3D11_SB_OPCODE_IMM_ATOMIC_IADD, {old, uav}, {addr, value});
}
void ShaderBuilder::ImmAtomicOr(Operand old, Operand uav, Operand addr, Operand value) {
  Emit(D3D11_SB_OPCODE_IMM_ATOMIC_OR, {old, uav}, {addr, value});
}
void ShaderBuilder::ImmAtomicExch(Operand old, Operand uav, Operand addr, Operand value) {
  Emit(D3D11_SB_OPCODE_IMM_ATOMIC_EXCH, {old, uav}, {addr, value});
}
void ShaderBuilder::SyncDevice() {
  Emit(D3D11_SB_OPCODE_SYNC, {}, {},
       ENCODE_D3D11_SB_SYNC_FLAGS(D3D11_SB_SYNC_THREADS_IN_GROUP |
                                  D3D11_SB_SYNC_THREAD_GROUP_SHARED_MEMORY |
                                  D3D11_SB_SYNC_UNORDERED_ACCESS_VIEW_MEMORY_GLOBAL));
}
void ShaderBuilder::SyncGroup() {
  Emit(D3D11_SB_OPCODE_SYNC, {}, {},
       ENCODE_D3D11_SB_SYNC_FLAGS(D3D11_SB_SYNC_THREADS_IN_GROUP |
                                  D3D11_SB_SYNC_THREAD_GROUP_SHARED_MEMORY));
}

void ShaderBuilder::IfNz(Operand c) {
  ++depth_;
  Emit(D3D10_SB_OPCODE_IF, {}, {c},
       ENCODE_D3D10_SB_INSTRUCTION_TEST_BOOLEAN(D3D10_SB_INSTRUCTION_TEST_NONZERO));
}
void ShaderBuilder::IfZ(Operand c) {
  ++depth_;
  Emit(D3D10_SB_OPCODE_IF, {}, {c},
       ENCODE_D3D10_SB_INSTRUCTION_TEST_BOOLEAN(D3D10_SB_INSTRUCTION_TEST_ZERO));
}
void ShaderBuilder::Else() { Emit(D3D10_SB_OPCODE_ELSE, {}, {}); }
void ShaderBuilder::EndIf() {
  if (--depth_ < 0) depth_error_ = true;
  Emit(D3D10_SB_OPCODE_ENDIF, {}, {});
}
void ShaderBuilder::Loop() {
  ++depth_;
  Emit(D3D10_SB_OPCODE_LOOP, {}, {});
}
void ShaderBuilder::EndLoop() {
  if (--depth_ < 0) depth_error_ = true;
  Emit(D3D10_SB_OPCODE_ENDLOOP, {}, {});
}
void ShaderBuilder::Break() { Emit(D3D10_SB_OPCODE_BREAK, {}, {}); }
void ShaderBuilder::BreakcNz(Operand c) {
  Emit(D3D10_SB_OPCODE_BREAKC, {}, {c},
       ENCODE_D3D10_SB_INSTRUCTION_TEST_BOOLEAN(D3D10_SB_INSTRUCTION_TEST_NONZERO));
}
void ShaderBuilder::BreakcZ(Operand c) {
  Emit(D3D10_SB_OPCODE_BREAKC, {}, {c},
       ENCODE_D3D10_SB_INSTRUCTION_TEST_BOOLEAN(D3D10_SB_INSTRUCTION_TEST_ZERO));
}
void ShaderBuilder::Ret() { Emit(D3D10_SB_OPCODE_RET, {}, {}); }

absl::Status ShaderBuilder::Validate() const {
  auto undeclared = [](const std::set<uint32_t>& used, const std::set<uint32_t>& declared,
                       const char* what) -> absl::Status {
    for (uint32_t i : used) {
      if (!declared.count(i)) {
        return absl::InternalError(std::string("undeclared ") + what + std::to_string(i));
      }
    }
    return absl::OkStatus();
  };
  absl::Status s = undeclared(srv_used_, srv_declared_, "t");
  if (s.ok()) s = undeclared(uav_used_, uav_declared_, "u");
  if (s.ok()) s = undeclared(g_used_, g_declared_, "g");
  if (!s.ok()) return s;
  if (cb_used_ && max_cb_reg_used_ >= cb_regs_) {
    return absl::InternalError("cb0 read beyond its declared size");
  }
  if (depth_ != 0 || depth_error_) return absl::InternalError("unbalanced if/loop nesting");
  if (temp_count_ > 4096) return absl::InternalError("more than 4096 temps");
  return absl::OkStatus();
}

std::vector<uint32_t> ShaderBuilder::Finish() const {
  std::vector<uint32_t> t;
  t.push_back(ENCODE_D3D10_SB_TOKENIZED_PROGRAM_VERSION_TOKEN(D3D11_SB_COMPUTE_SHADER, 5, 0));
  t.push_back(0);  // length, patched below
  t.push_back(ENCODE_D3D10_SB_OPCODE_TYPE(D3D10_SB_OPCODE_DCL_GLOBAL_FLAGS) |
              ENCODE_D3D10_SB_TOKENIZED_INSTRUCTION_LENGTH(1) |
              ENCODE_D3D10_SB_GLOBAL_FLAGS(global_flags_ |
                                           D3D10_SB_GLOBAL_FLAG_REFACTORING_ALLOWED));
  t.insert(t.end(), decls_.begin(), decls_.end());
  auto dcl_input = [&](Operand o, const char* mask) {
    std::vector<uint32_t> ops;
    if (o.kind() == Operand::Kind::kThreadIdInGroupFlattened) {
      // Declared as a 0-component operand, as the Microsoft compiler does.
      ops.push_back(ENCODE_D3D10_SB_OPERAND_NUM_COMPONENTS(D3D10_SB_OPERAND_0_COMPONENT) |
                    ENCODE_D3D10_SB_OPERAND_TYPE(
                        D3D11_SB_OPERAND_TYPE_INPUT_THREAD_ID_IN_GROUP_FLATTENED));
    } else {
      o.Comps(mask).Encode(OperandRole::kDst, ops);
    }
    t.push_back(OpcodeToken(D3D10_SB_OPCODE_DCL_INPUT, 1 + ops.size(), 0));
    t.insert(t.end(), ops.begin(), ops.end());
  };
  if (uses_group_id_) dcl_input(Operand::ThreadGroupId(), "xyz");
  if (uses_flat_id_) dcl_input(Operand::ThreadIdInGroupFlattened(), "x");
  if (uses_thread_id_) dcl_input(Operand::ThreadId(), "xyz");
  if (temp_count_ > 0) {
    t.push_back(OpcodeToken(D3D10_SB_OPCODE_DCL_TEMPS, 2, 0));
    t.push_back(temp_count_);
  }
  t.push_back(OpcodeToken(D3D11_SB_OPCODE_DCL_THREAD_GROUP, 4, 0));
  t.insert(t.end(), threads_, threads_ + 3);
  t.insert(t.end(), body_.begin(), body_.end());
  t.push_back(OpcodeToken(D3D10_SB_OPCODE_RET, 1, 0));
  t[1] = ENCODE_D3D10_SB_TOKENIZED_PROGRAM_LENGTH(static_cast<uint32_t>(t.size()));
  return t;
}

std::vector<uint8_t> ShaderBuilder::FinishContainer() const {
  return BuildContainer(Finish());
}

}  // namespace dmls::gpu
