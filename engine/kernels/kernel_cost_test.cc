// The static cost of the element-wise kernels, from their DXBC: the number
// of instructions per element and the packing conversions. Guards the
// FLOAT16 throughput work: IDENTITY must stay a copy, and FLOAT16 math must
// stay cheaper per element than FLOAT32 (half-precision mode of
// MathEmitter), since a texel holds 8 halves and the H100 ran GELU/TANH
// FLOAT16 ALU-bound at 31%/50% of the copy bandwidth.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/kernels/mvn_kernel.h"
#include "engine/dxbc/tpf.h"
#include "gtest/gtest.h"

namespace dmls::gpu {
namespace {

// Opcode -> count over the SHEX chunk of a DXBC container.
std::map<uint32_t, int> OpcodeHistogram(const std::vector<uint8_t>& dxbc) {
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, dxbc.data() + at, 4);
    return v;
  };
  std::map<uint32_t, int> h;
  const uint32_t chunks = u32(28);
  for (uint32_t c = 0; c < chunks; ++c) {
    const uint32_t at = u32(32 + 4 * c);
    if (std::memcmp(dxbc.data() + at, "SHEX", 4) != 0) continue;
    const size_t begin = at + 8;
    const uint32_t dwords = u32(begin + 4);
    for (size_t i = 2; i < dwords;) {
      const uint32_t tok = u32(begin + 4 * i);
      const uint32_t op = DECODE_D3D10_SB_OPCODE_TYPE(tok);
      uint32_t len = DECODE_D3D10_SB_TOKENIZED_INSTRUCTION_LENGTH(tok);
      if (op == D3D10_SB_OPCODE_CUSTOMDATA) len = u32(begin + 4 * (i + 1));
      ++h[op];
      i += len == 0 ? 1 : len;
    }
  }
  return h;
}

int Instructions(const std::map<uint32_t, int>& h) {
  int n = 0;
  for (const auto& [op, count] : h) n += count;
  return n;
}

std::map<uint32_t, int> Histogram(OperatorType op, DataType t) {
  KernelKey k;
  k.op = op;
  k.data_type = t;
  absl::StatusOr<KernelInfo> info = BuildKernel(k);
  EXPECT_TRUE(info.ok()) << info.status();
  return info.ok() ? OpcodeHistogram(info->dxbc) : std::map<uint32_t, int>{};
}

TEST(KernelCostTest, Float16IdentityIsACopy) {
  const auto h16 = Histogram(OperatorType::kActivationIdentity, DataType::kFloat16);
  const auto h32 = Histogram(OperatorType::kActivationIdentity, DataType::kFloat32);
  EXPECT_EQ(h16.count(D3D11_SB_OPCODE_F16TOF32), 0u);
  EXPECT_EQ(h16.count(D3D11_SB_OPCODE_F32TOF16), 0u);
  EXPECT_EQ(Instructions(h16), Instructions(h32));
}

TEST(KernelCostTest, Float16MathIsCheaperPerElementThanFloat32) {
  // Instructions per element: a FLOAT16 texel holds 8 elements, a FLOAT32
  // one 4. Printed for the record (docs/ACCURACY.md). Before the
  // half-precision mode the ratios were 0.89 (GELU), 1.03 (TANH), 1.11
  // (SIGMOID), 1.01 (CELU), 1.04 (ELU).
  struct Case {
    OperatorType op;
    const char* name;
    double max_ratio;  // FLOAT16 per element / FLOAT32 per element
  };
  const Case cases[] = {
      {OperatorType::kActivationGelu, "gelu", 0.6},
      {OperatorType::kActivationTanh, "tanh", 0.75},
      {OperatorType::kActivationSigmoid, "sigmoid", 0.8},
      {OperatorType::kActivationCelu, "celu", 0.9},
      {OperatorType::kActivationElu, "elu", 0.8},
  };
  for (const Case& c : cases) {
    const int n16 = Instructions(Histogram(c.op, DataType::kFloat16));
    const int n32 = Instructions(Histogram(c.op, DataType::kFloat32));
    const double ratio = (n16 / 8.0) / (n32 / 4.0);
    // 4 texels per thread, one vec4 instruction per texel: n32*4 lane
    // operations for 16 floats, n16*4 for 32 halves.
    std::printf("%-8s FLOAT16 %5d instructions (%.1f lane ops per element), FLOAT32 %5d "
                "(%.1f), ratio %.2f\n", c.name, n16, n16 / 8.0, n32, n32 / 4.0, ratio);
    EXPECT_LT(ratio, c.max_ratio) << c.name;
  }
}

