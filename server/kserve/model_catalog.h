// ModelCatalog: the operators dmlserve serves, seen as the models of the
// Open Inference Protocol (KServe v2). Every operator of the schema
// (engine/ops/schema.h) is a model per data type it supports at the
// server's highest feature level:
//
//   <operator>          FP32 (e.g. activation_celu, element_wise_threshold,
//                       mean_variance_normalization1)
//   <operator>_<type>   any other type: activation_celu_fp16,
//                       element_wise_clip_int32, ...
//
// where <operator> is the DirectML name in lower case (OperatorSchema::name)
// and <type> the protocol's datatype in lower case. Tools such as
// perf_analyzer need one fixed type per model, hence one model per type.
// Each model has one version, "1".
//
// Tensors: input "input" (MVN/MVN1 also "scale" and "bias", optional),
// output "output", all of the model's type, any size per dimension.
//
// Immutable after construction: thread-safe.
#ifndef DMLSERVE_SERVER_KSERVE_MODEL_CATALOG_H_
#define DMLSERVE_SERVER_KSERVE_MODEL_CATALOG_H_

#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "engine/core/types.h"
#include "engine/ops/schema.h"

namespace dmls::server::kserve {

// The one version every model has.
inline constexpr char kModelVersion[] = "1";
inline constexpr char kInputName[] = "input";
inline constexpr char kScaleName[] = "scale";
inline constexpr char kBiasName[] = "bias";
inline constexpr char kOutputName[] = "output";

struct ModelEntry {
  std::string name;                      // "activation_celu_fp16"
  const ops::OperatorSchema* schema;     // static schema row
  DataType type;                         // the model's tensor type
  uint32_t min_rank;                     // dimension counts accepted (the
  uint32_t max_rank;                     // tier at the highest level)
};

// The protocol's datatype name ("FP32", "INT8", ...); empty for types it
// has none for (the 4-bit ones).
absl::string_view KServeDatatype(DataType type);
// The inverse; nullopt for names dmlserve has no type for ("BOOL", "BYTES").
std::optional<DataType> DataTypeFromKServe(absl::string_view name);

// True for the operators that take the optional scale and bias tensors.
bool HasScaleAndBias(const ops::OperatorSchema& schema);

class ModelCatalog {
 public:
  // Every operator x supported type at `highest`.
  explicit ModelCatalog(FeatureLevel highest);

  // nullptr for a name that is not a model.
  const ModelEntry* Find(absl::string_view name) const;
  // In schema order, FP32 first per operator.
  const std::vector<ModelEntry>& models() const { return models_; }
  FeatureLevel highest() const { return highest_; }

 private:
  FeatureLevel highest_;
  std::vector<ModelEntry> models_;
};

}  // namespace dmls::server::kserve

#endif  // DMLSERVE_SERVER_KSERVE_MODEL_CATALOG_H_
