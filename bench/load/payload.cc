#include "bench/load/payload.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/npy.h"
#include "client/tensor_util.h"
#include "engine/cpu/float16.h"
#include "google/protobuf/util/json_util.h"

namespace dmls::load {
namespace {

namespace v1 = dmlserve::v1;
using google::protobuf::Message;

// The oneof member set in `op` ("celu"), or null.
const google::protobuf::FieldDescriptor* OperatorField(
    const v1::OperatorDesc& op) {
  const auto* oneof = op.GetDescriptor()->FindOneofByName("operator");
  return op.GetReflection()->GetOneofFieldDescriptor(op, oneof);
}

// The oneof member message that holds the operator's fields, or null.
Message* OperatorBody(v1::OperatorDesc* op) {
  const auto* field = OperatorField(*op);
  if (field == nullptr) return nullptr;
  return op->GetReflection()->MutableMessage(op, field);
}

// The TensorDesc field `name` of an operator body; null when the operator
// has no such field or (unless `create`) the optional field is absent.
v1::TensorDesc* TensorSlot(Message* body, const std::string& name,
                           bool create) {
  const auto* field = body->GetDescriptor()->FindFieldByName(name);
  if (field == nullptr || field->message_type() != v1::TensorDesc::descriptor()) {
    return nullptr;
  }
  const auto* reflection = body->GetReflection();
  if (!create && field->has_presence() && !reflection->HasField(*body, field)) {
    return nullptr;
  }
  return static_cast<v1::TensorDesc*>(reflection->MutableMessage(body, field));
}

// Cheap deterministic random bits (splitmix64): a 64 MiB payload is 16M
// floats, and std::mt19937 with a distribution would take a while.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-4, 4).
  float NextFloat() {
    return static_cast<float>(Next() >> 40) * (8.0f / 16777216.0f) - 4.0f;
  }

 private:
  uint64_t state_;
};

// Logical C-order data for `t`: floats uniform in [-4, 4), integers small
// enough for every integer type.
std::string RandomLogical(const v1::TensorDesc& t, Random& random) {
  uint64_t count = 1;
  for (uint64_t s : t.sizes()) count *= s;
  const uint32_t size = client::DataTypeSize(t.data_type());
  std::string out(count * size, '\0');
  char* p = out.data();
  for (uint64_t i = 0; i < count; ++i, p += size) {
    if (t.data_type() == v1::DATA_TYPE_FLOAT32) {
      const float v = random.NextFloat();
      std::memcpy(p, &v, 4);
    } else if (t.data_type() == v1::DATA_TYPE_FLOAT16) {
      const uint16_t v = cpu::FloatToHalfBits(random.NextFloat());
      std::memcpy(p, &v, 2);
    } else {
      const uint64_t v = random.Next() % 100;  // little-endian low bytes
      std::memcpy(p, &v, size);
    }
  }
  return out;
}

// Gives `t` the sizes, data type and total size it lacks, packed.
void FillPacked(v1::TensorDesc* t, const std::vector<uint64_t>& shape,
                v1::DataType data_type) {
  if (t->sizes_size() == 0) {
    for (uint64_t s : shape) t->add_sizes(s);
    if (shape.empty()) t->add_sizes(1);
  }
  if (t->data_type() == v1::DATA_TYPE_UNKNOWN) t->set_data_type(data_type);
  if (t->total_tensor_size_in_bytes() == 0) {
    t->set_total_tensor_size_in_bytes(client::MinimumTensorBytes(
        t->data_type(), {t->sizes().begin(), t->sizes().end()},
        {t->strides().begin(), t->strides().end()}));
  }
}

// Fills the payload of tensor `name` with random data when the operator
// has that tensor.
absl::Status RandomPayload(Message* body, const std::string& name,
                           Random& random, std::string* payload) {
  const v1::TensorDesc* t = TensorSlot(body, name, /*create=*/false);
  if (t == nullptr) return absl::OkStatus();
  if (t->sizes_size() == 0 || client::DataTypeSize(t->data_type()) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has no sizes or no supported data type (give "
                           "them in the JSON, or pass --input)"));
  }
  absl::StatusOr<std::string> packed = client::PackLogical(*t, RandomLogical(*t, random));
  if (!packed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", packed.status().message()));
  }
  *payload = *std::move(packed);
  return absl::OkStatus();
}

absl::StatusOr<v1::OperatorDesc> ReadOperatorJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream text;
  text << in.rdbuf();
  v1::OperatorDesc op;
  const auto status =
      google::protobuf::util::JsonStringToMessage(text.str(), &op);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a dmlserve.v1.OperatorDesc: ",
                     status.message().as_string()));
  }
  return op;
}

// Every operator parameter is required on the wire (PARAM_MISSING
// otherwise); a generated operator gets these ordinary values.
float DefaultParameter(const std::string& name) {
  if (name == "beta") return 0.5f;
  if (name == "gamma") return 1.0507f;
  if (name == "min") return -1.0f;
  if (name == "bias") return 0.0f;
  if (name == "threshold") return 0.5f;
  return 1.0f;  // alpha, steepness, max
}

