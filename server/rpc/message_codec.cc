#include "server/rpc/message_codec.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/stubs/common.h"
#include "grpcpp/impl/codegen/proto_utils.h"

namespace dmls::server {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::FileDescriptor;
using google::protobuf::io::CodedOutputStream;

// protobuf's default recursion limit.
constexpr int kMaxDepth = 100;

// Walks serialized bytes the way protobuf's parser does, with the field
// descriptors at hand for nested messages, packed repeated scalars and
// strings, and stops at the first rule broken.
class WireScanner {
 public:
  explicit WireScanner(std::string_view bytes) : bytes_(bytes) {}

  std::optional<std::string> Scan(const Descriptor& type) {
    return Fields(bytes_.size(), &type, "", 0, 0);
  }

 private:
  // The fields of one message (or group) up to `end`; `group` is the field
  // number of the open group, 0 for a message.
  std::optional<std::string> Fields(size_t end, const Descriptor* type,
                                    const std::string& path, int depth,
                                    uint32_t group) {
    while (pos_ < end) {
      const size_t at = pos_;
      uint64_t tag = 0;
      if (!Varint(end, 5, &tag)) return Error(path, "malformed field tag", at);
      // protobuf reads a tag as at most five varint bytes and keeps the low
      // 32 bits (found by tests/fuzz/fuzz_request): so does the scanner.
      tag &= 0xFFFFFFFFu;
      const uint32_t number = static_cast<uint32_t>(tag >> 3);
      const int wire_type = static_cast<int>(tag & 7);
      if (number == 0) return Error(path, "field number 0", at);
      const FieldDescriptor* field =
          type != nullptr ? type->FindFieldByNumber(static_cast<int>(number))
                          : nullptr;
      const std::string name =
          field != nullptr ? field->name() : absl::StrCat("#", number);
      const std::string field_path =
          path.empty() ? name : absl::StrCat(path, ".", name);
      uint64_t value = 0;
      switch (wire_type) {
        case 0:
          if (!Varint(end, 10, &value)) {
            return Error(field_path, "truncated or overlong varint", at);
          }
          break;
        case 1:
        case 5: {
          const size_t width = wire_type == 1 ? 8 : 4;
          if (end - pos_ < width) {
            return Error(field_path,
                         absl::StrCat(width, "-byte value runs past the end"),
                         at);
          }
          pos_ += width;
          break;
        }
        case 2:
          if (auto error = LengthDelimited(end, field, field_path, depth, at)) {
            return error;
          }
          break;
        case 3: {
          if (depth + 1 > kMaxDepth) {
            return Error(field_path, "nested deeper than 100 levels", at);
          }
          const Descriptor* group_type =
              field != nullptr && field->type() == FieldDescriptor::TYPE_GROUP
                  ? field->message_type()
                  : nullptr;
          if (auto error =
                  Fields(end, group_type, field_path, depth + 1, number)) {
            return error;
          }
          break;
        }
        case 4:
          if (group == number) return std::nullopt;  // the group ends
          return Error(
              path, absl::StrCat("unexpected end-group tag of field ", number),
              at);
        default:
          return Error(field_path,
                       absl::StrCat("invalid wire type ", wire_type), at);
      }
    }
    if (group != 0) return Error(path, "group is not closed", pos_);
    return std::nullopt;
  }

  // A length-delimited value of `field` (null when unknown); its tag
  // started at `at`.
  std::optional<std::string> LengthDelimited(size_t end,
                                             const FieldDescriptor* field,
                                             const std::string& path, int depth,
                                             size_t at) {
    uint64_t length = 0;
    if (!Varint(end, 10, &length) || length > 0x7FFFFFFFu) {
      return Error(path, "malformed length", at);
    }
    if (length > end - pos_) {
      return Error(path,
                   absl::StrCat("length ", length, " runs past the end (",
                                end - pos_, " bytes left)"),
                   at);
    }
    const size_t stop = pos_ + length;
    if (field != nullptr && field->type() == FieldDescriptor::TYPE_MESSAGE) {
      if (depth + 1 > kMaxDepth) {
        return Error(path, "nested deeper than 100 levels", at);
      }
      if (auto error =
              Fields(stop, field->message_type(), path, depth + 1, 0)) {
        return error;
      }
    } else if (field != nullptr && field->is_packable()) {
      if (auto error = Packed(stop, field, path)) return error;
    } else if (field != nullptr &&
               field->type() == FieldDescriptor::TYPE_STRING &&
               field->file()->syntax() == FileDescriptor::SYNTAX_PROTO3 &&
               !google::protobuf::internal::IsStructurallyValidUTF8(
                   bytes_.data() + pos_, static_cast<int>(length))) {
      return Error(path, "string is not valid UTF-8", at);
    }
    pos_ = stop;
    return std::nullopt;
  }

