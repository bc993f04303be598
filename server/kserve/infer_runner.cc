#include "server/kserve/infer_runner.h"

#include <utility>

#include "absl/time/clock.h"
#include "server/kserve/infer_mapping.h"

namespace dmls::server::kserve {

void InferRunner::Run(inference::ModelInferRequest& request, CallContext context,
                      InferCallback done) {
  const absl::Time start = absl::Now();
  auto mapped = std::make_shared<MappedInfer>();
  if (RequestError error = MapInferRequest(*catalog_, request, mapped.get()); !error.ok()) {
    if (mapped->model != nullptr) {
      const absl::Time end = absl::Now();
      statistics_->RecordFailure(*mapped->model, end - start, end);
    }
    InferOutcome outcome;
    outcome.error = std::move(error);
    done(std::move(outcome));
    return;
  }
  processor_->Execute(
      mapped->request, std::move(context),
      [this, mapped, start, done = std::move(done)](ExecuteOutcome executed) mutable {
        InferOutcome outcome;
        const absl::Time end = absl::Now();
        if (executed.error.ok()) {
          outcome.response = MapInferResponse(*mapped, executed.response);
        } else {
          outcome.error = std::move(executed.error);
          RewriteFieldPaths(*mapped, &outcome.error);
        }
        outcome.executed = std::move(executed);
        if (outcome.error.ok()) {
          statistics_->RecordSuccess(*mapped->model, outcome.executed.timing, end - start, end);
        } else {
          statistics_->RecordFailure(*mapped->model, end - start, end);
        }
        done(std::move(outcome));
      });
}

}  // namespace dmls::server::kserve
