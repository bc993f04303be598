// Every kernel the planner can emit is compiled by vkd3d-shader here
// (vkd3d aborts the process on a malformed shader, so this must never be
// discovered in production), plus disassembly checks of representative
// kernels through VKD3D_SHADER_DEBUG=trace.
#include "engine/kernels/kernels.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/dxbc/testing/vkd3d_compile.h"
#include "engine/kernels/mvn_kernel.h"
#include "gtest/gtest.h"

namespace dmls::gpu {
namespace {

TEST(KernelsTest, EveryKernelCompilesWithVkd3d) {
  const std::vector<KernelKey> keys = AllKernelKeys();
  ASSERT_GT(keys.size(), 3000u);
  // Two threads: the machine has two cores and the suite must stay fast.
  std::vector<std::string> failures[2];
  auto work = [&](int part) {
    for (size_t i = part; i < keys.size(); i += 2) {
      absl::StatusOr<KernelInfo> k = BuildKernel(keys[i]);
      if (!k.ok()) {
        failures[part].push_back(keys[i].DebugString() + ": " + k.status().ToString());
        continue;
      }
      if (k->threads_per_group == 0) failures[part].push_back(keys[i].DebugString() + ": 0 threads");
      absl::Status s = testing::CompileWithVkd3d(k->dxbc);
      if (!s.ok()) failures[part].push_back(keys[i].DebugString() + ": " + s.ToString());
    }
  };
  std::thread t1(work, 1);
  work(0);
  t1.join();
  for (const auto& f : failures) {
    for (const std::string& s : f) ADD_FAILURE() << s;
  }
}

TEST(KernelsTest, RejectsKeysOutsideTheSet) {
  KernelKey k;
  k.op = OperatorType::kActivationCelu;
  k.data_type = DataType::kInt8;  // CELU is float-only
  EXPECT_FALSE(BuildKernel(k).ok());
  k.data_type = DataType::kFloat32;
  k.scale_bias = true;  // only THRESHOLD/CLIP take ScaleBias
  EXPECT_FALSE(BuildKernel(k).ok());
  k.scale_bias = false;
  k.variant = 7;  // contiguous variants are 0 and 1
  EXPECT_FALSE(BuildKernel(k).ok());
  k.op = OperatorType::kActivationSoftmax;
  k.variant = 0;
  EXPECT_FALSE(BuildKernel(k).ok());
}

// Runs the trace tool on `key`'s blob and returns vkd3d's trace output.
std::string Disassemble(const KernelKey& key) {
  absl::StatusOr<KernelInfo> k = BuildKernel(key);
  EXPECT_TRUE(k.ok()) << k.status();
  if (!k.ok()) return "";
  const std::string path = ::testing::TempDir() + "/dxbc_disasm_" +
                           std::to_string(key.Hash()) + ".dxbc";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(k->dxbc.data()), k->dxbc.size());
  }
  const std::string cmd = std::string("VKD3D_SHADER_DEBUG=trace ") + DMLS_VKD3D_TRACE_TOOL +
                          " " + path + " 2>&1";
  std::string text;
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  if (!p) return "";
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) text.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << text.substr(0, 2000);
  std::remove(path.c_str());
  return text;
}

// The key of `op`'s kernel for `type`, its other fields at their defaults
// (element-wise, contiguous).
KernelKey Key(OperatorType op, DataType type = DataType::kFloat32) {
  KernelKey k;
  k.op = op;
  k.data_type = type;
  return k;
}

// The key of an MVN1 kernel `stage` on strided views.
KernelKey StridedMvn1(KernelStage stage, uint8_t variant, DataType type = DataType::kFloat32) {
  KernelKey k = Key(OperatorType::kMeanVarianceNormalization1, type);
  k.stage = stage;
  k.layout = LayoutClass::kStrided;
  k.variant = variant;
  return k;
}

void ExpectContains(const std::string& text, const std::vector<std::string>& words) {
  for (const std::string& w : words) {
    EXPECT_NE(text.find(w), std::string::npos) << "missing '" << w << "'";
  }
}

