#include "client/dmlctl_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/dmlctl_axes.h"
#include "client/npy.h"
#include "client/read_file.h"
#include "client/tensor_util.h"
#include "google/protobuf/util/json_util.h"

namespace dmls::client::ctl {

using dmlserve::v1::OperatorDesc;
using dmlserve::v1::TensorDesc;

Args ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (!absl::StartsWith(a, "--")) {
      args.positional.push_back(a);
      continue;
    }
    a = a.substr(2);
    const size_t eq = a.find('=');
    if (eq != std::string::npos) {
      args.flags[a.substr(0, eq)] = a.substr(eq + 1);
    } else if (a == "in-place" || a == "json" || a == "keep-output" ||
               a == "progress" || a == "raw" || a == "tls" || a == "summary" ||
               a == "help" || a == "version" || i + 1 >= argc) {
      args.flags[a] = "true";
    } else {
      args.flags[a] = argv[++i];
    }
  }
  return args;
}

// "3_1", "0x3100", "12544" or "FEATURE_LEVEL_3_1".
absl::StatusOr<int> ParseFeatureLevel(std::string text) {
  if (text.empty()) return 0;
  if (absl::StartsWith(text, "FEATURE_LEVEL_")) text = text.substr(14);
  const size_t us = text.find('_');
  if (us != std::string::npos) {
    int major = 0, minor = 0;
    if (absl::SimpleAtoi(text.substr(0, us), &major) &&
        absl::SimpleAtoi(text.substr(us + 1), &minor) && major >= 0 &&
        major < 16 && minor >= 0 && minor < 16) {
      return (major << 12) | (minor << 8);
    }
  } else {
    int value = 0;
    if (absl::StartsWith(text, "0x") &&
        absl::SimpleHexAtoi(text.substr(2), &value)) {
      return value;
    }
    if (absl::SimpleAtoi(text, &value)) return value;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("bad --feature-level '", text, "' (want e.g. 3_1)"));
}

absl::Status ReadJson(const std::string& path,
                      google::protobuf::Message* message) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::string> encoded = EncodeNegativeAxes(*text);
  if (!encoded.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not JSON"));
  }
  const auto status = google::protobuf::util::JsonStringToMessage(*encoded, message);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a ", message->GetDescriptor()->full_name(),
                     ": ", status.message().as_string()));
  }
  return absl::OkStatus();
}

absl::StatusOr<OperatorDesc> ReadOperator(const std::string& path) {
  OperatorDesc op;
  if (absl::Status s = ReadJson(path, &op); !s.ok()) return s;
  return op;
}

absl::StatusOr<dmlserve::v1::DataType> ParseDataType(const std::string& text) {
  dmlserve::v1::DataType type = dmlserve::v1::DATA_TYPE_UNKNOWN;
  const std::string name =
      absl::StartsWith(text, "DATA_TYPE_") ? text : "DATA_TYPE_" + text;
  if (!dmlserve::v1::DataType_Parse(absl::AsciiStrToUpper(name), &type) ||
      type == dmlserve::v1::DATA_TYPE_UNKNOWN) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad data type '", text, "' (want e.g. FLOAT16)"));
  }
  return type;
}

// The oneof member message that holds the operator's fields, or null.
google::protobuf::Message* OperatorBody(OperatorDesc* op) {
  const auto* oneof = op->GetDescriptor()->FindOneofByName("operator");
  const auto* reflection = op->GetReflection();
  const auto* field = reflection->GetOneofFieldDescriptor(*op, oneof);
  if (field == nullptr) return nullptr;
  return reflection->MutableMessage(op, field);
}

// The tensor `name` ("input", "scale", "bias", "output") of the operator;
// null when the operator has no such field, or (unless `create`) when the
// optional field is absent.
TensorDesc* TensorSlot(google::protobuf::Message* body, const std::string& name,
                       bool create) {
  const auto* field = body->GetDescriptor()->FindFieldByName(name);
  if (field == nullptr ||
      field->message_type() != TensorDesc::descriptor()) {
    return nullptr;
  }
  const auto* reflection = body->GetReflection();
  if (!create && field->has_presence() && !reflection->HasField(*body, field)) {
    return nullptr;
  }
  return static_cast<TensorDesc*>(reflection->MutableMessage(body, field));
}

