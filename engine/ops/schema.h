// Operator schema: one table row per operator of OPERATORS.md, as data. The
// validator, the proto mapping, the executors and the tests are all driven by
// these rows; no per-operator if-ladder lives elsewhere. Immutable static
// data: thread-safe.
#ifndef DMLSERVE_ENGINE_OPS_SCHEMA_H_
#define DMLSERVE_ENGINE_OPS_SCHEMA_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/types/span.h"
#include "engine/core/types.h"

namespace dmls::ops {

enum class OpKind {
  kUnaryScaleBias,  // THRESHOLD, CLIP: Min (/Max), optional ScaleBias
  kActivation,      // the 17 activations
  kMvn,             // MEAN_VARIANCE_NORMALIZATION (CrossChannel form)
  kMvn1,            // MEAN_VARIANCE_NORMALIZATION1 (Axes form)
};

enum class ToleranceClass { kExact, kArith, kTranscendental, kNormalization };
std::string_view ToleranceClassName(ToleranceClass c);

// Bit set of DataType values: bit (1 << value).
using DataTypeMask = uint32_t;
constexpr DataTypeMask Bit(DataType t) {
  return DataTypeMask{1} << static_cast<uint32_t>(t);
}
inline constexpr DataTypeMask kFloatTypes =
    Bit(DataType::kFloat32) | Bit(DataType::kFloat16);
inline constexpr DataTypeMask kInt32Types =
    Bit(DataType::kInt32) | Bit(DataType::kInt16) | Bit(DataType::kInt8) |
    Bit(DataType::kUint32) | Bit(DataType::kUint16) | Bit(DataType::kUint8);
inline constexpr DataTypeMask kSignedIntTypes =
    Bit(DataType::kInt32) | Bit(DataType::kInt16) | Bit(DataType::kInt8);
inline constexpr DataTypeMask kInt64Types =
    Bit(DataType::kInt64) | Bit(DataType::kUint64);

// One "FL x_y and above" support table (OPERATORS.md §3).
struct SupportTier {
  FeatureLevel from;
  uint32_t min_rank;  // DimensionCount range, inclusive
  uint32_t max_rank;
  DataTypeMask types;
};

struct OperatorSchema {
  OperatorType type;
  std::string_view name;   // DirectML name without prefix: "ACTIVATION_CELU"
  std::string_view field;  // proto oneof member / field-path element: "celu"
  OpKind kind;
  FeatureLevel introduced;
  absl::Span<const SupportTier> tiers;  // ascending `from`
  // The FLOAT parameters every desc must give (empty = none): activations,
  // the proto field names of OperatorDesc::activation[0..1] in DirectMLX
  // compact order (OPERATORS.md §5.3); THRESHOLD and CLIP, "min" and "max"
  // (OperatorDesc::min, ::max; §4.1, §6.1).
  std::array<std::string_view, 2> params;
  bool in_place;                            // §10
  std::optional<FeatureLevel> fusable_from; // into MVN/MVN1; nullopt = never
  ToleranceClass tolerance;                 // §8 (ScaleBias raises EXACT->ARITH)
};

absl::Span<const OperatorSchema> AllOperators();
// nullptr when the type is not served (OP_UNKNOWN).
const OperatorSchema* FindOperator(uint32_t raw_type);
const OperatorSchema* FindOperatorByField(std::string_view field);
const OperatorSchema* FindOperatorByName(std::string_view name);
// The tier that applies at `fl` (highest from <= fl); nullptr if none.
const SupportTier* TierFor(const OperatorSchema& schema, FeatureLevel fl);
// Name of a DML_OPERATOR_TYPE for messages (served or not), e.g.
// "ACTIVATION_SOFTMAX"; "OPERATOR_<n>" when unknown.
std::string OperatorTypeName(uint32_t raw_type);

}  // namespace dmls::ops

#endif  // DMLSERVE_ENGINE_OPS_SCHEMA_H_
