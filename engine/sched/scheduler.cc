#include "engine/sched/scheduler.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "engine/core/thread_name.h"

namespace dmls::sched {

Scheduler::Scheduler(Runner* runner, SchedulerOptions options)
    : runner_(runner),
      options_(options),
      clock_(options.clock ? options.clock : RealClock::Get()),
      admission_(options.admission ? std::make_unique<Admission>(*options.admission, clock_)
                                   : nullptr),
      batcher_(options.policy) {
  runner_->SetCapacityListener([this] { Poke(); });
  thread_ = std::thread([this] {
    SetThreadName("dmls-dispatch");
    DispatchLoop();
  });
}

Scheduler::~Scheduler() { Shutdown(); }

namespace {

// `done`, holding `admitted` until it has run (an ExecuteCallback or a
// ChainCallback).
template <typename Callback>
Callback Holding(Admitted admitted, Callback done) {
  return [admitted = std::move(admitted), done = std::move(done)](auto result) mutable {
    done(std::move(result));
    admitted = Admitted();
  };
}

}  // namespace

void Scheduler::Reject(Job& job, absl::Status status) {
  {
    MutexLock lock(&mu_);
    ++stats_.rejected;
  }
  job.state.reset();  // release what Prepare reserved before answering
  job.Fail(std::move(status));
}

void Scheduler::Submit(ExecuteRequest request, ExecuteCallback done) {
  Job job;
  job.request = std::move(request);
  job.done = std::move(done);
  Start(job);
}

void Scheduler::SubmitChain(ChainRequest chain, ChainCallback done) {
  Job job;
  job.chain = std::make_unique<ChainJob>();
  job.chain->request = std::move(chain);
  job.chain->done = std::move(done);
  Start(job);
}

void Scheduler::SubmitOrdered(std::unique_ptr<JobState> state, ChainCallback done) {
  Job job;
  job.chain = std::make_unique<ChainJob>();
  job.chain->done = std::move(done);
  job.state = std::move(state);
  Enqueue(job, clock_->Now());
}

void Scheduler::Start(Job& job) {
  if (admission_ != nullptr) {
    absl::StatusOr<Admitted> admitted = admission_->Admit(
        job.chain ? ChainWork(job.chain->request) : ExecuteWork(job.request));
    if (!admitted.ok()) return Reject(job, admitted.status());
    // Held while the request lives, when it holds a slot or bytes (the
    // checks alone hold nothing and need no wrapping callback).
    const AdmissionOptions& o = admission_->options();
    if (o.max_in_flight != 0 || o.memory_budget_bytes != 0) {
      if (job.chain) {
        job.chain->done.inner() =
            Holding(std::move(*admitted), std::move(job.chain->done.inner()));
      } else {
        job.done.inner() = Holding(std::move(*admitted), std::move(job.done.inner()));
      }
    }
  }
  if (job.Cancelled()) {
    return Reject(job, absl::CancelledError("the call was cancelled before execution"));
  }
  const absl::Time now = clock_->Now();
  if (now >= job.deadline()) {
    return Reject(job, absl::DeadlineExceededError("the deadline passed before execution"));
  }
  absl::StatusOr<Prepared> prepared =
      job.chain ? runner_->PrepareChain(job.chain->request) : runner_->Prepare(job.request);
  if (!prepared.ok()) return Reject(job, prepared.status());

  job.key = std::move(prepared->key);
  job.bytes = prepared->bytes;
  job.state = std::move(prepared->state);
  Enqueue(job, now);
}

void Scheduler::Enqueue(Job& job, absl::Time now) {
  job.enqueued = now;
  job.staged = clock_->Now();
  job.seq = next_seq_.fetch_add(1);
  if (!job.chain && TakeInline(job)) {
    const absl::Time handed = clock_->Now();
    if (SchedulerObserver* observer = options_.observer.get()) {
      observer->OnQueued();
      observer->OnBatch(1, job.bytes);
    }
    StampJob(job, handed);
    runner_->RunInline(std::move(job));
    return;
  }
  // The queue node is made here, outside the lock (batcher.h).
  Batcher::Entry entry = Batcher::MakeEntry(std::move(job));
  absl::Status queued;
  {
    MutexLock lock(&mu_);
    if (stopping_) {
      queued = absl::UnavailableError("the engine is shutting down");
    } else {
      queued = batcher_.Enqueue(entry);
      if (queued.ok()) {
        ++stats_.admitted;
        if (options_.observer) options_.observer->OnQueued();
        cv_.Signal();
        return;
      }
    }
  }
  Reject(entry.mapped(), std::move(queued));
}

bool Scheduler::TakeInline(const Job& job) {
  // A policy that waits for company would hold a lone request back.
  if (options_.policy.max_queue_delay > absl::ZeroDuration()) return false;
  MutexLock lock(&mu_);
  if (stopping_ || batcher_.size() != 0 || !runner_->AcceptInline(job)) return false;
  ++stats_.admitted;
  ++stats_.batches;
  ++stats_.batched_requests;
  stats_.largest_batch = std::max<uint64_t>(stats_.largest_batch, 1);
  return true;
}

void Scheduler::StampJob(Job& job, absl::Time now) {
  SchedulerObserver* const observer = options_.observer.get();
  if (observer != nullptr) observer->OnWaited(now - job.enqueued);
  // The run time ends where the runner answers (a chain's result has
  // no ExecuteTiming: only the observer hears).
  const absl::Duration input = job.staged - job.enqueued;
  if (job.chain) {
    job.chain->done.Stamp(clock_.get(), observer, input, now - job.staged, now);
  } else {
    job.done.Stamp(clock_.get(), observer, input, now - job.staged, now);
  }
}

void Scheduler::Stamp(Batch& batch, absl::Time now) {
  uint64_t bytes = 0;
  for (std::vector<Job>& group : batch.groups) {
    for (Job& job : group) {
      bytes += job.bytes;
      StampJob(job, now);
    }
  }
  if (SchedulerObserver* observer = options_.observer.get()) {
    observer->OnBatch(batch.size(), bytes);
  }
}

void Scheduler::Poke() {
  MutexLock lock(&mu_);
  poked_ = true;
  cv_.Signal();
}

void Scheduler::DispatchLoop() {
  absl::Time next_cancel_scan = clock_->Now();
  for (;;) {
    Batcher::Taken taken;
    std::vector<Job> dropped;
    bool done = false;
    {
      MutexLock lock(&mu_);
      for (;;) {
        const absl::Time now = clock_->Now();
        if (stopping_) {
          // Everything still queued goes to the runner (Shutdown's drain).
          if (batcher_.size() == 0) {
            done = true;
          } else if (runner_->CanAccept()) {
            taken = batcher_.TakeEntries(now, &dropped);
          }
        } else {
          const bool scan = now >= next_cancel_scan;
          if (scan) next_cancel_scan = now + options_.cancel_scan_interval;
          dropped = batcher_.TakeExpired(now, scan);
          if (batcher_.Due(now) && runner_->CanAccept()) {
            taken = batcher_.TakeEntries(now, &dropped);
          }
        }
        if (done || !taken.empty() || !dropped.empty()) break;
        poked_ = false;
        // Sleep until something changes: a Submit, runner capacity (both
        // signal), a queued deadline, the next cancellation scan, or the
        // batching delay running out. A due batch that the runner cannot
        // take waits for its capacity signal, not in a spin.
        absl::Time wake = absl::InfiniteFuture();
        if (batcher_.size() > 0) {
          wake = std::min(batcher_.NextDeadline(), next_cancel_scan);
          if (!batcher_.Due(now)) wake = std::min(wake, batcher_.NextDue());
        }
        if (clock_->IsReal() && wake != absl::InfiniteFuture()) {
          cv_.WaitUntil(&mu_, wake);
        } else {
          cv_.Wait(&mu_);
        }
      }
      stats_.expired += dropped.size();
      if (!taken.empty()) {
        const size_t n = taken.size();
        ++stats_.batches;
        stats_.batched_requests += n;
        stats_.largest_batch = std::max<uint64_t>(stats_.largest_batch, n);
      }
    }
    // Jobs leave their queue nodes without the lock (batcher.h).
    Batch batch = Batcher::Unpack(std::move(taken));
    const absl::Time now = clock_->Now();
    if (SchedulerObserver* observer = options_.observer.get()) {
      if (!dropped.empty()) observer->OnDropped(dropped.size());
    }
    if (!batch.empty()) Stamp(batch, now);
    for (Job& job : dropped) {
      job.state.reset();
      if (job.Cancelled()) {
        job.Fail(absl::CancelledError("the call was cancelled while queued"));
      } else if (job.deadline() <= now) {
        job.Fail(absl::DeadlineExceededError(
            "the deadline passed while the request was queued"));
      } else {
        job.Fail(absl::CancelledError("the request was dropped"));
      }
    }
    if (!batch.empty()) runner_->Run(std::move(batch));
    if (done) return;
  }
}

void Scheduler::Shutdown() {
  MutexLock once(&shutdown_mu_);
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    cv_.Signal();
  }
  if (thread_.joinable()) thread_.join();
  runner_->Drain();
}

SchedulerStats Scheduler::stats() const {
  MutexLock lock(&mu_);
  SchedulerStats s = stats_;
  s.queued = batcher_.size();
  s.in_flight = admission_ != nullptr ? admission_->in_flight() : 0;
  return s;
}

}  // namespace dmls::sched