// Gives `t` what it lacks from an array of `shape` and `data_type`.
void FillPacked(TensorDesc* t, const std::vector<uint64_t>& shape,
                dmlserve::v1::DataType data_type) {
  if (t->sizes_size() == 0) {
    for (uint64_t s : shape) t->add_sizes(s);
    if (shape.empty()) t->add_sizes(1);
  }
  if (t->data_type() == dmlserve::v1::DATA_TYPE_UNKNOWN) t->set_data_type(data_type);
  if (t->total_tensor_size_in_bytes() == 0) {
    t->set_total_tensor_size_in_bytes(MinimumTensorBytes(
        t->data_type(), {t->sizes().begin(), t->sizes().end()},
        {t->strides().begin(), t->strides().end()}));
  }
}

namespace {

// binary32 -> binary16, round to nearest even (for --random FLOAT16 data).
uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | 0x7c00 | (a > 0x7f800000u ? 0x200 : 0);
  if (a >= 0x477ff000u) return sign | 0x7c00;  // >= 65520 rounds to inf
  if (a < 0x38800000u) {                        // below 2^-14: subnormal
    float v;
    std::memcpy(&v, &a, 4);
    return sign | static_cast<uint16_t>(std::nearbyint(v * 16777216.0f));
  }
  uint32_t v = a - 0x38000000u;  // rebias the exponent from 127 to 15
  v += 0x0fffu + ((v >> 13) & 1u);
  return sign | static_cast<uint16_t>(v >> 13);
}

}  // namespace

// Logical C-order data for `t`: floats uniform in [-4, 4], integers in a
// small range that fits every integer type.
std::string RandomLogical(const TensorDesc& t, std::mt19937_64& rng) {
  uint64_t count = 1;
  for (uint64_t s : t.sizes()) count *= s;
  const uint32_t size = DataTypeSize(t.data_type());
  std::string out(count * size, '\0');
  std::uniform_real_distribution<float> real(-4.0f, 4.0f);
  std::uniform_int_distribution<int> sint(-100, 100);
  std::uniform_int_distribution<int> uint(0, 200);
  for (uint64_t i = 0; i < count; ++i) {
    char* p = &out[i * size];
    switch (t.data_type()) {
      case dmlserve::v1::DATA_TYPE_FLOAT32: {
        const float v = real(rng);
        std::memcpy(p, &v, 4);
        break;
      }
      case dmlserve::v1::DATA_TYPE_FLOAT16: {
        const uint16_t v = FloatToHalf(real(rng));
        std::memcpy(p, &v, 2);
        break;
      }
      case dmlserve::v1::DATA_TYPE_UINT8:
      case dmlserve::v1::DATA_TYPE_UINT16:
      case dmlserve::v1::DATA_TYPE_UINT32:
      case dmlserve::v1::DATA_TYPE_UINT64: {
        const uint64_t v = static_cast<uint64_t>(uint(rng));
        std::memcpy(p, &v, size);  // little-endian: the low bytes
        break;
      }
      default: {
        const int64_t v = sint(rng);
        std::memcpy(p, &v, size);
        break;
      }
    }
  }
  return out;
}

void PrintViolations(const std::vector<dmlserve::v1::FieldViolation>& vs) {
  for (const auto& v : vs) {
    std::cerr << "  " << v.rule() << " at " << v.field() << ": "
              << v.description() << "\n";
  }
}


// Loads `path` into the tensor slot `name`, filling what the desc lacks.
absl::Status BindNpy(google::protobuf::Message* body, const std::string& name,
                     const std::string& path, std::string* payload) {
  absl::StatusOr<NpyArray> array = ReadNpyFile(path);
  if (!array.ok()) return array.status();
  TensorDesc* t = TensorSlot(body, name, /*create=*/true);
  if (t == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("the operator has no ", name, " tensor"));
  }
  FillPacked(t, array->shape, DataTypeForNpyDescr(array->descr));
  if (DataTypeForNpyDescr(array->descr) != t->data_type()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": dtype ", array->descr, " does not match ", name,
                     ".data_type ", dmlserve::v1::DataType_Name(t->data_type())));
  }
  absl::StatusOr<std::string> packed = PackLogical(*t, array->data);
  if (!packed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " -> ", name, ": ", packed.status().message()));
  }
  *payload = *std::move(packed);
  return absl::OkStatus();
}