  // The packed values of a repeated scalar field, up to `stop`.
  std::optional<std::string> Packed(size_t stop, const FieldDescriptor* field,
                                    const std::string& path) {
    size_t width = 0;
    switch (field->type()) {
      case FieldDescriptor::TYPE_FIXED64:
      case FieldDescriptor::TYPE_SFIXED64:
      case FieldDescriptor::TYPE_DOUBLE:
        width = 8;
        break;
      case FieldDescriptor::TYPE_FIXED32:
      case FieldDescriptor::TYPE_SFIXED32:
      case FieldDescriptor::TYPE_FLOAT:
        width = 4;
        break;
      default:
        break;  // varints
    }
    if (width != 0) {
      if ((stop - pos_) % width != 0) {
        return Error(path,
                     absl::StrCat("packed length ", stop - pos_,
                                  " is not a multiple of ", width),
                     pos_);
      }
      return std::nullopt;
    }
    while (pos_ < stop) {
      const size_t at = pos_;
      uint64_t value = 0;
      if (!Varint(stop, 10, &value)) {
        return Error(path, "truncated or overlong packed varint", at);
      }
    }
    return std::nullopt;
  }

  // A varint of at most `max_bytes` bytes before `end`.
  bool Varint(size_t end, int max_bytes, uint64_t* value) {
    uint64_t v = 0;
    for (int i = 0; i < max_bytes; ++i) {
      if (pos_ >= end) return false;
      const uint8_t byte = static_cast<uint8_t>(bytes_[pos_++]);
      v |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
      if ((byte & 0x80) == 0) {
        *value = v;
        return true;
      }
    }
    return false;
  }

  static std::string Error(const std::string& path, const std::string& what,
                           size_t at) {
    if (path.empty()) return absl::StrCat(what, " at byte ", at);
    return absl::StrCat("field ", path, ": ", what, " at byte ", at);
  }

  const std::string_view bytes_;
  size_t pos_ = 0;
};

// The fields of a request other than its payloads, re-emitted for
// protobuf to parse: inline up to a descriptor's usual size (a few hundred
// bytes), so a small request allocates nothing for them.
using RestBytes = absl::InlinedVector<char, 512>;

// Reads the top level of a message spread over slices: tags, varints and
// values that may cross slice boundaries. Stops (returns false) at anything
// it does not expect; the caller then lets protobuf report.
class SliceReader {
 public:
  explicit SliceReader(const std::vector<grpc::Slice>& slices) : slices_(slices) {
    Skip();
  }

  bool done() const { return slice_ == slices_.size(); }

  bool Varint(uint64_t* value, int max_bytes) {
    uint64_t v = 0;
    for (int i = 0; i < max_bytes; ++i) {
      uint8_t byte = 0;
      if (!Byte(&byte)) return false;
      v |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
      if ((byte & 0x80) == 0) {
        *value = v;
        return true;
      }
    }
    return false;
  }

  // The next `n` bytes as ranges of the slices (appended to `ranges`) and,
  // when `copy` is set, appended to it too.
  bool Take(uint64_t n, absl::InlinedVector<std::string_view, 2>* ranges,
            RestBytes* copy) {
    while (n > 0) {
      if (done()) return false;
      const grpc::Slice& s = slices_[slice_];
      const size_t take = std::min<uint64_t>(n, s.size() - at_);
      const std::string_view range(reinterpret_cast<const char*>(s.begin()) + at_, take);
      if (ranges != nullptr) ranges->push_back(range);
      if (copy != nullptr) copy->insert(copy->end(), range.begin(), range.end());
      at_ += take;
      n -= take;
      Skip();
    }
    return true;
  }

 private:
  bool Byte(uint8_t* byte) {
    if (done()) return false;
    *byte = slices_[slice_].begin()[at_++];
    Skip();
    return true;
  }
  // Moves past exhausted (and empty) slices.
  void Skip() {
    while (slice_ < slices_.size() && at_ == slices_[slice_].size()) {
      ++slice_;
      at_ = 0;
    }
  }

