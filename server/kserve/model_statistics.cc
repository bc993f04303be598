#include "server/kserve/model_statistics.h"

namespace dmls::server::kserve {

ModelStatisticsTable::ModelStatisticsTable(const ModelCatalog* catalog)
    : catalog_(catalog), rows_(new Row[catalog->models().size()]) {}

void ModelStatisticsTable::Record(const ModelEntry& model, bool ok, absl::Duration duration,
                                  absl::Time end) {
  Row& row = rows_[static_cast<size_t>(&model - catalog_->models().data())];
  const uint64_t ns = static_cast<uint64_t>(absl::ToInt64Nanoseconds(duration));
  if (ok) {
    row.success_count.fetch_add(1, std::memory_order_relaxed);
    row.success_ns.fetch_add(ns, std::memory_order_relaxed);
  } else {
    row.fail_count.fetch_add(1, std::memory_order_relaxed);
    row.fail_ns.fetch_add(ns, std::memory_order_relaxed);
  }
  row.last_ms.store(static_cast<uint64_t>(absl::ToUnixMillis(end)), std::memory_order_relaxed);
}

void ModelStatisticsTable::Fill(size_t index, inference::ModelStatistics* out) const {
  const Row& row = rows_[index];
  out->set_name(catalog_->models()[index].name);
  out->set_version(kModelVersion);
  out->set_last_inference(row.last_ms.load(std::memory_order_relaxed));
  const uint64_t successes = row.success_count.load(std::memory_order_relaxed);
  out->set_inference_count(successes);
  out->set_execution_count(successes);
  inference::InferStatistics* stats = out->mutable_inference_stats();
  stats->mutable_success()->set_count(successes);
  stats->mutable_success()->set_ns(row.success_ns.load(std::memory_order_relaxed));
  stats->mutable_fail()->set_count(row.fail_count.load(std::memory_order_relaxed));
  stats->mutable_fail()->set_ns(row.fail_ns.load(std::memory_order_relaxed));
}

bool ModelStatisticsTable::Report(absl::string_view name,
                                  inference::ModelStatisticsResponse* out) const {
  const auto& models = catalog_->models();
  for (size_t i = 0; i < models.size(); ++i) {
    if (name.empty() || models[i].name == name) Fill(i, out->add_model_stats());
  }
  return name.empty() || out->model_stats_size() > 0;
}

}  // namespace dmls::server::kserve