absl::Status ApplyShape(google::protobuf::Message* body, const std::string& shape,
                        const std::string& data_type) {
  TensorDesc* in =
      body == nullptr ? nullptr : TensorSlot(body, "input", /*create=*/true);
  if (in == nullptr) return absl::InvalidArgumentError("the operator has no input");
  if (in->sizes_size() != 0) {
    return absl::InvalidArgumentError(
        "--shape: the descriptor's input already has sizes");
  }
  absl::StatusOr<std::vector<uint64_t>> sizes = ParseShape(shape);
  if (!sizes.ok()) return sizes.status();
  absl::StatusOr<dmlserve::v1::DataType> type = ParseDataType(
      data_type.empty() ? (in->data_type() == dmlserve::v1::DATA_TYPE_UNKNOWN
                               ? "FLOAT32"
                               : dmlserve::v1::DataType_Name(in->data_type()))
                        : data_type);
  if (!type.ok()) return type.status();
  FillPacked(in, *sizes, *type);
  if (TensorDesc* out = TensorSlot(body, "output", /*create=*/true)) {
    FillFrom(out, *in);
  }
  return absl::OkStatus();
}

void FillFrom(TensorDesc* t, const TensorDesc& source) {
  if (t->data_type() == dmlserve::v1::DATA_TYPE_UNKNOWN) {
    t->set_data_type(source.data_type());
  }
  if (t->sizes_size() != 0) return;
  *t->mutable_sizes() = source.sizes();
  *t->mutable_strides() = source.strides();
  if (t->total_tensor_size_in_bytes() == 0) {
    t->set_total_tensor_size_in_bytes(source.total_tensor_size_in_bytes());
  }
}

absl::Status WriteTensorNpy(const std::string& path, const TensorDesc& desc,
                            const std::string& buffer,
                            std::vector<uint64_t>* shape_out) {
  absl::StatusOr<std::string> logical = GatherLogical(desc, buffer);
  if (!logical.ok()) return logical.status();
  NpyArray array;
  array.descr = NpyDescrFor(desc.data_type());
  array.shape.assign(desc.sizes().begin(), desc.sizes().end());
  array.data = *std::move(logical);
  if (shape_out != nullptr) *shape_out = array.shape;
  return WriteNpyFile(path, array);
}

absl::StatusOr<std::vector<uint64_t>> ParseShape(const std::string& text) {
  std::vector<uint64_t> shape;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    uint64_t size = 0;
    if (!absl::SimpleAtoi(part, &size) || size == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad shape '", text, "' (want e.g. 2,3,4)"));
    }
    shape.push_back(size);
  }
  return shape;
}

absl::StatusOr<uint64_t> ParseBytes(const std::string& text) {
  uint64_t scale = 1;
  std::string digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': scale = uint64_t{1} << 10; break;
      case 'M': case 'm': scale = uint64_t{1} << 20; break;
      case 'G': case 'g': scale = uint64_t{1} << 30; break;
      default: break;
    }
    if (scale != 1) digits.pop_back();
  }
  uint64_t value = 0;
  if (!absl::SimpleAtoi(digits, &value) || value == 0 ||
      value > (uint64_t{1} << 40) / scale) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad byte count '", text, "' (want e.g. 4M)"));
  }
  return value * scale;
}

std::function<void(uint64_t, uint64_t)> StderrProgress(std::string label) {
  return [label = std::move(label)](uint64_t done, uint64_t total) {
    // MiB for large transfers, bytes for small ones.
    const bool mib = std::max(done, total) >= (1 << 20);
    const double unit = mib ? 1 << 20 : 1;
    const char* name = mib ? "MiB" : "bytes";
    if (total == 0) {
      std::fprintf(stderr, "\r%s %.*f %s", label.c_str(), mib, done / unit, name);
    } else {
      std::fprintf(stderr, "\r%s %.*f / %.*f %s (%.0f%%)", label.c_str(), mib,
                   done / unit, mib, total / unit, name, 100.0 * done / total);
    }
    if (total != 0 && done >= total) std::fputc('\n', stderr);
  };
}

}  // namespace dmls::client::ctl
