#include "server/rpc/message_codec.h"

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/testing/test_requests.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;
using ::testing::HasSubstr;
using ::testing::StartsWith;

grpc::ByteBuffer Buffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string Flat(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  std::string out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

// The reason ParseRequest gives for `bytes` as an ExecuteRequest.
std::string Reason(const std::string& bytes) {
  v1::ExecuteRequest request;
  absl::Status s = ParseRequest(Buffer(bytes), &request);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  return std::string(s.message());
}

TEST(MessageCodec, RoundTripsWellFormedMessages) {
  v1::ExecuteRequest sent = testing::Mvn1Request(42);
  grpc::ByteBuffer response;
  ASSERT_TRUE(SerializeResponse(sent, &response).ok());
  EXPECT_EQ(Flat(response), sent.SerializeAsString());
  v1::ExecuteRequest received;
  ASSERT_TRUE(ParseRequest(response, &received).ok());
  EXPECT_EQ(received.SerializeAsString(), sent.SerializeAsString());
  // Still readable afterwards: parsing does not consume the caller's bytes.
  EXPECT_EQ(Flat(response), sent.SerializeAsString());
  // An empty message is a valid one (every field at its default).
  ASSERT_TRUE(ParseRequest(Buffer(""), &received).ok());
  EXPECT_EQ(received.request_id(), 0u);
  EXPECT_EQ(ParseRequest(grpc::ByteBuffer(), &received).code(),
            absl::StatusCode::kInvalidArgument);
}

// A large output goes out in its own slice, the very bytes the engine
// made (no copy), and the wire bytes parse as the message; a small one is
// serialized as SerializeResponse does.
TEST(MessageCodec, ExecuteResponseOutputIsSentWithoutACopy) {
  v1::ExecuteResponse sent;
  sent.set_request_id(7);
  sent.set_engine("d3d12");
  sent.set_server_time_us(123);
  sent.set_output(std::string(100000, 'x'));
  sent.mutable_output()->at(99999) = 'y';
  const v1::ExecuteResponse expected = sent;
  const char* const engine_bytes = sent.output().data();

  grpc::ByteBuffer out;
  ASSERT_TRUE(SerializeExecuteResponse(sent, &out).ok());
  EXPECT_TRUE(sent.output().empty());
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(out.Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(reinterpret_cast<const char*>(slices[1].begin()), engine_bytes);
  EXPECT_EQ(slices[1].size(), 100000u);
  v1::ExecuteResponse received;
  ASSERT_TRUE(received.ParseFromString(Flat(out)));
  EXPECT_EQ(received.SerializeAsString(), expected.SerializeAsString());

  v1::ExecuteResponse small = expected;
  small.set_output(std::string(kInlineOutputBytes - 1, 'z'));
  const std::string small_wire = small.SerializeAsString();
  ASSERT_TRUE(SerializeExecuteResponse(small, &out).ok());
  EXPECT_EQ(Flat(out), small_wire);
}

TEST(MessageCodec, GarbageIsInvalidArgumentWithTheReason) {
  EXPECT_EQ(Reason("\xff\xff\xff\xff\xff\xff"),
            "the request is not a valid dmlserve.v1.ExecuteRequest (6 bytes): "
            "malformed field tag at byte 0");
  EXPECT_THAT(Reason(std::string("\x00", 1)),
              HasSubstr("): field number 0 at byte 0"));
  EXPECT_THAT(Reason("\x0f"),
              HasSubstr("): field request_id: invalid wire type 7 at byte 0"));
  EXPECT_THAT(Reason("\x1a\x64\x01\x02"),  // operator, 100 bytes announced
              HasSubstr("): field operator: length 100 runs past the end "
                        "(2 bytes left) at byte 0"));
  EXPECT_THAT(Reason("\x08\x80\x80"),  // request_id, varint cut short
              HasSubstr("field request_id: truncated or overlong varint"));
  EXPECT_THAT(Reason("\x0c"),  // end-group tag of field 1 outside a group
              HasSubstr("unexpected end-group tag of field 1 at byte 0"));
  EXPECT_THAT(Reason("\x0b\x08\x01"),  // group of field 1 never closed
              HasSubstr("field request_id: group is not closed at byte 3"));
  // Deep inside: operator.mvn1.axes (packed) with a varint cut short.
  v1::ExecuteRequest request = testing::Mvn1Request(1);
  request.clear_input();
  request.clear_scale();
  request.clear_bias();
  request.mutable_operator_()->mutable_mvn1()->clear_axes();
  std::string bytes = request.SerializeAsString();
  // Append axes = [0x80 ...] to mvn1 by hand: field 6, wire type 2, 1 byte.
  v1::MeanVarianceNormalization1 mvn1 = request.operator_().mvn1();
  std::string mvn1_bytes = mvn1.SerializeAsString() + "\x32\x01\x80";
  std::string op_bytes = "\x9a\x07";  // field 115 (mvn1), wire type 2
  op_bytes += static_cast<char>(mvn1_bytes.size());
  op_bytes += mvn1_bytes;
  ASSERT_LT(mvn1_bytes.size(), 128u);
  std::string req_bytes = "\x1a";  // field 3 (operator), wire type 2
  req_bytes += static_cast<char>(op_bytes.size());
  req_bytes += op_bytes;
  ASSERT_LT(op_bytes.size(), 128u);
  EXPECT_THAT(Reason(req_bytes),
              HasSubstr("field operator.mvn1.axes: truncated or overlong "
                        "packed varint at byte "));
}

TEST(MessageCodec, ValidateRequestsNameTheirType) {
  v1::ValidateRequest request;
  absl::Status s = ParseRequest(Buffer("garbage!"), &request);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("the request is not a valid dmlserve.v1."
                         "ValidateRequest (8 bytes): "));
}

// The scanner finds an error exactly when protobuf's parser rejects the
// bytes: mutated requests (bit flips, cuts, inserted bytes) of both kinds.
TEST(MessageCodec, FindsAnErrorExactlyWhenProtobufRejects) {
  std::mt19937 rng(9);
  const std::string seeds[] = {
      testing::Mvn1Request(3).SerializeAsString(),
      testing::ReluRequest(77).SerializeAsString(),
  };
  int rejected = 0, accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string bytes = seeds[iter % 2];
    // Keep the payloads short so that the structure gets the mutations.
    if (bytes.size() > 300) bytes.resize(100 + rng() % 200);
    const int mutations = 1 + static_cast<int>(rng() % 3);
    for (int m = 0; m < mutations && !bytes.empty(); ++m) {
      const size_t at = rng() % bytes.size();
      switch (rng() % 4) {
        case 0:
          bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8)));
          break;
        case 1:
          bytes[at] = static_cast<char>(rng());
          break;
        case 2:
          bytes.insert(at, 1, static_cast<char>(rng()));
          break;
        default:
          bytes.resize(at);
          break;
      }
    }
    v1::ExecuteRequest parsed;
    const bool ok = parsed.ParseFromString(bytes);
    const auto error =
        FindWireFormatError(bytes, *v1::ExecuteRequest::descriptor());
    ASSERT_EQ(!ok, error.has_value())
        << "iteration " << iter << ": " << error.value_or("no error found");
    (ok ? accepted : rejected) += 1;
  }
  EXPECT_GT(rejected, 2000);
  EXPECT_GT(accepted, 2000);
}

