// Batcher: the queue side of dynamic batching. Holds admitted jobs in one
// queue per batch key, each ordered earliest deadline first (then by
// admission order), and decides when a batch is due under a BatchPolicy.
// Resident chains (Job::is_chain()) share one more queue, the chain lane, in
// admission order whatever their deadlines: chains that touch the same
// resident buffer reach the runner in the order they were submitted
// (serializing all chains is what the resident executor did before they
// went through the scheduler). Each job still expires at its own deadline.
//
// It has no thread and reads no clock: the caller passes `now`, so the
// policy is tested deterministically (batcher_test.cc). The Scheduler owns
// one and guards it with its mutex. Thread-compatible.
#ifndef DMLSERVE_ENGINE_SCHED_BATCHER_H_
#define DMLSERVE_ENGINE_SCHED_BATCHER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engine/sched/batch_policy.h"
#include "engine/sched/job.h"

namespace dmls::sched {

class Batcher {
 public:
  // (deadline, seq); in the chain lane (InfinitePast, seq): FIFO.
  using Order = std::pair<absl::Time, uint64_t>;
  using Queue = std::map<Order, Job>;
  // A job in its own queue node. MakeEntry allocates and fills it and
  // Unpack frees it, both without the caller's lock; Enqueue and TakeEntries
  // only link and unlink nodes, so the lock the scheduler holds around them
  // never covers an allocation or a move of a job (a Job carries a whole
  // request: moving and freeing them under the lock held up submitters).
  using Entry = Queue::node_type;
  // Groups of entries as TakeEntries removed them.
  struct Taken {
    std::vector<std::vector<Entry>> groups;
    size_t size() const;
    bool empty() const { return groups.empty(); }
  };

  explicit Batcher(BatchPolicy policy) : policy_(policy) {}

  // `job` (its `enqueued` and `seq` set) in a new entry, ordered in its
  // queue by deadline then seq (a chain: by seq alone).
  static Entry MakeEntry(Job job);

  // Queues `entry` (a chain goes to the chain lane whatever its key). When
  // the queue is at max_queue_depth it returns RESOURCE_EXHAUSTED (rule
  // QUEUE_FULL) and `entry` is left with the caller, untouched.
  absl::Status Enqueue(Entry& entry);

  // Whether a batch is due at `now` (see BatchPolicy).
  bool Due(absl::Time now) const;

  // Unlinks the next batch's entries (under the caller's lock): groups
  // taken in order of their first job's deadline until max_batch_requests
  // or max_batch_bytes is reached (a first job above max_batch_bytes is
  // taken alone). Jobs that are cancelled or past their deadline at `now`
  // are not batched: they are moved to `*dropped` for the caller to fail.
  // Empty when nothing is queued.
  Taken TakeEntries(absl::Time now, std::vector<Job>* dropped);
  // The batch of `taken` (without the lock): moves the jobs out of their
  // entries and frees them.
  static Batch Unpack(Taken taken);

  // Removes jobs past their deadline at `now` (cheap: deadlines are queue
  // order, except in the chain lane, which is scanned whole) and, when
  // `scan_cancelled`, every cancelled job (a full scan).
  std::vector<Job> TakeExpired(absl::Time now, bool scan_cancelled);

  // When Due() turns true without a new job: the oldest job's enqueue time
  // plus max_queue_delay. InfiniteFuture() when empty.
  absl::Time NextDue() const;
  // The earliest deadline of a queued job; InfiniteFuture() when none.
  absl::Time NextDeadline() const;

  size_t size() const { return size_; }
  uint64_t bytes() const { return bytes_; }
  size_t keys() const { return queues_.size(); }
  const BatchPolicy& policy() const { return policy_; }

 private:
  // The chain lane's key (no runner makes a key with a NUL byte).
  static const std::string& ChainLane();

  // Unlinks `it` from its queue `q` (erasing `q` when it empties) and
  // returns its entry.
  Entry Extract(std::map<std::string, Queue>::iterator q, Queue::iterator it);

  const BatchPolicy policy_;
  std::map<std::string, Queue> queues_;
  // (enqueued, seq) of every queued job: the oldest decides max_queue_delay.
  std::set<std::pair<absl::Time, uint64_t>> arrivals_;
  size_t size_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_BATCHER_H_