TEST(DisassemblyTest, CeluFloat32Contiguous) {
  const std::string t = Disassemble(Key(OperatorType::kActivationCelu));
  ExpectContains(t, {"cs_5_0", "dcl_thread_group 128, 1, 1", "vThreadIDInGroupFlattened",
                     "ld ", "div ", "exp ", "mad ", "movc ", "min ", "max ",
                     "store_uav_typed u0"});
}

TEST(DisassemblyTest, Float16Packs) {
  ExpectContains(Disassemble(Key(OperatorType::kActivationSigmoid, DataType::kFloat16)),
                 {"f16tof32 ", "f32tof16 ", "ushr ", "ishl ", "or "});
}

TEST(DisassemblyTest, Int8StridedUsesAtomics) {
  KernelKey k = Key(OperatorType::kElementWiseClip, DataType::kInt8);
  k.layout = LayoutClass::kStrided;
  k.variant = 3;
  ExpectContains(Disassemble(k), {"udiv ", "imad ", "ibfe ", "imax ", "imin ",
                                  "atomic_and u0", "atomic_or u0"});
}

TEST(DisassemblyTest, IntScaleBiasExactFloatPath) {
  KernelKey k = Key(OperatorType::kElementWiseThreshold, DataType::kUint32);
  k.scale_bias = true;
  ExpectContains(Disassemble(k), {"ushr ", "utof ", "mad ", "round_z ", "ftou ", "umax ", "umin "});
}

TEST(DisassemblyTest, MvnApplyReducesInGroupSharedMemory) {
  KernelKey k = StridedMvn1(KernelStage::kMvnApply, 2);
  k.has_scale = true;
  k.fused = OperatorType::kActivationGelu;
  ExpectContains(Disassemble(k), {"dcl_tgsm_raw g0", "store_raw g0.xyz", "ld_raw ",
                                  "sync_g_t", "ld_uav_typed ", "loop", "break", "endloop",
                                  "sqrt ", "udiv ", "t1", "exp "});
}

// Every kernel declares the whole 256-byte block and adds its slots' view
// bases (kernel_abi.h ViewBases: c14.xyzw = t0, t1, t2, u0; c15.x = u1).
TEST(DisassemblyTest, KernelsReadTheirViewBases) {
  const std::string contiguous = Disassemble(Key(OperatorType::kActivationCelu));
  ExpectContains(contiguous, {"cb0[16]", "cb0[14].x", "cb0[14].w"});
  KernelKey k = StridedMvn1(KernelStage::kMvnApply, 1);
  k.has_scale = true;
  k.has_bias = true;
  const std::string apply = Disassemble(k);
  ExpectContains(apply, {"cb0[16]", "cb0[14].x", "cb0[14].y", "cb0[14].z", "cb0[14].w",
                         "cb0[15].x"});
}

// kMvnVariantVec4, FLOAT16 small row: 32 threads of 32 elements
// (MvnEmitter::HalvesThreads), so four texel loads per thread and the
// group's first texel (its reference element); whole-texel stores, no
// atomics.
TEST(DisassemblyTest, MvnTexelRowLoadsAndStoresWholeTexels) {
  const KernelKey key = StridedMvn1(KernelStage::kMvnRow, 1 | kMvnVariantSmallRow | kMvnVariantVec4,
                                    DataType::kFloat16);
  ASSERT_EQ(MvnKernelThreads(key), kMvnSmallRowThreads / 2);
  const std::string t = Disassemble(key);
  auto count = [&](const std::string& w) {
    size_t n = 0;
    for (size_t at = t.find(w); at != std::string::npos; at = t.find(w, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("dcl_thread_group 32, 1, 1"), 1u);
  EXPECT_EQ(count(" ld r"), 5u);
  EXPECT_EQ(count(", t0.xyzw"), 5u);
  EXPECT_EQ(count("store_uav_typed u0.xyzw"), 4u);
  EXPECT_EQ(count("atomic_"), 0u);
}

TEST(DisassemblyTest, Int64ClipComparesWordPairs) {
  ExpectContains(Disassemble(Key(OperatorType::kElementWiseClip, DataType::kInt64)),
                 {"ilt ", "ieq ", "ult ", "movc "});
}

}  // namespace
}  // namespace dmls::gpu
