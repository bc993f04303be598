#include "engine/d3d12/engine_runner.h"

#include <utility>
#include <vector>

namespace dmls::d3d12 {

absl::StatusOr<sched::Prepared> EngineRunner::PrepareChain(ChainRequest& chain) {
  sched::Prepared p;
  // Payload and output bytes, as a plain request counts them.
  for (const ChainStep& step : chain.steps) {
    for (const ChainSource* src : {&step.input, &step.scale, &step.bias}) {
      if (src->kind == ChainSource::Kind::kInline) p.bytes += src->bytes.size();
    }
    if (step.return_output) p.bytes += StepOutputBytes(step);
  }
  return p;
}

void EngineRunner::Run(sched::Batch batch) {
  // Chains are whole groups (the batcher's chain lane): handed over here,
  // and their groups left empty for the GpuRunner to skip. The batch itself
  // goes on unchanged (no copy of the plain groups).
  bool plain = false;
  for (std::vector<sched::Job>& group : batch.groups) {
    if (group.empty() || !group.front().is_chain()) {
      plain = plain || !group.empty();
      continue;
    }
    // In submission order: transfers run here, chains are recorded here.
    for (sched::Job& job : group) {
      if (auto* transfer = dynamic_cast<ResidentTransfer*>(job.state.get())) {
        // Answered here or, for a read, on the completion thread.
        transfer->Run(std::move(job.chain->done));
        job.state.reset();
      } else {
        resident_->RunChain(std::move(job.chain->request), std::move(job.chain->done));
      }
    }
    group.clear();
  }
  if (plain) gpu_->Run(std::move(batch));
}

}  // namespace dmls::d3d12
