// Request parsing and response serialization for the methods DmlServiceImpl
// registers with raw (grpc::ByteBuffer) handlers. gRPC's generated callback
// handlers answer a request they cannot parse with UNIMPLEMENTED and an
// empty message, which clients and proxies read as "no such method" (a
// stream just sees its reads end). Parsing here instead gives
// INVALID_ARGUMENT with the reason: the first wire-format error, its field
// path and its byte offset. Serialization is what gRPC's own protobuf codec
// does (grpc::SerializationTraits), so well-formed traffic is unchanged.
// Stateless functions: thread-safe.
#ifndef DMLSERVE_SERVER_RPC_MESSAGE_CODEC_H_
#define DMLSERVE_SERVER_RPC_MESSAGE_CODEC_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "dmlserve/v1/dmlserve.pb.h"
#include "engine/core/payload.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/status.h"

namespace dmls::server {

// Parses `bytes` into `message` (cleared first). INVALID_ARGUMENT "the
// request is not a valid dmlserve.v1.ExecuteRequest (N bytes): REASON"
// when they are not a serialized message of its type.
absl::Status ParseRequest(const grpc::ByteBuffer& bytes,
                          google::protobuf::Message* message);

// ExecuteRequest's payload fields (input, scale, bias): the unary and
// streamed Execute leave them in gRPC's receive slices
// (ParseRequestWithPayloads) and hand them to the engine from there.
inline constexpr std::array<int, 3> kExecutePayloadFields = {
    dmlserve::v1::ExecuteRequest::kInputFieldNumber,
    dmlserve::v1::ExecuteRequest::kScaleFieldNumber,
    dmlserve::v1::ExecuteRequest::kBiasFieldNumber};

// ParseRequest for messages with large top-level bytes fields: the fields
// numbered `payload_fields` (0: none) are not parsed into `message` but
// located in `bytes`' slices and returned, in that order, as Payloads that
// borrow the received memory (kept alive by a share of the slices: no
// payload byte is copied). Every other field is parsed by protobuf as
// usual. Errors are ParseRequest's, byte offsets included (a message that
// does not parse is handed to ParseRequest for the reason), and protobuf's
// rules hold (the last occurrence of a field wins; a payload field sent
// with another wire type is an unknown field).
absl::Status ParseRequestWithPayloads(const grpc::ByteBuffer& bytes,
                                      google::protobuf::Message* message,
                                      const std::array<int, 3>& payload_fields,
                                      std::array<Payload, 3>* payloads);

// Serializes `message` into `out` (replacing its contents); INTERNAL in
// the unexpected case that protobuf cannot.
grpc::Status SerializeResponse(const google::protobuf::Message& message,
                               grpc::ByteBuffer* out);

// Serializes `fields` followed by the length-delimited field `field_number`
// holding `bytes` (a bytes field left empty in `fields`) into `out`: one
// small slice for the fields, tag and length, then `bytes` as it is (no
// copy); the wire bytes parse as the message (protobuf takes fields in any
// order).
void SerializeWithBytesField(const google::protobuf::Message& fields, int field_number,
                             grpc::Slice bytes, grpc::ByteBuffer* out);
// The same with the bytes field inside a message field: `outer` (its field
// `outer_field` left unset) followed by that field holding `inner` and, as
// its field `inner_field`, `bytes` (e.g. ChunkedResponse.chunk.data).
void SerializeWithNestedBytesField(const google::protobuf::Message& outer, int outer_field,
                                   const google::protobuf::Message& inner, int inner_field,
                                   grpc::Slice bytes, grpc::ByteBuffer* out);

// SerializeResponse for an ExecuteResponse without copying its output:
// the output string moves into a slice of `out` that frees it when gRPC
// lets go of the buffer (after the response is written), and the other
// fields, serialized, go before it; the wire bytes parse as the message
// (protobuf takes fields in any order). `response`'s output is left empty.
// Below kInlineOutputBytes the output is copied as SerializeResponse does
// (an owned slice costs two allocations, more than a copy of a few KiB).
inline constexpr size_t kInlineOutputBytes = 4096;
grpc::Status SerializeExecuteResponse(dmlserve::v1::ExecuteResponse& response,
                                      grpc::ByteBuffer* out);

// Why `bytes` do not parse as a `type`: "field operator.mvn1.axes: truncated
// varint at byte 17", "malformed field tag at byte 0", ... The rules are
// those of protobuf's parser (tags, the five wire types, lengths, groups,
// packed repeated scalars, UTF-8 in proto3 strings, nesting depth);
// nullopt when none is broken.
std::optional<std::string> FindWireFormatError(
    std::string_view bytes, const google::protobuf::Descriptor& type);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_MESSAGE_CODEC_H_