TEST(MessageCodec, FiveByteTagsKeepTheirLow32BitsAsProtobufDoes) {
  // A length-delimited field whose tag varint carries bits above 32
  // (found by tests/fuzz/fuzz_request): protobuf keeps the low 32 bits and
  // skips it as an unknown field.
  const std::string bytes("\xda\xe2\xe2\xe2\x1d\x00", 6);
  v1::ChainRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_EQ(FindWireFormatError(bytes, *v1::ChainRequest::descriptor()), std::nullopt);
}

// `bytes` cut into slices at random points (1-byte slices and cuts inside
// tags and lengths included), as gRPC hands over a message received in
// several frames.
grpc::ByteBuffer Sliced(const std::string& bytes, std::mt19937& rng) {
  std::vector<grpc::Slice> slices;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t n = std::min<size_t>(bytes.size() - at, 1 + rng() % (rng() % 2 ? 3 : 4000));
    slices.emplace_back(bytes.data() + at, n);
    at += n;
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

// Whether every range of `p` lies inside one of `buffer`'s slices (the
// payload borrows the received memory instead of copying it). Ranges of
// up to 32 bytes are not checked: gRPC keeps slices that short inside the
// slice object itself (inlined), so their bytes move with every copy of it.
bool Borrows(const Payload& p, const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return false;
  for (std::string_view r : p.ranges()) {
    if (r.size() <= 32) continue;
    bool inside = false;
    for (const grpc::Slice& s : slices) {
      const char* b = reinterpret_cast<const char*>(s.begin());
      inside |= r.data() >= b && r.data() + r.size() <= b + s.size();
    }
    if (!inside) return false;
  }
  return true;
}

constexpr std::array<int, 3> kPayloadFields = {5, 6, 7};  // input, scale, bias

TEST(MessageCodec, PayloadsInManySlicesRoundTripExactlyWithoutCopies) {
  std::mt19937 rng(25);
  for (int iter = 0; iter < 300; ++iter) {
    v1::ExecuteRequest sent = testing::Mvn1Request(iter);
    std::string input(rng() % 3 == 0 ? 0 : rng() % 20000, '\0');
    for (char& c : input) c = static_cast<char>(rng());
    sent.set_input(input);
    sent.set_scale(std::string(rng() % 40, 's'));
    sent.set_bias(iter % 2 ? std::string(rng() % 300, 'b') : std::string());
    const std::string wire = sent.SerializeAsString();
    grpc::ByteBuffer buffer = Sliced(wire, rng);
    v1::ExecuteRequest received;
    std::array<Payload, 3> payloads;
    ASSERT_TRUE(ParseRequestWithPayloads(buffer, &received, kPayloadFields, &payloads).ok());
    EXPECT_TRUE(payloads[0] == sent.input()) << iter;
    EXPECT_TRUE(payloads[1] == sent.scale()) << iter;
    EXPECT_TRUE(payloads[2] == sent.bias()) << iter;
    for (const Payload& p : payloads) EXPECT_TRUE(Borrows(p, buffer)) << iter;
    std::string copied(payloads[0].size(), '?');
    payloads[0].CopyTo(copied.data());
    EXPECT_EQ(copied, input);
    // Everything else arrives as protobuf parses it.
    v1::ExecuteRequest rest = sent;
    rest.clear_input();
    rest.clear_scale();
    rest.clear_bias();
    EXPECT_EQ(received.SerializeAsString(), rest.SerializeAsString()) << iter;
  }
}

TEST(MessageCodec, PayloadsOutliveTheReceivedBuffer) {
  v1::ExecuteRequest sent = testing::ReluRequest(7);
  sent.set_input(std::string(5000, 'i'));
  std::array<Payload, 3> payloads;
  {
    std::mt19937 rng(1);
    grpc::ByteBuffer buffer = Sliced(sent.SerializeAsString(), rng);
    v1::ExecuteRequest received;
    ASSERT_TRUE(ParseRequestWithPayloads(buffer, &received, kPayloadFields, &payloads).ok());
  }
  EXPECT_TRUE(payloads[0] == std::string(5000, 'i'));
}

// Mutated and sliced messages: the same verdict and reason as ParseRequest,
// and on success the payloads protobuf finds, the last occurrence winning.
TEST(MessageCodec, PayloadParsingAgreesWithParseRequest) {
  std::mt19937 rng(26);
  int rejected = 0, accepted = 0;
  for (int iter = 0; iter < 5000; ++iter) {
    v1::ExecuteRequest seed = iter % 2 ? testing::Mvn1Request(3) : testing::ReluRequest(77);
    seed.set_input(std::string(1 + rng() % 60, 'x'));
    std::string bytes = seed.SerializeAsString();
    if (iter % 5 == 0) bytes += v1::ExecuteRequest(seed).SerializeAsString();  // repeated fields
    const int mutations = iter % 7 == 0 ? 0 : 1 + static_cast<int>(rng() % 3);
    for (int m = 0; m < mutations && !bytes.empty(); ++m) {
      const size_t at = rng() % bytes.size();
      if (rng() % 3 == 0) {
        bytes.resize(at);
      } else {
        bytes[at] = static_cast<char>(rng());
      }
    }
    grpc::ByteBuffer buffer = Sliced(bytes, rng);
    v1::ExecuteRequest whole, split;
    std::array<Payload, 3> payloads;
    const absl::Status expected = ParseRequest(buffer, &whole);
    const absl::Status got = ParseRequestWithPayloads(buffer, &split, kPayloadFields, &payloads);
    ASSERT_EQ(got, expected) << iter;
    if (!got.ok()) {
      ++rejected;
      continue;
    }
    ++accepted;
    EXPECT_TRUE(payloads[0] == whole.input()) << iter;
    EXPECT_TRUE(payloads[1] == whole.scale()) << iter;
    EXPECT_TRUE(payloads[2] == whole.bias()) << iter;
    whole.clear_input();
    whole.clear_scale();
    whole.clear_bias();
    EXPECT_EQ(split.SerializeAsString(), whole.SerializeAsString()) << iter;
  }
  EXPECT_GT(rejected, 500);
  EXPECT_GT(accepted, 500);
}

TEST(MessageCodec, SerializeWithBytesFieldParsesAsTheMessage) {
  dmlserve::v1::TensorChunk fields;
  fields.set_slot(dmlserve::v1::TENSOR_SLOT_OUTPUT);
  fields.set_offset(uint64_t{1} << 40);
  const std::string data(300, 'z');  // a two-byte length
  grpc::ByteBuffer out;
  SerializeWithBytesField(fields, dmlserve::v1::TensorChunk::kDataFieldNumber,
                          grpc::Slice(data), &out);
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(out.Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 2u);
  std::string wire;
  for (const grpc::Slice& s : slices) {
    wire.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  dmlserve::v1::TensorChunk parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.slot(), dmlserve::v1::TENSOR_SLOT_OUTPUT);
  EXPECT_EQ(parsed.offset(), uint64_t{1} << 40);
  EXPECT_EQ(parsed.data(), data);
  fields.set_data(data);
  EXPECT_EQ(wire, fields.SerializeAsString());
}

TEST(MessageCodec, SerializeWithNestedBytesFieldIsTheOrdinarySerialization) {
  // Data lengths whose varints (and the chunk's length) take 1, 2 and 3
  // bytes, and an empty field.
  for (size_t n : {size_t{0}, size_t{5}, size_t{120}, size_t{300}, size_t{20000}}) {
    dmlserve::v1::ChunkedResponse outer;
    outer.set_request_id(77);
    dmlserve::v1::TensorChunk inner;
    inner.set_slot(dmlserve::v1::TENSOR_SLOT_OUTPUT);
    inner.set_offset(uint64_t{1} << 33);
    const std::string data(n, 'q');
    grpc::ByteBuffer out;
    SerializeWithNestedBytesField(outer, dmlserve::v1::ChunkedResponse::kChunkFieldNumber, inner,
                                  dmlserve::v1::TensorChunk::kDataFieldNumber,
                                  grpc::Slice(data), &out);
    std::vector<grpc::Slice> slices;
    ASSERT_TRUE(out.Dump(&slices).ok());
    if (n >= 300) {  // gRPC merges small inlined slices into the one before
      ASSERT_EQ(slices.size(), 2u);
      EXPECT_EQ(slices[1].size(), n);  // the data as its own slice
    }
    std::string wire;
    for (const grpc::Slice& s : slices) {
      wire.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    dmlserve::v1::ChunkedResponse whole = outer;
    *whole.mutable_chunk() = inner;
    whole.mutable_chunk()->set_data(data);
    // Byte for byte, except that an empty data field is written (proto3
    // leaves it out; it parses the same).
    if (n != 0) {
      EXPECT_EQ(wire, whole.SerializeAsString()) << n;
    }
    dmlserve::v1::ChunkedResponse parsed;
    ASSERT_TRUE(parsed.ParseFromString(wire)) << n;
    EXPECT_EQ(parsed.request_id(), 77u);
    EXPECT_EQ(parsed.chunk().offset(), uint64_t{1} << 33);
    EXPECT_EQ(parsed.chunk().data(), data);
    EXPECT_EQ(parsed.SerializeAsString(), whole.SerializeAsString()) << n;
  }
}

}  // namespace
}  // namespace dmls::server
