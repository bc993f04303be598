// ShaderBuilder: emits a SM 5.0 compute shader token stream instruction by
// instruction with typed operand helpers, tracks what must be declared
// (temps, thread-id inputs) and assembles declarations + body into the
// program tokens and, via BuildContainer, a checksummed DXBC blob.
// vkd3d-shader aborts on undeclared registers, so inputs and temps are
// declared automatically from use; resources are declared explicitly.
// Not thread-safe; one builder per kernel being generated.
#ifndef DMLSERVE_ENGINE_DXBC_SHADER_BUILDER_H_
#define DMLSERVE_ENGINE_DXBC_SHADER_BUILDER_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "engine/dxbc/operand.h"

namespace dmls::gpu {

// Component return type of a typed resource declaration.
enum class ReturnType : uint8_t { kFloat, kUint, kSint };

class ShaderBuilder {
 public:
  ShaderBuilder(uint32_t threads_x, uint32_t threads_y = 1, uint32_t threads_z = 1);

  // ---- declarations ----
  void DclConstantBuffer(uint32_t vec4_count);  // cb0[vec4_count]
  void DclBufferSrv(uint32_t t, ReturnType rt);  // Buffer<T4> t#
  void DclTypedUav(uint32_t u, ReturnType rt);   // RWBuffer<T4> u#
  void DclGroupSharedRaw(uint32_t g, uint32_t bytes);

  // A fresh temp register (never reused; drivers allocate registers anyway).
  Operand NewTemp();
  // Except after RewindTemps(mark): NewTemp then hands out again the temps
  // allocated since TempMark() returned `mark`. For a block emitted many
  // times (once per element) whose temps are all dead after it, its results
  // living in older temps; it keeps such kernels under DXBC's 4,096 temps.
  uint32_t TempMark() const { return next_temp_; }
  void RewindTemps(uint32_t mark) { next_temp_ = mark; }

  // ---- generic emission ----
  // dsts are encoded with masks, srcs with swizzles. `extra` ORs opcode-token
  // control bits (saturate, test boolean, sync flags).
  void Emit(uint32_t opcode, std::initializer_list<Operand> dsts,
            std::initializer_list<Operand> srcs, uint32_t extra = 0);

