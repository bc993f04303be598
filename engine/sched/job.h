// Job and Batch: an admitted request on its way through the scheduler.
//
// A Job is one unit of work: a plain request (`request`, answered through
// `done`) or a resident chain (`chain`, answered through `chain_done`;
// engine/core/resident.h). It owns the request, its completion callback
// and the runner's per-request state (for the GPU: the dispatch plan and
// the staged upload; for a chain, its place among the resident work).
// Destroying a Job without answering it is a bug; destroying its state
// releases whatever the runner reserved for it. Batches group jobs by batch
// key: jobs of one group may be coalesced into one dispatch by the runner;
// chains are never coalesced and keep their submission order (batcher.h).
// Plain move-only data; thread-compatible.
#ifndef DMLSERVE_ENGINE_SCHED_JOB_H_
#define DMLSERVE_ENGINE_SCHED_JOB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engine/core/engine.h"
#include "engine/core/resident.h"

namespace dmls::sched {

// What a runner keeps for one job between Prepare and Run (see runner.h).
class JobState {
 public:
  virtual ~JobState() = default;
};

struct Job {
  ExecuteRequest request;
  ExecuteCallback done;
  // A resident chain instead of `request` (then `done` is unused).
  bool is_chain = false;
  ChainRequest chain;
  ChainCallback chain_done;
  // Jobs with equal non-empty keys may run as one coalesced dispatch.
  std::string key;
  // Payload and output bytes (for max_batch_bytes).
  uint64_t bytes = 0;
  absl::Time enqueued;  // Submit's clock reading, before Prepare
  absl::Time staged;    // after Prepare: the job's time in the queue starts
  uint64_t seq = 0;  // admission order, ties broken by it
  std::unique_ptr<JobState> state;

  absl::Time deadline() const { return is_chain ? chain.deadline : request.deadline; }
  bool Cancelled() const {
    const auto& flag = is_chain ? chain.cancelled : request.cancelled;
    return flag && flag->load();
  }
  // Answers the job with `status` (not OK), whichever kind it is.
  void Fail(absl::Status status) {
    if (is_chain) {
      chain_done(std::move(status));
    } else {
      done(std::move(status));
    }
  }
};

struct Batch {
  // Each group holds jobs of one key, earliest deadline first; groups are
  // in the order of their first job's deadline.
  std::vector<std::vector<Job>> groups;

  size_t size() const {
    size_t n = 0;
    for (const auto& g : groups) n += g.size();
    return n;
  }
  bool empty() const { return groups.empty(); }
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_JOB_H_