void SetMissingParameters(Message* body) {
  const auto* descriptor = body->GetDescriptor();
  const auto* reflection = body->GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const auto* field = descriptor->field(i);
    if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_FLOAT &&
        !field->is_repeated() && !reflection->HasField(*body, field)) {
      reflection->SetFloat(body, field, DefaultParameter(field->name()));
    }
  }
}

// A generated operator: `options.op` over a packed tensor of options.bytes.
absl::StatusOr<v1::OperatorDesc> GenerateOperator(const PayloadOptions& options) {
  const v1::DataType type = options.dtype == "float16" ? v1::DATA_TYPE_FLOAT16
                                                        : v1::DATA_TYPE_FLOAT32;
  const uint32_t size = client::DataTypeSize(type);
  if (options.bytes % size != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--bytes=", options.bytes, " is not a multiple of the ", size,
        "-byte element"));
  }
  const uint64_t elements = options.bytes / size;
  v1::OperatorDesc op;
  const auto* field = op.GetDescriptor()->FindFieldByName(options.op);
  if (field == nullptr || field->containing_oneof() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --op '", options.op,
                     "' (an OperatorDesc member: celu, threshold, relu, "
                     "mvn1, ...)"));
  }
  Message* body = op.GetReflection()->MutableMessage(&op, field);
  std::vector<uint64_t> sizes = {elements};
  if (options.op == "mvn1") {
    const uint64_t cols = std::min(options.mvn_cols, elements);
    if (elements % cols != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "mvn1: ", elements, " elements are not whole rows of --mvn_cols=",
          cols));
    }
    sizes = {elements / cols, cols};
    auto* mvn1 = op.mutable_mvn1();
    mvn1->add_axes(1);
    mvn1->set_axis_count(1);
    mvn1->set_normalize_variance(true);
    mvn1->set_epsilon(1e-5f);
  } else if (options.op == "mvn") {
    return absl::InvalidArgumentError(
        "--op=mvn needs a 4-D layout: use --op_json");
  }
  v1::TensorDesc* input = TensorSlot(body, "input", true);
  v1::TensorDesc* output = TensorSlot(body, "output", true);
  if (input == nullptr || output == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--op=", options.op, " has no input/output tensors"));
  }
  *input = client::MakePackedTensorDesc(type, sizes);
  *output = *input;
  SetMissingParameters(body);
  return op;
}

}  // namespace

absl::StatusOr<Payload> BuildPayload(const PayloadOptions& options) {
  absl::StatusOr<v1::OperatorDesc> op = options.op_json.empty()
                                            ? GenerateOperator(options)
                                            : ReadOperatorJson(options.op_json);
  if (!op.ok()) return op.status();
  Message* body = OperatorBody(&*op);
  if (body == nullptr) {
    return absl::InvalidArgumentError("the descriptor names no operator");
  }
  Payload payload;
  v1::ExecuteRequest& request = payload.request;
  Random random(options.seed);
  if (!options.input_npy.empty()) {
    absl::StatusOr<client::NpyArray> array =
        client::ReadNpyFile(options.input_npy);
    if (!array.ok()) return array.status();
    v1::TensorDesc* in = TensorSlot(body, "input", true);
    if (in == nullptr) {
      return absl::InvalidArgumentError("the operator has no input tensor");
    }
    const v1::DataType type = client::DataTypeForNpyDescr(array->descr);
    FillPacked(in, array->shape, type);
    if (type != in->data_type()) {
      return absl::InvalidArgumentError(absl::StrCat(
          options.input_npy, ": dtype ", array->descr,
          " does not match input.data_type ",
          v1::DataType_Name(in->data_type())));
    }
    absl::StatusOr<std::string> packed = client::PackLogical(*in, array->data);
    if (!packed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          options.input_npy, " -> input: ", packed.status().message()));
    }
    *request.mutable_input() = *std::move(packed);
    if (v1::TensorDesc* out = TensorSlot(body, "output", true)) {
      FillPacked(out, {in->sizes().begin(), in->sizes().end()},
                 in->data_type());
    }
  } else if (absl::Status s =
                 RandomPayload(body, "input", random, request.mutable_input());
             !s.ok()) {
    return s;
  }
  for (const auto& [name, bytes] :
       {std::pair<const char*, std::string*>{"scale", request.mutable_scale()},
        {"bias", request.mutable_bias()}}) {
    if (absl::Status s = RandomPayload(body, name, random, bytes); !s.ok()) {
      return s;
    }
  }
  const v1::TensorDesc* in = TensorSlot(body, "input", false);
  const v1::TensorDesc* out = TensorSlot(body, "output", false);
  if (in == nullptr || out == nullptr) {
    return absl::InvalidArgumentError("the operator has no input/output");
  }
  payload.output_bytes = out->total_tensor_size_in_bytes();
  payload.request_bytes =
      request.input().size() + request.scale().size() + request.bias().size();
  payload.description = absl::StrCat(
      OperatorField(*op)->name(), " ", v1::DataType_Name(in->data_type()),
      " [", absl::StrJoin(in->sizes(), ","), "]");
  *request.mutable_operator_() = *std::move(op);
  return payload;
}

}  // namespace dmls::load
