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

}  // namespace
}  // namespace dmls::gpu
