// GpuRunner, part 3: fence waits and the delivery of results, on the
// completion thread and the copy pool (gpu_runner_internal.h).
#include "engine/d3d12/gpu_runner.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"
#include "engine/d3d12/gpu_runner_internal.h"

namespace dmls::d3d12 {

using runner_internal::kPoison;

void GpuRunner::Complete(Completion& c) {
  const uint8_t* data = c.readback->data() + c.offset;
  bool guard_ok = true;
  for (uint64_t i = c.guard_begin; i < c.readback_bytes; ++i) {
    guard_ok &= data[i] == kPoison;
  }
  absl::StatusOr<ExecuteResult> result = absl::UnknownError("");
  if (!guard_ok) {
    result = absl::InternalError("a kernel wrote past the end of its output buffer");
  } else {
    const absl::Time start = absl::Now();
    ExecuteResult r;
    r.output.resize(c.result_bytes);
    Copy(r.output.data(), data, c.result_bytes);
    r.timing.output = absl::Now() - start;
    r.timing.execution_requests = c.execution_requests;
    r.timing.counts_execution = c.counts_execution;
    copy_out_us_.fetch_add(static_cast<uint64_t>(absl::ToInt64Microseconds(r.timing.output)));
    result = std::move(r);
  }
  c.readback.reset();
  c.done(std::move(result));
}

void GpuRunner::CompletionLoop() {
  for (;;) {
    InFlight b;
    {
      MutexLock lock(&flight_mu_);
      while (!completion_stopping_ && in_flight_.empty()) flight_cv_.Wait(&flight_mu_);
      if (in_flight_.empty()) return;
      b = std::move(in_flight_.front());
      in_flight_.pop_front();
    }
    const absl::Status waited = fence_->Wait(b.fence_value);
    gpu_us_.fetch_add(static_cast<uint64_t>(
        absl::ToInt64Microseconds(absl::Now() - b.submitted)));
    if (!waited.ok()) {
      MarkLost(waited);
    } else if (fence_->completed() == UINT64_MAX) {
      // What a removed device's fences complete with.
      MarkLost(absl::UnavailableError("device removed (fence at UINT64_MAX)"));
    }
    readback_arenas_->Reclaim(b.fence_value);
    // A device lost before this point may have left any of the batch's
    // outputs unwritten: none of them is trusted.
    const bool lost_now = lost();
    if (b.chain_done) b.chain_done(lost_now ? lost_status() : absl::OkStatus());
    // Large outputs one by one on the copy pool; small ones in chunks, the
    // first chunk on this thread, so callbacks run in parallel. The
    // completions stay in one vector that the tasks share (a Completion
    // carries a whole request: moving each cost the serving path ~1%), and
    // are destroyed with it after the last task.
    auto all = std::make_shared<std::vector<Completion>>(std::move(b.completions));
    auto small = std::make_shared<std::vector<size_t>>();  // indices into *all
    small->reserve(all->size());
    for (size_t i = 0; i < all->size(); ++i) {
      Completion& c = (*all)[i];
      if (lost_now) {
        c.readback.reset();
        FailLost(c.request, c.state, c.done);
        continue;
      }
      c.state.reset();  // the upload copy is done with
      if (copy_pool_ && c.result_bytes >= options_.parallel_copy_bytes) {
        if (!copy_pool_->Schedule([this, all, i] { Complete((*all)[i]); })) Complete(c);
      } else {
        small->push_back(i);
      }
    }
    const size_t chunk = std::max<uint32_t>(1, options_.completion_chunk);
    for (size_t at = chunk; copy_pool_ && at < small->size(); at += chunk) {
      const size_t end = std::min(small->size(), at + chunk);
      auto part = [this, all, small, at, end] {
        for (size_t k = at; k < end; ++k) Complete((*all)[(*small)[k]]);
      };
      if (!copy_pool_->Schedule(part)) part();
    }
    for (size_t k = 0; k < std::min(small->size(), copy_pool_ ? chunk : small->size()); ++k) {
      Complete((*all)[(*small)[k]]);
    }
    {
      MutexLock lock(&flight_mu_);
      --batches_in_flight_;
    }
    ReleaseFrame(b.frame);
  }
}

}  // namespace dmls::d3d12
