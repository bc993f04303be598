#include "engine/cpu/elementwise.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/cpu/activations.h"
#include "engine/cpu/float16.h"
#include "engine/cpu/tensor_access.h"

namespace dmls::cpu {

template <typename T>
T FloatToIntSaturate(double value) {
  if (std::isnan(value)) return 0;
  // (double)max may round up (2^63, 2^64); ">=" then still saturates
  // exactly, and every value below it truncates into range.
  constexpr T kLo = std::numeric_limits<T>::min();
  constexpr T kHi = std::numeric_limits<T>::max();
  if (value >= static_cast<double>(kHi)) return kHi;
  if (value <= static_cast<double>(kLo)) return kLo;
  return static_cast<T>(std::trunc(value));
}

template int8_t FloatToIntSaturate<int8_t>(double);
template int16_t FloatToIntSaturate<int16_t>(double);
template int32_t FloatToIntSaturate<int32_t>(double);
template int64_t FloatToIntSaturate<int64_t>(double);
template uint8_t FloatToIntSaturate<uint8_t>(double);
template uint16_t FloatToIntSaturate<uint16_t>(double);
template uint32_t FloatToIntSaturate<uint32_t>(double);
template uint64_t FloatToIntSaturate<uint64_t>(double);

namespace {

// Calls fn(T{}) with the C++ type of an integer DataType.
template <typename Fn>
absl::Status DispatchInteger(DataType type, Fn&& fn) {
  switch (type) {
    case DataType::kInt8:
      return fn(int8_t{});
    case DataType::kInt16:
      return fn(int16_t{});
    case DataType::kInt32:
      return fn(int32_t{});
    case DataType::kInt64:
      return fn(int64_t{});
    case DataType::kUint8:
      return fn(uint8_t{});
    case DataType::kUint16:
      return fn(uint16_t{});
    case DataType::kUint32:
      return fn(uint32_t{});
    case DataType::kUint64:
      return fn(uint64_t{});
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "data type ", std::string(DataTypeName(type)), " is not supported"));
  }
}

bool IsFloatTensor(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat16;
}

// Input and output must agree in type and shape for every element-wise op.
absl::Status CheckSameShape(const OperatorDesc& op) {
  if (!op.input || !op.output) {
    return absl::InvalidArgumentError(
        "InputTensor and OutputTensor are required");
  }
  if (op.input->data_type != op.output->data_type ||
      op.input->sizes != op.output->sizes) {
    return absl::InvalidArgumentError(
        "InputTensor and OutputTensor differ in data type or sizes");
  }
  return absl::OkStatus();
}

double Param(const std::optional<float>& value) {
  return static_cast<double>(value.value_or(0.0f));
}

// THRESHOLD/CLIP on integer tensors: exact, with Min/Max (and ScaleBias
// results) converted by FloatToIntSaturate.
template <typename T>
absl::Status UnaryScaleBiasInt(const OperatorDesc& op, std::string_view input,
                               char* output) {
  const bool clip = op.op() == OperatorType::kElementWiseClip;
  const T min = FloatToIntSaturate<T>(Param(op.min));
  const T max = FloatToIntSaturate<T>(Param(op.max));
  ForEachElement(*op.input, *op.output, [&](uint64_t in, uint64_t out) {
    T g = Load<T>(input.data(), in);
    if (op.scale_bias) {
      // Scale/Bias are binary32 values; x*Scale+Bias in binary64 (§4.1.3).
      g = FloatToIntSaturate<T>(static_cast<double>(g) *
                                    Param(op.scale_bias->scale) +
                                Param(op.scale_bias->bias));
    }
    T r = g < min ? min : g;
    if (clip && r > max) r = max;
    Store<T>(output, out, r);
  });
  return absl::OkStatus();
}

