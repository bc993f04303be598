// Encoder unit tests: token values as the Microsoft compiler writes them.
#include "engine/dxbc/operand.h"

#include <vector>

#include "engine/dxbc/shader_builder.h"
#include "gtest/gtest.h"

namespace dmls::gpu {
namespace {

std::vector<uint32_t> Enc(const Operand& o, OperandRole role) {
  std::vector<uint32_t> t;
  o.Encode(role, t);
  return t;
}

TEST(OperandTest, TempMaskAndSwizzle) {
  EXPECT_EQ(Enc(R(0), OperandRole::kDst), (std::vector<uint32_t>{0x001000f2, 0}));
  EXPECT_EQ(Enc(R(1), OperandRole::kSrc), (std::vector<uint32_t>{0x00100e46, 1}));
  EXPECT_EQ(Enc(R(2).x(), OperandRole::kDst), (std::vector<uint32_t>{0x00100012, 2}));
  EXPECT_EQ(Enc(R(2).x(), OperandRole::kSrc), (std::vector<uint32_t>{0x00100006, 2}));
  EXPECT_EQ(Enc(R(3).Comps("xy"), OperandRole::kDst), (std::vector<uint32_t>{0x00100032, 3}));
  EXPECT_EQ(Enc(R(0).w(), OperandRole::kSrc), (std::vector<uint32_t>{0x00100ff6, 0}));
}

TEST(OperandTest, ConstantBufferAndImmediates) {
  EXPECT_EQ(Enc(CB0(1).y(), OperandRole::kSrc), (std::vector<uint32_t>{0x00208556, 0, 1}));
  EXPECT_EQ(Enc(F(1.0f), OperandRole::kSrc), (std::vector<uint32_t>{0x00004001, 0x3f800000}));
  EXPECT_EQ(Enc(Operand::ImmU4(1, 2, 3, 4), OperandRole::kSrc),
            (std::vector<uint32_t>{0x00004002, 1, 2, 3, 4}));
}

TEST(OperandTest, Modifiers) {
  // -r0.x and |r0.x|: extended operand token with the modifier.
  EXPECT_EQ(Enc(R(0).x().Neg(), OperandRole::kSrc),
            (std::vector<uint32_t>{0x80100006, 0x00000041, 0}));
  EXPECT_EQ(Enc(R(0).x().Abs(), OperandRole::kSrc),
            (std::vector<uint32_t>{0x80100006, 0x00000081, 0}));
  EXPECT_EQ(Enc(R(0).x().Abs().Neg(), OperandRole::kSrc),
            (std::vector<uint32_t>{0x80100006, 0x000000c1, 0}));
}

TEST(OperandTest, SystemValuesAndResources) {
  EXPECT_EQ(Enc(Operand::ThreadIdInGroupFlattened(), OperandRole::kSrc),
            (std::vector<uint32_t>{0x00024001}));
  EXPECT_EQ(Enc(Operand::ThreadGroupId().y(), OperandRole::kSrc),
            (std::vector<uint32_t>{0x00021556}));
  EXPECT_EQ(Enc(Operand::ThreadId().x(), OperandRole::kSrc), (std::vector<uint32_t>{0x00020006}));
  EXPECT_EQ(Enc(Operand::Resource(0), OperandRole::kSrc), (std::vector<uint32_t>{0x00107e46, 0}));
  EXPECT_EQ(Enc(Operand::Uav(1), OperandRole::kDst), (std::vector<uint32_t>{0x0011e0f2, 1}));
  EXPECT_EQ(Enc(Operand::GroupShared(0).x(), OperandRole::kDst),
            (std::vector<uint32_t>{0x0011f012, 0}));
}

TEST(ShaderBuilderTokensTest, InstructionsAndDeclarations) {
  ShaderBuilder b(64);
  b.Mov(R(0), R(1));
  b.Add(R(0).x(), R(0).x(), F(1.0f));
  b.IfNz(R(0).x());
  b.EndIf();
  b.SyncGroup();
  const std::vector<uint32_t> t = b.Finish();
  const std::vector<uint32_t> expected = {
      0x00050050, 0,            // cs_5_0, length patched below
      0x0100086a,               // dcl_globalFlags refactoringAllowed
      0x02000068, 2,            // dcl_temps 2
      0x0400009b, 64, 1, 1,     // dcl_thread_group 64, 1, 1
      0x05000036, 0x001000f2, 0, 0x00100e46, 1,                // mov r0.xyzw, r1.xyzw
      0x07000000, 0x00100012, 0, 0x00100006, 0, 0x00004001, 0x3f800000,  // add r0.x, r0.x, l(1.0)
      0x0304001f, 0x00100006, 0,  // if_nz r0.x
      0x01000015,                 // endif
      0x010018be,                 // sync_g_t
      0x0100003e,                 // ret
  };
  ASSERT_EQ(t.size(), expected.size());
  EXPECT_EQ(t[1], t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    if (i == 1) continue;
    EXPECT_EQ(t[i], expected[i]) << "token " << i;
  }
}

TEST(ShaderBuilderTokensTest, ResourceDeclarations) {
  ShaderBuilder b(1);
  b.DclConstantBuffer(10);
  b.DclBufferSrv(0, ReturnType::kFloat);
  b.DclTypedUav(1, ReturnType::kUint);
  b.DclGroupSharedRaw(0, 1024);
  b.Mov(R(0).x(), Operand::ThreadIdInGroupFlattened());
  const std::vector<uint32_t> t = b.Finish();
  const std::vector<uint32_t> expected = {
      0x00050050, 0, 0x0100086a,
      0x04000059, 0x00208e46, 0, 10,             // dcl_constantbuffer cb0[10], immediateIndexed
      0x04000858, 0x00107000, 0, 0x00005555,     // dcl_resource_buffer (float,float,float,float) t0
      0x0400089c, 0x0011e000, 1, 0x00004444,     // dcl_uav_typed_buffer (uint,uint,uint,uint) u1
      0x0400009f, 0x0011f000, 0, 1024,           // dcl_tgsm_raw g0, 1024
      0x0200005f, 0x00024000,                    // dcl_input vThreadIDInGroupFlattened
      0x02000068, 1,                             // dcl_temps 1
      0x0400009b, 1, 1, 1,
      0x04000036, 0x00100012, 0, 0x00024001,     // mov r0.x, vThreadIDInGroupFlattened
      0x0100003e,
  };
  ASSERT_EQ(t.size(), expected.size());
  for (size_t i = 0; i < t.size(); ++i) {
    if (i == 1) continue;
    EXPECT_EQ(t[i], expected[i]) << "token " << i;
  }
}

}  // namespace
}  // namespace dmls::gpu
