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

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
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

// Serializes `message` into `out` (replacing its contents); INTERNAL in
// the unexpected case that protobuf cannot.
grpc::Status SerializeResponse(const google::protobuf::Message& message,
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