TEST(KernelCostTest, Float16MvnStatisticsLoadWithoutABranchPerPair) {
  // kMvnPartial without texels (512 x 262,143: N odd): FLOAT16 loads both
  // words of each pair of elements unconditionally, one load per element
  // as FLOAT32 does, and no branch per pair; with a branch per pair
  // (LoadPair) its statistics pass ran at 304 us against 237 on the H200
  // (docs/perf/h200-mvn16-2026-11-28). A FLOAT16 thread has twice the
  // elements of a FLOAT32 one (MvnEmitter::HalvesThreads).
  auto key = [](DataType t) {
    KernelKey k;
    k.stage = KernelStage::kMvnPartial;
    k.op = OperatorType::kMeanVarianceNormalization1;
    k.data_type = t;
    k.layout = LayoutClass::kStrided;
    k.variant = 1;  // inner rank 1, word loads
    return k;
  };
  auto histogram = [](const KernelKey& k) {
    absl::StatusOr<KernelInfo> info = BuildKernel(k);
    EXPECT_TRUE(info.ok()) << info.status();
    return info.ok() ? OpcodeHistogram(info->dxbc) : std::map<uint32_t, int>{};
  };
  auto h16 = histogram(key(DataType::kFloat16));
  auto h32 = histogram(key(DataType::kFloat32));
  const int e16 = static_cast<int>(kMvnChunk / MvnKernelThreads(key(DataType::kFloat16)));
  const int e32 = static_cast<int>(kMvnChunk / MvnKernelThreads(key(DataType::kFloat32)));
  EXPECT_EQ(e16, 2 * e32);
  // Each element's word, and the group's first element.
  EXPECT_EQ(h16[D3D10_SB_OPCODE_LD], e16 + 1);
  EXPECT_EQ(h32[D3D10_SB_OPCODE_LD], e32 + 1);
  // The branches are the reduction's: a branch per pair would be e16 / 2
  // more.
  EXPECT_LT(h16[D3D10_SB_OPCODE_IF], e16 / 2);
  EXPECT_LT(h32[D3D10_SB_OPCODE_IF], e32 / 2);
}

TEST(KernelCostTest, Float16SpanStatisticsMaskEachTexelOnce) {
  // kMvnVariantTexelSpan (FLOAT16, N odd): a lane's mask is one AND with
  // its texel's mask of the group's lanes, computed once per texel,
  // instead of an element index and two compares per element. The long
  // span (kMvnVariantLongSpan) has twice the elements of a thread at about
  // twice the instructions, and the same reduction.
  auto key = [](uint8_t bits) {
    KernelKey k;
    k.stage = KernelStage::kMvnPartial;
    k.op = OperatorType::kMeanVarianceNormalization1;
    k.data_type = DataType::kFloat16;
    k.layout = LayoutClass::kStrided;
    k.variant = static_cast<uint8_t>(1 | bits);
    return k;
  };
  auto count = [&](uint8_t bits) {
    absl::StatusOr<KernelInfo> info = BuildKernel(key(bits));
    EXPECT_TRUE(info.ok()) << info.status();
    return info.ok() ? OpcodeHistogram(info->dxbc) : std::map<uint32_t, int>{};
  };
  auto span = count(kMvnVariantTexelSpan);
  auto long_span = count(kMvnVariantTexelSpan | kMvnVariantLongSpan);
  auto words = count(0);
  std::printf("FLOAT16 kMvnPartial instructions: words %d, span %d, long span %d\n",
              Instructions(words), Instructions(span), Instructions(long_span));
  // Per element, the span's compares are gone: the long span has as many
  // unsigned compares as the span (the reduction's) plus one for each more
  // texel of a thread, where the word path has one per element
  // (ElementIndex).
  const int span_texels =
      static_cast<int>(kMvnChunk / MvnKernelThreads(key(kMvnVariantTexelSpan)) / 8);
  const int long_texels = static_cast<int>(
      kMvnLongSpanChunk / MvnKernelThreads(key(kMvnVariantTexelSpan | kMvnVariantLongSpan)) / 8);
  EXPECT_EQ(long_span[D3D10_SB_OPCODE_ULT] + long_span[D3D10_SB_OPCODE_UGE],
            span[D3D10_SB_OPCODE_ULT] + span[D3D10_SB_OPCODE_UGE] + long_texels - span_texels);
  EXPECT_GE(words[D3D10_SB_OPCODE_ULT], static_cast<int>(kMvnElementsPerThread));
  // Texel loads (the group's first element is one more load in both).
  EXPECT_EQ(long_span[D3D10_SB_OPCODE_LD] - 1, 2 * (span[D3D10_SB_OPCODE_LD] - 1));
  EXPECT_LT(Instructions(long_span), 2 * Instructions(span));
  // The span kernels carry two paths behind a uniform branch (chunks
  // inside the group: no masks, constant reduction weights; the group's
  // ends: masked); together they stay under two word kernels, where a
  // thread runs one of them.
  EXPECT_LT(Instructions(span), 2 * Instructions(words));
}

}  // namespace
}  // namespace dmls::gpu
