#include "engine/sched/batcher.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/ops/rule_status.h"

namespace dmls::sched {

Batcher::Entry Batcher::MakeEntry(Job job) {
  const Order order{job.is_chain() ? absl::InfinitePast() : job.request.deadline, job.seq};
  Queue one;
  one.emplace(order, std::move(job));
  return one.extract(one.begin());
}

absl::Status Batcher::Enqueue(Entry& entry) {
  if (size_ >= policy_.max_queue_depth) {
    return ops::RuleStatus(
        absl::StatusCode::kResourceExhausted, "QUEUE_FULL", "",
        absl::StrCat("the server already has ", size_,
                     " requests queued (max_queue_depth); retry later"));
  }
  const Job& job = entry.mapped();
  arrivals_.insert({job.enqueued, job.seq});
  bytes_ += job.bytes;
  ++size_;
  queues_[job.is_chain() ? ChainLane() : job.key].insert(std::move(entry));
  return absl::OkStatus();
}

size_t Batcher::Taken::size() const {
  size_t n = 0;
  for (const auto& g : groups) n += g.size();
  return n;
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

Batcher::Entry Batcher::Extract(std::map<std::string, Queue>::iterator q,
                                Queue::iterator it) {
  arrivals_.erase({it->second.enqueued, it->second.seq});
  bytes_ -= it->second.bytes;
  --size_;
  Entry entry = q->second.extract(it);
  if (q->second.empty()) queues_.erase(q);
  return entry;
}

Batcher::Taken Batcher::TakeEntries(absl::Time now, std::vector<Job>* dropped) {
  Taken taken;
  const uint64_t max_requests = std::max<uint32_t>(1, policy_.max_batch_requests);
  uint64_t requests = 0;
  uint64_t bytes = 0;
  while (requests < max_requests && !queues_.empty()) {
    // The queue whose head has the earliest deadline (then the oldest seq).
    auto head = [](const Queue& jobs) {
      const Job& job = jobs.begin()->second;
      return Order{job.deadline(), job.seq};
    };
    auto best = queues_.begin();
    for (auto q = queues_.begin(); q != queues_.end(); ++q) {
      if (head(q->second) < head(best->second)) best = q;
    }
    std::vector<Entry> group;
    group.reserve(std::min<uint64_t>(best->second.size(), max_requests - requests));
    bool full = false;
    while (requests < max_requests) {
      auto it = best->second.begin();
      const Job& job = it->second;
      const bool expired = job.deadline() <= now || job.Cancelled();
      if (!expired && requests > 0 &&
          bytes + job.bytes > policy_.max_batch_bytes) {
        full = true;
        break;
      }
      const bool last_in_queue = best->second.size() == 1;
      Entry entry = Extract(best, it);
      if (expired) {
        dropped->push_back(std::move(entry.mapped()));
      } else {
        bytes += entry.mapped().bytes;
        ++requests;
        group.push_back(std::move(entry));
      }
      if (last_in_queue) break;  // `best` was erased with its last job
    }
    if (!group.empty()) taken.groups.push_back(std::move(group));
    if (full) break;
  }
  return taken;
}

Batch Batcher::Unpack(Taken taken) {
  Batch batch;
  batch.groups.reserve(taken.groups.size());
  for (std::vector<Entry>& entries : taken.groups) {
    std::vector<Job>& group = batch.groups.emplace_back();
    group.reserve(entries.size());
    for (Entry& entry : entries) group.push_back(std::move(entry.mapped()));
  }
  return batch;
}

std::vector<Job> Batcher::TakeExpired(absl::Time now, bool scan_cancelled) {
  std::vector<Job> out;
  for (auto q = queues_.begin(); q != queues_.end();) {
    auto next = std::next(q);
    Queue& jobs = q->second;
    const bool fifo = q->first == ChainLane();
    for (auto it = jobs.begin(); it != jobs.end();) {
      const bool late = it->second.deadline() <= now;
      // Deadline order: none later is late (the chain lane has no such order).
      if (!late && !scan_cancelled && !fifo) break;
      if (late || it->second.Cancelled()) {
        auto victim = it++;
        const bool last = jobs.size() == 1;
        out.push_back(std::move(Extract(q, victim).mapped()));
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
