#include "bench/load/payload.h"

#include <cstdlib>
#include <string>

#include "client/npy.h"
#include "gtest/gtest.h"

namespace dmls::load {
namespace {

TEST(BuildPayload, GeneratedCelu) {
  PayloadOptions o;
  o.op = "celu";
  o.bytes = 64 * 1024;
  absl::StatusOr<Payload> p = BuildPayload(o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->request.input().size(), 64u * 1024);
  EXPECT_EQ(p->request_bytes, 64u * 1024);
  EXPECT_EQ(p->output_bytes, 64u * 1024);
  const auto& celu = p->request.operator_().celu();
  EXPECT_EQ(celu.input().sizes_size(), 1);
  EXPECT_EQ(celu.input().sizes(0), 16384u);
  EXPECT_EQ(celu.output().total_tensor_size_in_bytes(), 64u * 1024);
  EXPECT_EQ(p->description, "celu DATA_TYPE_FLOAT32 [16384]");
}

TEST(BuildPayload, GeneratedFloat16AndOtherOps) {
  PayloadOptions o;
  o.dtype = "float16";
  o.bytes = 1024;
  for (const char* op : {"threshold", "relu", "sigmoid", "clip", "gelu"}) {
    o.op = op;
    absl::StatusOr<Payload> p = BuildPayload(o);
    ASSERT_TRUE(p.ok()) << op << ": " << p.status();
    EXPECT_EQ(p->request.input().size(), 1024u) << op;
    EXPECT_EQ(p->output_bytes, 1024u) << op;
  }
}

TEST(BuildPayload, GeneratedMvn1Is2D) {
  PayloadOptions o;
  o.op = "mvn1";
  o.bytes = 4 << 20;
  o.mvn_cols = 1024;
  absl::StatusOr<Payload> p = BuildPayload(o);
  ASSERT_TRUE(p.ok()) << p.status();
  const auto& mvn1 = p->request.operator_().mvn1();
  ASSERT_EQ(mvn1.input().sizes_size(), 2);
  EXPECT_EQ(mvn1.input().sizes(0), 1024u);
  EXPECT_EQ(mvn1.input().sizes(1), 1024u);
  ASSERT_EQ(mvn1.axes_size(), 1);
  EXPECT_EQ(mvn1.axes(0), 1u);
}

TEST(BuildPayload, RejectsBadGeneratedPayloads) {
  PayloadOptions o;
  o.op = "no_such_op";
  EXPECT_FALSE(BuildPayload(o).ok());
  o.op = "celu";
  o.bytes = 1023;  // not whole floats
  EXPECT_FALSE(BuildPayload(o).ok());
  o.op = "mvn1";
  o.bytes = 4 * 1500;
  o.mvn_cols = 1024;  // 1500 elements are not whole rows of 1024
  EXPECT_FALSE(BuildPayload(o).ok());
}

std::string SourceDir() {
  const char* dir = std::getenv("DMLS_SOURCE_DIR");
  return dir != nullptr ? dir : DMLS_SOURCE_DIR_DEFAULT;
}

TEST(BuildPayload, OperatorJsonWithNpyInput) {
  client::NpyArray array;
  array.descr = "<f4";
  array.shape = {4, 8};
  array.data.assign(4 * 8 * 4, '\0');
  const std::string path = testing::TempDir() + "/payload_test_x.npy";
  ASSERT_TRUE(client::WriteNpyFile(path, array).ok());
  PayloadOptions o;
  o.op_json = SourceDir() + "/client/examples/celu.json";
  o.input_npy = path;
  absl::StatusOr<Payload> p = BuildPayload(o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->request.input().size(), 128u);
  EXPECT_EQ(p->output_bytes, 128u);
  EXPECT_EQ(p->description, "celu DATA_TYPE_FLOAT32 [4,8]");
}

TEST(BuildPayload, CompleteOperatorJsonGetsRandomTensors) {
  PayloadOptions o;
  o.op_json = SourceDir() + "/client/examples/mvn1_fused_celu.json";
  absl::StatusOr<Payload> p = BuildPayload(o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->request.input().size(), 480u);
  EXPECT_EQ(p->request.scale().size(), 12u);
  EXPECT_EQ(p->request.bias().size(), 12u);
  EXPECT_EQ(p->request_bytes, 504u);
  EXPECT_EQ(p->output_bytes, 480u);
}

TEST(BuildPayload, IncompleteOperatorJsonWithoutInputFails) {
  PayloadOptions o;
  o.op_json = SourceDir() + "/client/examples/celu.json";  // no sizes
  EXPECT_FALSE(BuildPayload(o).ok());
  o.op_json = SourceDir() + "/no/such/file.json";
  EXPECT_EQ(BuildPayload(o).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dmls::load
