// vkd3d acceptance of emitted blobs, rejection of corrupted checksums, and a
// disassembly check through VKD3D_SHADER_DEBUG=trace in a child process.
#include "engine/dxbc/shader_builder.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/dxbc/checksum.h"
#include "engine/dxbc/container.h"
#include "engine/dxbc/tpf.h"
#include "engine/dxbc/testing/vkd3d_compile.h"
#include "gtest/gtest.h"

namespace dmls::gpu {
namespace {

std::vector<uint8_t> MinimalShader() {
  ShaderBuilder b(1);
  return b.FinishContainer();
}

TEST(Vkd3dAcceptanceTest, MinimalShaderAcceptedByVkd3d) {
  const std::vector<uint8_t> blob = MinimalShader();
  EXPECT_TRUE(testing::CompileWithVkd3d(blob).ok()) << testing::CompileWithVkd3d(blob);
}

TEST(Vkd3dAcceptanceTest, CorruptedChecksumRejected) {
  std::vector<uint8_t> blob = MinimalShader();
  blob[7] ^= 0x40;
  EXPECT_FALSE(testing::CompileWithVkd3d(blob).ok());
  // A flipped body byte without restamping is rejected too; restamped it is
  // accepted again (the body change here is a thread-group size).
  std::vector<uint8_t> blob2 = MinimalShader();
  const size_t thread_x = blob2.size() - 4 * 4;  // dcl_thread_group x token
  blob2[thread_x] = 2;
  EXPECT_FALSE(testing::CompileWithVkd3d(blob2).ok());
  StampChecksum(blob2);
  EXPECT_TRUE(testing::CompileWithVkd3d(blob2).ok());
}

TEST(Vkd3dAcceptanceTest, TypicalInstructionMixAccepted) {
  ShaderBuilder b(64);
  b.DclConstantBuffer(2);
  b.DclBufferSrv(0, ReturnType::kUint);
  b.DclTypedUav(0, ReturnType::kUint);
  b.DclTypedUav(1, ReturnType::kUint);
  b.DclGroupSharedRaw(0, 256);
  Operand i = b.NewTemp().x(), v = b.NewTemp(), c = b.NewTemp().x();
  b.IMad(i, Operand::ThreadGroupId().x(), U(64), Operand::ThreadIdInGroupFlattened());
  b.Ld(v, i, Operand::Resource(0));
  b.Exp2(v, v);
  b.Log2(v, v);
  b.Min(v, v, CB0(1).x());
  b.Max(v, v, CB0(1).y().Neg());
  b.F32ToF16(v, v);
  b.F16ToF32(v, v);
  b.Ubfe(v, U(8), U(8), v);
  b.Bfi(v, U(8), U(0), v, v);
  b.Ibfe(v, U(8), U(8), v);
  b.UDiv(v.x(), v.y(), v.x(), U(3));
  b.Loop();
  b.ULt(c, i, CB0(0).x());
  b.BreakcZ(c);
  b.IAdd(i, i, U(1));
  b.EndLoop();
  Operand byte = b.NewTemp().x();
  b.IShl(byte, Operand::ThreadIdInGroupFlattened(), U(2));
  b.StoreRaw(Operand::GroupShared(0).x(), byte, v.x());
  b.SyncGroup();
  b.LdRaw(v.x(), byte, Operand::GroupShared(0));
  b.StoreUavTyped(Operand::Uav(0), i, v);
  b.AtomicAnd(Operand::Uav(1).x(), i, U(0xff00ff00u));
  b.AtomicOr(Operand::Uav(1).x(), i, U(0x00ff00ffu));
  const std::vector<uint8_t> blob = b.FinishContainer();
  EXPECT_TRUE(testing::CompileWithVkd3d(blob).ok()) << testing::CompileWithVkd3d(blob);
}

// vkd3d 1.2 implements no double-precision instruction (so the emitter has
// none either, and integer ScaleBias is exact float32 arithmetic instead).
// If this starts failing, a newer vkd3d is installed and doubles could be
// used.
TEST(Vkd3dAcceptanceTest, Vkd3dRejectsDoubleOps) {
  ShaderBuilder b(1);
  b.DclTypedUav(0, ReturnType::kUint);
  b.Mov(R(0).Comps("xy"), Operand::ImmU4(0, 0x40080000u, 0, 0));  // 3.0
  b.Emit(D3D11_SB_OPCODE_DADD, {R(1).Comps("xy")}, {R(0).Comps("xy"), R(0).Comps("xy")});
  b.StoreUavTyped(Operand::Uav(0), U(0), R(1));
  EXPECT_FALSE(testing::CompileWithVkd3d(b.FinishContainer()).ok());
}

TEST(ShaderBuilderValidateTest, CatchesWhatVkd3dWouldAbortOn) {
  {
    ShaderBuilder b(1);
    b.Ld(R(0), U(0), Operand::Resource(0));  // t0 never declared
    EXPECT_FALSE(b.Validate().ok());
    b.DclBufferSrv(0, ReturnType::kUint);
    EXPECT_TRUE(b.Validate().ok());
  }
  {
    ShaderBuilder b(1);
    b.DclConstantBuffer(2);
    b.Mov(R(0), CB0(2).x());  // beyond cb0[2]
    EXPECT_FALSE(b.Validate().ok());
  }
  {
    ShaderBuilder b(1);
    b.IfNz(R(0).x());  // no endif
    EXPECT_FALSE(b.Validate().ok());
    b.EndIf();
    EXPECT_TRUE(b.Validate().ok());
    b.EndLoop();
    EXPECT_FALSE(b.Validate().ok());
  }
  {
    ShaderBuilder b(1);
    b.StoreRaw(Operand::GroupShared(0).x(), U(0), U(1));
    EXPECT_FALSE(b.Validate().ok());
  }
}

}  // namespace
}  // namespace dmls::gpu
