#include "engine/d3d12/engine_runner.h"

#include <utility>
#include <vector>

namespace dmls::d3d12 {

absl::StatusOr<sched::Prepared> EngineRunner::PrepareChain(ChainRequest& chain) {
  absl::StatusOr<std::unique_ptr<ChainTicket>> ticket = resident_->ReserveChain();
  if (!ticket.ok()) return ticket.status();
  sched::Prepared p;
  // Payload and output bytes, as a plain request counts them.
  for (const ChainStep& step : chain.steps) {
    for (const ChainSource* src : {&step.input, &step.scale, &step.bias}) {
      if (src->kind == ChainSource::Kind::kInline) p.bytes += src->bytes.size();
    }
    if (step.return_output) p.bytes += StepOutputBytes(step);
  }
  p.state = std::move(*ticket);
  return p;
}

void EngineRunner::Run(sched::Batch batch) {
  sched::Batch plain;
  for (std::vector<sched::Job>& group : batch.groups) {
    if (group.empty() || !group.front().is_chain) {
      plain.groups.push_back(std::move(group));
      continue;
    }
    for (sched::Job& job : group) {
      static_cast<ChainTicket&>(*job.state).Run(std::move(job.chain),
                                                std::move(job.chain_done));
    }
  }
  if (!plain.empty()) gpu_->Run(std::move(plain));
}

}  // namespace dmls::d3d12
