#include "engine/sched/thread_pool.h"

#include <utility>

#include "engine/core/thread_name.h"

namespace dmls::sched {

ThreadPool::ThreadPool(ThreadPoolOptions options) {
  int n = options.threads;
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  if (n <= 0) n = 1;
  workers_.reserve(n);
  for (int i = 0; i < n; ++i) {
    workers_.emplace_back([this, name = options.name] {
      SetThreadName(name);
      WorkerLoop();
    });
  }
}

ThreadPool::~ThreadPool() { Shutdown(); }

bool ThreadPool::Schedule(absl::AnyInvocable<void()> task) {
  {
    MutexLock lock(&mu_);
    if (stopping_) return false;
    queue_.push_back(std::move(task));
  }
  cv_.Signal();
  return true;
}

void ThreadPool::Shutdown() {
  MutexLock join_lock(&join_mu_);
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

size_t ThreadPool::pending() const {
  MutexLock lock(&mu_);
  return queue_.size();
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    absl::AnyInvocable<void()> task;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) cv_.Wait(&mu_);
      // Drain before exiting: queued work is finished, not dropped.
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace dmls::sched