  const std::vector<grpc::Slice>& slices_;
  size_t slice_ = 0;
  size_t at_ = 0;
};

// Appends the varint `v` to `out` (a tag or a length being re-emitted).
void PutVarint(uint64_t v, RestBytes* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Splits the top-level fields of `slices`: the length-delimited fields
// numbered in `payload_fields` into `ranges` (the last occurrence wins),
// every other field, re-emitted as read, into `rest`. False when the
// bytes break a wire-format rule at the top level (protobuf will say which).
bool SplitPayloads(const std::vector<grpc::Slice>& slices,
                   const std::array<int, 3>& payload_fields,
                   std::array<absl::InlinedVector<std::string_view, 2>, 3>* ranges,
                   RestBytes* rest) {
  SliceReader in(slices);
  while (!in.done()) {
    uint64_t tag = 0;
    if (!in.Varint(&tag, 5)) return false;
    tag &= 0xFFFFFFFFu;
    const int number = static_cast<int>(tag >> 3);
    const int wire_type = static_cast<int>(tag & 7);
    if (number == 0) return false;
    if (wire_type == 2) {
      uint64_t length = 0;
      if (!in.Varint(&length, 10) || length > 0x7FFFFFFFu) return false;
      int slot = -1;
      for (int i = 0; i < 3; ++i) {
        if (payload_fields[i] != 0 && payload_fields[i] == number) slot = i;
      }
      if (slot >= 0) {
        (*ranges)[slot].clear();
        if (!in.Take(length, &(*ranges)[slot], nullptr)) return false;
        continue;
      }
      PutVarint(tag, rest);
      PutVarint(length, rest);
      if (!in.Take(length, nullptr, rest)) return false;
      continue;
    }
    PutVarint(tag, rest);
    uint64_t value = 0;
    switch (wire_type) {
      case 0:
        if (!in.Varint(&value, 10)) return false;
        PutVarint(value, rest);
        break;
      case 1:
        if (!in.Take(8, nullptr, rest)) return false;
        break;
      case 5:
        if (!in.Take(4, nullptr, rest)) return false;
        break;
      default:
        return false;  // groups, invalid wire types: protobuf's business
    }
  }
  return true;
}

}  // namespace

absl::Status ParseRequestWithPayloads(const grpc::ByteBuffer& bytes,
                                      google::protobuf::Message* message,
                                      const std::array<int, 3>& payload_fields,
                                      std::array<Payload, 3>* payloads) {
  for (Payload& p : *payloads) p.clear();
  message->Clear();
  auto slices = std::make_shared<std::vector<grpc::Slice>>();
  std::array<absl::InlinedVector<std::string_view, 2>, 3> ranges;
  RestBytes rest;
  if (bytes.Valid() && bytes.Dump(slices.get()).ok() &&
      SplitPayloads(*slices, payload_fields, &ranges, &rest) &&
      rest.size() <= static_cast<size_t>(std::numeric_limits<int>::max()) &&
      message->ParseFromArray(rest.data(), static_cast<int>(rest.size()))) {
    for (int i = 0; i < 3; ++i) {
      if (!ranges[i].empty()) (*payloads)[i] = Payload::Borrowed(ranges[i], slices);
    }
    return absl::OkStatus();
  }
  // Anything unusual: protobuf parses (or reports) the whole message, and
  // the payload fields are moved out of it.
  absl::Status status = ParseRequest(bytes, message);
  if (!status.ok()) return status;
  const google::protobuf::Reflection* reflection = message->GetReflection();
  for (int i = 0; i < 3; ++i) {
    const FieldDescriptor* field =
        payload_fields[i] != 0 ? message->GetDescriptor()->FindFieldByNumber(payload_fields[i])
                               : nullptr;
    if (field == nullptr || field->is_repeated() ||
        field->type() != FieldDescriptor::TYPE_BYTES) {
      continue;
    }
    std::string scratch;
    const std::string& value = reflection->GetStringReference(*message, field, &scratch);
    (*payloads)[i] = Payload(std::string(value));
    reflection->ClearField(message, field);
  }
  return absl::OkStatus();
}

absl::Status ParseRequest(const grpc::ByteBuffer& bytes,
                          google::protobuf::Message* message) {
  message->Clear();
  if (!bytes.Valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no ", message->GetTypeName(), " was sent"));
  }
  // A copy shares the slices (no bytes are copied); parsing consumes it.
  grpc::ByteBuffer consumed(bytes);
  grpc::Status status =
      grpc::SerializationTraits<google::protobuf::Message>::Deserialize(
          &consumed, message);
  if (status.ok()) return absl::OkStatus();
  // The failure path only: flatten the bytes and find out why.
  std::vector<grpc::Slice> slices;
  std::string flat;
  if (bytes.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      flat.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  std::optional<std::string> reason =
      FindWireFormatError(flat, *message->GetDescriptor());
  message->Clear();
  return absl::InvalidArgumentError(absl::StrCat(
      "the request is not a valid ", message->GetTypeName(), " (", flat.size(),
      " bytes): ", reason ? *reason : "malformed protobuf message"));
}

grpc::Status SerializeResponse(const google::protobuf::Message& message,
                               grpc::ByteBuffer* out) {
  bool own_buffer = false;
  out->Clear();  // the serializer expects an empty buffer
  return grpc::SerializationTraits<google::protobuf::Message>::Serialize(
      message, out, &own_buffer);
}

grpc::Status SerializeExecuteResponse(dmlserve::v1::ExecuteResponse& response,
                                      grpc::ByteBuffer* out) {
  if (response.output().size() < kInlineOutputBytes) return SerializeResponse(response, out);
  auto* output = new std::string(std::move(*response.mutable_output()));
  response.clear_output();
  SerializeWithBytesField(
      response, dmlserve::v1::ExecuteResponse::kOutputFieldNumber,
      grpc::Slice(output->data(), output->size(),
                  [](void* owned) { delete static_cast<std::string*>(owned); }, output),
      out);
  return grpc::Status::OK;
}

namespace {

uint32_t LengthDelimitedTag(int field_number) {
  return (static_cast<uint32_t>(field_number) << 3) | 2;
}

// `outer` (may be null) and its field `outer_field` holding `inner`, whose
// last field `inner_field` is `bytes`: every byte before `bytes` in one
// slice, then `bytes` as it is.
void SerializeAroundBytes(const google::protobuf::Message* outer, int outer_field,
                          const google::protobuf::Message& inner, int inner_field,
                          grpc::Slice bytes, grpc::ByteBuffer* out) {
  const uint32_t inner_tag = LengthDelimitedTag(inner_field);
  const size_t inner_fields = inner.ByteSizeLong();
  const size_t inner_head = inner_fields + CodedOutputStream::VarintSize32(inner_tag) +
                            CodedOutputStream::VarintSize64(bytes.size());
  size_t head_size = inner_head;
  uint32_t outer_tag = 0;
  uint64_t inner_size = 0;
  if (outer != nullptr) {
    outer_tag = LengthDelimitedTag(outer_field);
    inner_size = inner_head + bytes.size();
    head_size += outer->ByteSizeLong() + CodedOutputStream::VarintSize32(outer_tag) +
                 CodedOutputStream::VarintSize64(inner_size);
  }
  grpc::Slice head(head_size);
  uint8_t* at = const_cast<uint8_t*>(head.begin());
  if (outer != nullptr) {
    at = outer->SerializeWithCachedSizesToArray(at);
    at = CodedOutputStream::WriteTagToArray(outer_tag, at);
    at = CodedOutputStream::WriteVarint64ToArray(inner_size, at);
  }
  at = inner.SerializeWithCachedSizesToArray(at);
  at = CodedOutputStream::WriteTagToArray(inner_tag, at);
  CodedOutputStream::WriteVarint64ToArray(bytes.size(), at);
  grpc::Slice slices[2] = {std::move(head), std::move(bytes)};
  grpc::ByteBuffer buffer(slices, 2);
  out->Swap(&buffer);
}

}  // namespace

void SerializeWithBytesField(const google::protobuf::Message& fields, int field_number,
                             grpc::Slice bytes, grpc::ByteBuffer* out) {
  SerializeAroundBytes(nullptr, 0, fields, field_number, std::move(bytes), out);
}

void SerializeWithNestedBytesField(const google::protobuf::Message& outer, int outer_field,
                                   const google::protobuf::Message& inner, int inner_field,
                                   grpc::Slice bytes, grpc::ByteBuffer* out) {
  SerializeAroundBytes(&outer, outer_field, inner, inner_field, std::move(bytes), out);
}

std::optional<std::string> FindWireFormatError(std::string_view bytes,
                                               const Descriptor& type) {
  return WireScanner(bytes).Scan(type);
}

}  // namespace dmls::server
