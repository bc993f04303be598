#include "server/kserve/infer_parameters.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/reflection.h"
#include "server/kserve/infer_mapping.h"

namespace dmls::server::kserve {
namespace {

namespace v1 = dmlserve::v1;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using inference::InferParameter;

RequestError ParameterError(std::string rule, absl::string_view name, std::string message) {
  return RequestError::Rule(absl::StatusCode::kInvalidArgument, std::move(rule),
                            ParameterPath(name), std::move(message));
}

RequestError TypeError(absl::string_view name, absl::string_view wanted) {
  return ParameterError("KSERVE_PARAMETER_TYPE", name,
                        absl::StrCat("parameter '", name, "' must be ", wanted));
}

std::optional<double> AsNumber(const InferParameter& p) {
  switch (p.parameter_choice_case()) {
    case InferParameter::kDoubleParam: return p.double_param();
    case InferParameter::kInt64Param: return static_cast<double>(p.int64_param());
    case InferParameter::kUint64Param: return static_cast<double>(p.uint64_param());
    case InferParameter::kStringParam: {
      double value;
      if (absl::SimpleAtod(absl::StripAsciiWhitespace(p.string_param()), &value)) return value;
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

std::optional<bool> AsBool(const InferParameter& p) {
  switch (p.parameter_choice_case()) {
    case InferParameter::kBoolParam: return p.bool_param();
    case InferParameter::kInt64Param:
      if (p.int64_param() == 0 || p.int64_param() == 1) return p.int64_param() == 1;
      return std::nullopt;
    case InferParameter::kStringParam: {
      bool value;
      if (absl::SimpleAtob(absl::StripAsciiWhitespace(p.string_param()), &value)) return value;
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

// A list of integers: one int64/uint64, or a string "1,2", "[1, 2]", "-1".
std::optional<std::vector<int64_t>> AsIntegers(const InferParameter& p) {
  switch (p.parameter_choice_case()) {
    case InferParameter::kInt64Param: return std::vector<int64_t>{p.int64_param()};
    case InferParameter::kUint64Param:
      if (p.uint64_param() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return std::nullopt;
      }
      return std::vector<int64_t>{static_cast<int64_t>(p.uint64_param())};
    case InferParameter::kStringParam: {
      absl::string_view text = absl::StripAsciiWhitespace(p.string_param());
      absl::ConsumePrefix(&text, "[");
      absl::ConsumeSuffix(&text, "]");
      std::vector<int64_t> values;
      if (absl::StripAsciiWhitespace(text).empty()) return values;
      for (absl::string_view item : absl::StrSplit(text, ',')) {
        int64_t value;
        if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(item), &value)) return std::nullopt;
        values.push_back(value);
      }
      return values;
    }
    default: return std::nullopt;
  }
}

bool IsTensor(const FieldDescriptor* field) {
  return field->message_type() == v1::TensorDesc::descriptor();
}

// Sets the scalar or repeated field `field` of `message` from `value`.
RequestError SetField(absl::string_view name, const InferParameter& value, uint32_t rank,
                      const FieldDescriptor* field, Message* message) {
  const google::protobuf::Reflection* reflection = message->GetReflection();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_FLOAT: {
      std::optional<double> number = AsNumber(value);
      if (!number) return TypeError(name, "a number (double, integer or string)");
      reflection->SetFloat(message, field, static_cast<float>(*number));
      return {};
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      std::optional<bool> flag = AsBool(value);
      if (!flag) return TypeError(name, "a boolean (bool, 0/1 or \"true\"/\"false\")");
      reflection->SetBool(message, field, *flag);
      return {};
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      std::optional<std::vector<int64_t>> values = AsIntegers(value);
      if (!values || (!field->is_repeated() && values->size() != 1)) {
        return TypeError(name, field->is_repeated()
                                   ? "integers (an int64, or a string such as \"2,3\")"
                                   : "an integer");
      }
      if (field->is_repeated()) reflection->ClearField(message, field);
      for (int64_t v : *values) {
        // Negative axes count from the end (numpy's convention).
        if (v < 0) v += rank;
        if (v < 0 || v > std::numeric_limits<uint32_t>::max()) {
          return ParameterError("KSERVE_PARAMETER_RANGE", name,
                                absl::StrCat("parameter '", name, "' has a value outside [-",
                                             rank, ", 2^32)"));
        }
        if (field->is_repeated()) {
          reflection->AddUInt32(message, field, static_cast<uint32_t>(v));
        } else {
          reflection->SetUInt32(message, field, static_cast<uint32_t>(v));
        }
      }
      return {};
    }
    default:
      return ParameterError("KSERVE_PARAMETER_UNKNOWN", name,
                            absl::StrCat("'", name, "' is not a parameter of this model"));
  }
}

// One parameter: `name` is a path of fields below the operator message.
RequestError Apply(absl::string_view name, const InferParameter& value, uint32_t rank,
                   Message* op) {
  std::vector<absl::string_view> parts = absl::StrSplit(name, '.');
  Message* message = op;
  for (size_t i = 0; i < parts.size(); ++i) {
    const FieldDescriptor* field =
        message->GetDescriptor()->FindFieldByName(std::string(parts[i]));
    if (field == nullptr || IsTensor(field)) {
      return ParameterError("KSERVE_PARAMETER_UNKNOWN", name,
                            absl::StrCat("'", name, "' is not a parameter of this model"));
    }
    const bool last = i + 1 == parts.size();
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!last) {
        return ParameterError("KSERVE_PARAMETER_UNKNOWN", name,
                              absl::StrCat("'", name, "' is not a parameter of this model"));
      }
      return SetField(name, value, rank, field, message);
    }
    message = message->GetReflection()->MutableMessage(message, field);
    if (last) {
      // A message named whole: a string naming one of its message members
      // ("fused_activation": "relu"), which is set empty.
      if (value.parameter_choice_case() != InferParameter::kStringParam) {
        return TypeError(name, "a string naming one of its members");
      }
      const FieldDescriptor* member = message->GetDescriptor()->FindFieldByName(
          absl::AsciiStrToLower(std::string(absl::StripAsciiWhitespace(value.string_param()))));
      if (member == nullptr || member->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE ||
          IsTensor(member)) {
        return ParameterError("KSERVE_PARAMETER_RANGE", name,
                              absl::StrCat("'", value.string_param(), "' is not a member of '",
                                           name, "'"));
      }
      message->GetReflection()->MutableMessage(message, member);
    }
  }
  return {};
}

}  // namespace

std::string ParameterPath(absl::string_view name) {
  return absl::StrCat("parameters[\"", name, "\"]");
}

RequestError ApplyParameters(
    const google::protobuf::Map<std::string, InferParameter>& parameters, uint32_t rank,
    v1::ExecuteRequest* request) {
  // The map's order is unspecified: apply in name order, so that a message
  // named whole ("fused_activation") comes before its fields.
  std::vector<const std::string*> names;
  for (const auto& [name, value] : parameters) names.push_back(&name);
  std::sort(names.begin(), names.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  v1::OperatorDesc* desc = request->mutable_operator_();
  const FieldDescriptor* member =
      desc->GetReflection()->GetOneofFieldDescriptor(*desc, desc->GetDescriptor()->oneof_decl(0));
  Message* op = desc->GetReflection()->MutableMessage(desc, member);
  for (const std::string* name : names) {
    const InferParameter& value = parameters.at(*name);
    if (std::find(kIgnoredParameters.begin(), kIgnoredParameters.end(), *name) !=
        kIgnoredParameters.end()) {
      continue;
    }
    if (*name == "in_place") {
      std::optional<bool> flag = AsBool(value);
      if (!flag) return TypeError(*name, "a boolean (bool, 0/1 or \"true\"/\"false\")");
      request->set_in_place(*flag);
      continue;
    }
    if (RequestError e = Apply(*name, value, rank, op); !e.ok()) return e;
  }
  return {};
}

}  // namespace dmls::server::kserve
