#include "engine/sched/batcher.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/ops/rule_status.h"

namespace dmls::sched {

absl::Status Batcher::Enqueue(Job& job) {
  if (size_ >= policy_.max_queue_depth) {
    return ops::RuleStatus(
        absl::StatusCode::kResourceExhausted, "QUEUE_FULL", "",
        absl::StrCat("the server already has ", size_,
                     " requests queued (max_queue_depth); retry later"));
  }
  arrivals_.insert({job.enqueued, job.seq});
  bytes_ += job.bytes;
  ++size_;
  if (job.is_chain) {
    const Order order{absl::InfinitePast(), job.seq};
    queues_[ChainLane()].emplace(order, std::move(job));
    return absl::OkStatus();
  }
  const Order order{job.request.deadline, job.seq};
  queues_[job.key].emplace(order, std::move(job));
  return absl::OkStatus();
}

const std::string& Batcher::ChainLane() {
  static const std::string* const lane = new std::string("\0chains", 7);
  return *lane;
}

bool Batcher::Due(absl::Time now) const {
  if (size_ == 0) return false;
  if (size_ >= policy_.max_batch_requests || bytes_ >= policy_.max_batch_bytes) {
    return true;
  }
  return arrivals_.begin()->first + policy_.max_queue_delay <= now;
}

void Batcher::Remove(std::map<std::string, std::map<Order, Job>>::iterator q,
                     std::map<Order, Job>::iterator it) {
  arrivals_.erase({it->second.enqueued, it->second.seq});
  bytes_ -= it->second.bytes;
  --size_;
  q->second.erase(it);
  if (q->second.empty()) queues_.erase(q);
}

Batch Batcher::TakeBatch(absl::Time now, std::vector<Job>* dropped) {
  Batch batch;
  const uint64_t max_requests = std::max<uint32_t>(1, policy_.max_batch_requests);
  uint64_t requests = 0;
  uint64_t bytes = 0;
  while (requests < max_requests && !queues_.empty()) {
    // The queue whose head has the earliest deadline (then the oldest seq).
    auto head = [](const std::map<Order, Job>& jobs) {
      const Job& job = jobs.begin()->second;
      return Order{job.deadline(), job.seq};
    };
    auto best = queues_.begin();
    for (auto q = queues_.begin(); q != queues_.end(); ++q) {
      if (head(q->second) < head(best->second)) best = q;
    }
    std::vector<Job> group;
    bool full = false;
    while (!best->second.empty() && requests < max_requests) {
      auto it = best->second.begin();
      Job& job = it->second;
      const bool expired = job.deadline() <= now || job.Cancelled();
      if (!expired && requests > 0 &&
          bytes + job.bytes > policy_.max_batch_bytes) {
        full = true;
        break;
      }
      Job taken = std::move(job);
      const bool last_in_queue = best->second.size() == 1;
      Remove(best, it);
      if (expired) {
        dropped->push_back(std::move(taken));
      } else {
        bytes += taken.bytes;
        ++requests;
        group.push_back(std::move(taken));
      }
      if (last_in_queue) break;  // `best` was erased with its last job
    }
    if (!group.empty()) batch.groups.push_back(std::move(group));
    if (full) break;
  }
  return batch;
}

std::vector<Job> Batcher::TakeExpired(absl::Time now, bool scan_cancelled) {
  std::vector<Job> out;
  for (auto q = queues_.begin(); q != queues_.end();) {
    auto next = std::next(q);
    std::map<Order, Job>& jobs = q->second;
    const bool fifo = q->first == ChainLane();
    for (auto it = jobs.begin(); it != jobs.end();) {
      const bool late = it->second.deadline() <= now;
      // Deadline order: none later is late (the chain lane has no such order).
      if (!late && !scan_cancelled && !fifo) break;
      if (late || it->second.Cancelled()) {
        auto victim = it++;
        out.push_back(std::move(victim->second));
        const bool last = jobs.size() == 1;
        Remove(q, victim);
        if (last) break;
      } else {
        ++it;
      }
    }
    q = next;
  }
  return out;
}

absl::Time Batcher::NextDue() const {
  if (size_ == 0) return absl::InfiniteFuture();
  return arrivals_.begin()->first + policy_.max_queue_delay;
}

absl::Time Batcher::NextDeadline() const {
  absl::Time t = absl::InfiniteFuture();
  for (const auto& [key, jobs] : queues_) {
    if (key != ChainLane()) {
      t = std::min(t, jobs.begin()->first.first);
      continue;
    }
    for (const auto& [order, job] : jobs) t = std::min(t, job.deadline());
  }
  return t;
}

}  // namespace dmls::sched