  // ---- float ----
  void Mov(Operand d, Operand a);
  void Movc(Operand d, Operand cond, Operand a, Operand b);
  void Add(Operand d, Operand a, Operand b);
  void Mul(Operand d, Operand a, Operand b);
  void Mad(Operand d, Operand a, Operand b, Operand c);
  void Div(Operand d, Operand a, Operand b);
  void Min(Operand d, Operand a, Operand b);
  void Max(Operand d, Operand a, Operand b);
  void Exp2(Operand d, Operand a);  // DXBC exp is base 2
  void Log2(Operand d, Operand a);  // DXBC log is base 2
  void Sqrt(Operand d, Operand a);
  void Rsq(Operand d, Operand a);
  void RoundZ(Operand d, Operand a);
  void RoundNe(Operand d, Operand a);
  void RoundNi(Operand d, Operand a);  // floor
  void RoundPi(Operand d, Operand a);  // ceil
  void Lt(Operand d, Operand a, Operand b);
  void Ge(Operand d, Operand a, Operand b);
  void Eq(Operand d, Operand a, Operand b);
  void Ne(Operand d, Operand a, Operand b);
  void Ftoi(Operand d, Operand a);
  void Ftou(Operand d, Operand a);
  void Itof(Operand d, Operand a);
  void Utof(Operand d, Operand a);
  void F16ToF32(Operand d, Operand a);
  void F32ToF16(Operand d, Operand a);
  // ---- integer ----
  void IAdd(Operand d, Operand a, Operand b);
  void IMul(Operand d_lo, Operand a, Operand b);
  void IMad(Operand d, Operand a, Operand b, Operand c);
  void UDiv(Operand quot, Operand rem, Operand a, Operand b);
  void IMin(Operand d, Operand a, Operand b);
  void IMax(Operand d, Operand a, Operand b);
  void UMin(Operand d, Operand a, Operand b);
  void UMax(Operand d, Operand a, Operand b);
  void ILt(Operand d, Operand a, Operand b);
  void IGe(Operand d, Operand a, Operand b);
  void IEq(Operand d, Operand a, Operand b);
  void INe(Operand d, Operand a, Operand b);
  void ULt(Operand d, Operand a, Operand b);
  void UGe(Operand d, Operand a, Operand b);
  void INeg(Operand d, Operand a);
  void And(Operand d, Operand a, Operand b);
  void Or(Operand d, Operand a, Operand b);
  void Xor(Operand d, Operand a, Operand b);
  void Not(Operand d, Operand a);
  void IShl(Operand d, Operand a, Operand b);
  void IShr(Operand d, Operand a, Operand b);
  void UShr(Operand d, Operand a, Operand b);
  void Ubfe(Operand d, Operand width, Operand offset, Operand a);
  void Ibfe(Operand d, Operand width, Operand offset, Operand a);
  void Bfi(Operand d, Operand width, Operand offset, Operand insert, Operand base);
  // ---- memory ----
  void Ld(Operand d, Operand address, Operand resource);  // typed buffer load
  void StoreUavTyped(Operand uav, Operand address, Operand value);
  // Typed UAV load; use only on R32_FLOAT views (vkd3d 1.2 declares every
  // typed UAV as R32f in SPIR-V, DESIGN.md §3).
  void LdUavTyped(Operand d, Operand address, Operand uav);
  void LdRaw(Operand d, Operand byte_address, Operand g);
  void StoreRaw(Operand g, Operand byte_address, Operand value);
  void AtomicAnd(Operand uav, Operand address, Operand value);
  void AtomicOr(Operand uav, Operand address, Operand value);
  void AtomicIAdd(Operand uav, Operand address, Operand value);
  // Atomics that return the word's previous value in `old` (a temp's .x).
  void ImmAtomicIAdd(Operand old, Operand uav, Operand address, Operand value);
  void ImmAtomicOr(Operand old, Operand uav, Operand address, Operand value);
  void ImmAtomicExch(Operand old, Operand uav, Operand address, Operand value);
  void SyncGroup();  // sync_g_t: group barrier + group-shared memory
  // sync_uglobal_g_t: group barrier that also orders every UAV access of
  // the group at device scope (what one workgroup wrote before it is
  // visible to other workgroups that synchronise after reading a flag it
  // set afterwards). A group barrier: every thread of the group must reach
  // it (vkd3d 1.2 makes any UAV sync flag a workgroup control barrier).
  void SyncDevice();
  // ---- control flow ----
  void IfNz(Operand cond);
  void IfZ(Operand cond);
  void Else();
  void EndIf();
  void Loop();
  void EndLoop();
  void Break();
  void BreakcNz(Operand cond);
  void BreakcZ(Operand cond);
  void Ret();

  // Checks what vkd3d-shader would abort on rather than reject: every
  // t#/u#/g# operand declared, cb0 reads inside the declared size, balanced
  // if/loop nesting, temps within limits.
  absl::Status Validate() const;

  // Program tokens (version, length, declarations, body, final ret).
  std::vector<uint32_t> Finish() const;
  // Finish() wrapped in a checksummed DXBC container.
  std::vector<uint8_t> FinishContainer() const;

 private:
  void Note(const Operand& o);
  void EmitDecl(std::vector<uint32_t> tokens);

  uint32_t threads_[3];
  uint32_t global_flags_ = 0;
  std::vector<uint32_t> decls_;  // resources, cb, tgsm (in emission order)
  std::vector<uint32_t> body_;
  uint32_t temp_count_ = 0;
  uint32_t next_temp_ = 0;
  bool uses_thread_id_ = false;
  bool uses_group_id_ = false;
  bool uses_flat_id_ = false;
  // Declared and used registers, for Validate().
  uint32_t cb_regs_ = 0;
  std::set<uint32_t> srv_declared_, uav_declared_, g_declared_;
  std::set<uint32_t> srv_used_, uav_used_, g_used_;
  uint32_t max_cb_reg_used_ = 0;
  bool cb_used_ = false;
  int depth_ = 0;       // open if/loop blocks
  bool depth_error_ = false;
};

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_DXBC_SHADER_BUILDER_H_