// Integer RELU (signed types) and SHRINK (FL 5_1+, §6 "Integer forms"):
// exact arithmetic in int64 (every type involved is at most 32 bits), then
// saturation to the tensor type.
template <typename T>
absl::Status ActivationInt(const OperatorDesc& op, std::string_view input,
                           char* output) {
  constexpr int64_t kLo = static_cast<int64_t>(std::numeric_limits<T>::min());
  constexpr int64_t kHi = static_cast<int64_t>(std::numeric_limits<T>::max());
  if constexpr (sizeof(T) > 4) {
    return absl::InvalidArgumentError("64-bit activations are not supported");
  } else {
    const bool relu = op.op() == OperatorType::kActivationRelu;
    if (!relu && op.op() != OperatorType::kActivationShrink) {
      return absl::InvalidArgumentError(
          "only RELU and SHRINK have integer forms");
    }
    // SHRINK's compact parameters: p0 = Bias, p1 = Threshold.
    const int64_t bias = FloatToIntSaturate<T>(Param(op.activation[0]));
    const int64_t threshold = FloatToIntSaturate<T>(Param(op.activation[1]));
    const int64_t neg_threshold =
        FloatToIntSaturate<T>(-Param(op.activation[1]));
    ForEachElement(*op.input, *op.output, [&](uint64_t in, uint64_t out) {
      const int64_t x = static_cast<int64_t>(Load<T>(input.data(), in));
      int64_t r;
      if (relu) {
        r = x > 0 ? x : 0;
      } else if (x > threshold) {
        r = x - bias;
      } else if (x < neg_threshold) {
        r = x + bias;
      } else {
        r = 0;
      }
      r = r < kLo ? kLo : (r > kHi ? kHi : r);
      Store<T>(output, out, static_cast<T>(r));
    });
    return absl::OkStatus();
  }
}

}  // namespace

absl::Status RunUnaryScaleBias(const OperatorDesc& op, std::string_view input,
                               char* output) {
  if (absl::Status s = CheckSameShape(op); !s.ok()) return s;
  const DataType type = op.input->type();
  if (!IsFloatTensor(type)) {
    return DispatchInteger(type, [&](auto tag) {
      return UnaryScaleBiasInt<decltype(tag)>(op, input, output);
    });
  }
  const bool clip = op.op() == OperatorType::kElementWiseClip;
  double min = Param(op.min);
  double max = Param(op.max);
  if (type == DataType::kFloat16) {
    // Min/Max are cast to the tensor type first (CLIP page, §4.1).
    min = RoundToHalf(min);
    max = RoundToHalf(max);
  }
  ForEachElement(*op.input, *op.output, [&](uint64_t in, uint64_t out) {
    double g = LoadFloat(type, input.data(), in);
    if (op.scale_bias) {
      g = g * Param(op.scale_bias->scale) + Param(op.scale_bias->bias);
    }
    double r = MaxNum(g, min);
    if (clip) r = MinNum(r, max);
    StoreFloat(type, output, out, r);
  });
  return absl::OkStatus();
}

absl::Status RunActivation(const OperatorDesc& op,
                           const ops::OperatorSchema& schema,
                           std::string_view input, char* output) {
  if (absl::Status s = CheckSameShape(op); !s.ok()) return s;
  const DataType type = op.input->type();
  if (!IsFloatTensor(type)) {
    return DispatchInteger(type, [&](auto tag) {
      return ActivationInt<decltype(tag)>(op, input, output);
    });
  }
  const ActivationFn fn = FindActivation(static_cast<uint32_t>(schema.type));
  if (fn == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(schema.name), " is not an activation"));
  }
  const ActivationArgs args{Param(op.activation[0]), Param(op.activation[1])};
  if (type == DataType::kFloat32) {
    // Packed tensors (most requests): one loop with the function inlined.
    const OffsetWalk in(*op.input);
    if (in.packed() && OffsetWalk(*op.output).packed()) {
      FindActivationFloat32(static_cast<uint32_t>(schema.type))(
          input.data(), output, in.count(), args);
      return absl::OkStatus();
    }
    // LoadFloat/StoreFloat's FLOAT32 case without their type switch per
    // element (the same widening and the same single rounding).
    ForEachElement(*op.input, *op.output, [&](uint64_t in, uint64_t out) {
      Store<float>(output, out, static_cast<float>(fn(Load<float>(input.data(), in), args)));
    });
    return absl::OkStatus();
  }
  ForEachElement(*op.input, *op.output, [&](uint64_t in, uint64_t out) {
    StoreFloat(type, output, out, fn(LoadFloat(type, input.data(), in), args));
  });
  return absl::OkStatus();
}

}  // namespace dmls::cpu
