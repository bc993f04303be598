#include "bench/bench_ops.h"

#include "gtest/gtest.h"

namespace dmls::bench {
namespace {

TEST(BenchMakeOp, ElementWiseIsOneRow) {
  absl::StatusOr<OperatorDesc> op = MakeOp("celu", 4096, 512, DataType::kFloat32);
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(op->type, static_cast<uint32_t>(OperatorType::kActivationCelu));
  EXPECT_EQ(op->input->sizes, (std::vector<uint64_t>{1, 1, 1, 4096}));
  EXPECT_EQ(op->input->total_tensor_size_in_bytes, 4096u * 4);
}

TEST(BenchMakeOp, MvnRowsAndAffine) {
  absl::StatusOr<OperatorDesc> op = MakeOp("mvn1_affine", 4096, 16, DataType::kFloat16);
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(op->input->sizes, (std::vector<uint64_t>{1, 1, 16, 256}));
  ASSERT_TRUE(op->scale.has_value());
  EXPECT_EQ(op->scale->sizes, (std::vector<uint64_t>{1, 1, 1, 256}));
  EXPECT_EQ(op->normalize_variance.value_or(9), 1u);
  op = MakeOp("mvn1_nv0", 4096, 16, DataType::kFloat32);
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(op->normalize_variance.value_or(9), 0u);
  EXPECT_FALSE(op->scale.has_value());
}

TEST(BenchMakeOp, Rejects) {
  absl::StatusOr<OperatorDesc> op = MakeOp("mvn1", 1000, 3, DataType::kFloat32);
  ASSERT_FALSE(op.ok());
  EXPECT_EQ(op.status().message(), "size 1000 is not a multiple of --mvn_rows");
  op = MakeOp("softsign", 1000, 3, DataType::kFloat32);
  ASSERT_FALSE(op.ok());
  EXPECT_EQ(op.status().message(), "unknown op 'softsign'");
}

}  // namespace
}  // namespace dmls::bench
