#include "engine/kernels/kernel_key.h"

#include <unordered_set>

#include "engine/kernels/kernels.h"
#include "gtest/gtest.h"

namespace dmls::gpu {
namespace {

TEST(KernelKeyTest, EqualityHashAndDebugString) {
  KernelKey a;
  a.op = OperatorType::kActivationCelu;
  KernelKey b = a;
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.Hash(), b.Hash());
  b.variant = 1;
  EXPECT_NE(a, b);
  EXPECT_NE(a.Hash(), b.Hash());
  b = a;
  b.data_type = DataType::kFloat16;
  EXPECT_NE(a, b);
  EXPECT_NE(a.DebugString(), b.DebugString());
  EXPECT_NE(a.DebugString().find("FLOAT32"), std::string::npos);
}

TEST(KernelKeyTest, AllKeysDistinct) {
  const std::vector<KernelKey> keys = AllKernelKeys();
  std::unordered_set<KernelKey, KernelKeyHash> set(keys.begin(), keys.end());
  EXPECT_EQ(set.size(), keys.size());
  std::unordered_set<uint64_t> hashes;
  for (const KernelKey& k : keys) hashes.insert(k.Hash());
  EXPECT_EQ(hashes.size(), keys.size());
}

// CoalesceKey (engine/plan/coalesce.cc) compares keys by Packed(), so two
// keys that differ must pack differently: every kernel key, and every
// operator and data type the kernels can name, fits its field.
TEST(KernelKeyTest, PackedIsInjective) {
  const std::vector<KernelKey> keys = AllKernelKeys();
  std::unordered_set<uint64_t> packed;
  for (const KernelKey& k : keys) packed.insert(k.Packed());
  EXPECT_EQ(packed.size(), keys.size());
  for (const KernelKey& k : keys) {
    EXPECT_LT(static_cast<uint32_t>(k.op), 256u) << k.DebugString();
    EXPECT_LT(static_cast<uint32_t>(k.fused), 256u) << k.DebugString();
    EXPECT_LT(static_cast<uint32_t>(k.data_type), 16u) << k.DebugString();
  }
}

}  // namespace
}  // namespace dmls::gpu
