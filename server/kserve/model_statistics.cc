#include "server/kserve/model_statistics.h"

#include <algorithm>

namespace dmls::server::kserve {

namespace {

uint64_t Ns(absl::Duration d) {
  return static_cast<uint64_t>(std::max<int64_t>(absl::ToInt64Nanoseconds(d), 0));
}

}  // namespace

void ModelStatisticsTable::Duration::Add(absl::Duration d) {
  count.fetch_add(1, std::memory_order_relaxed);
  ns.fetch_add(Ns(d), std::memory_order_relaxed);
}

void ModelStatisticsTable::Duration::Fill(inference::StatisticDuration* out) const {
  out->set_count(count.load(std::memory_order_relaxed));
  out->set_ns(ns.load(std::memory_order_relaxed));
}

ModelStatisticsTable::ModelStatisticsTable(const ModelCatalog* catalog)
    : catalog_(catalog), rows_(new Row[catalog->models().size()]) {}

ModelStatisticsTable::Row& ModelStatisticsTable::RowOf(const ModelEntry& model) {
  return rows_[static_cast<size_t>(&model - catalog_->models().data())];
}

void ModelStatisticsTable::RecordSuccess(const ModelEntry& model, const ExecuteTiming& timing,
                                         absl::Duration duration, absl::Time end) {
  Row& row = RowOf(model);
  row.success.Add(duration);
  row.queue.Add(timing.queued);
  row.input.Add(timing.input);
  // The output copy is part of the run; the rest of the run is inference.
  row.infer.Add(timing.run - std::min(timing.output, timing.run));
  row.output.Add(timing.output);
  // An engine that does not say (no scheduler: the DirectML engine) runs
  // each request alone.
  if (timing.counts_execution || timing.execution_requests == 0) {
    row.executions.fetch_add(1, std::memory_order_relaxed);
  }
  row.last_ms.store(static_cast<uint64_t>(absl::ToUnixMillis(end)), std::memory_order_relaxed);
}

void ModelStatisticsTable::RecordFailure(const ModelEntry& model, absl::Duration duration,
                                         absl::Time end) {
  Row& row = RowOf(model);
  row.fail.Add(duration);
  row.last_ms.store(static_cast<uint64_t>(absl::ToUnixMillis(end)), std::memory_order_relaxed);
}

void ModelStatisticsTable::Fill(size_t index, inference::ModelStatistics* out) const {
  const Row& row = rows_[index];
  out->set_name(catalog_->models()[index].name);
  out->set_version(kModelVersion);
  out->set_last_inference(row.last_ms.load(std::memory_order_relaxed));
  out->set_inference_count(row.success.count.load(std::memory_order_relaxed));
  out->set_execution_count(row.executions.load(std::memory_order_relaxed));
  inference::InferStatistics* stats = out->mutable_inference_stats();
  row.success.Fill(stats->mutable_success());
  row.fail.Fill(stats->mutable_fail());
  row.queue.Fill(stats->mutable_queue());
  row.input.Fill(stats->mutable_compute_input());
  row.infer.Fill(stats->mutable_compute_infer());
  row.output.Fill(stats->mutable_compute_output());
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
