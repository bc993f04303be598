// CpuEngineOptions: the knobs of the reference CPU engine (cpu_engine.h).
// Plain value type.
#ifndef DMLSERVE_ENGINE_CPU_CPU_ENGINE_OPTIONS_H_
#define DMLSERVE_ENGINE_CPU_CPU_ENGINE_OPTIONS_H_

#include <cstdint>

#include "engine/sched/scheduler.h"

namespace dmls {

struct CpuEngineOptions {
  // Worker threads; 0 means std::thread::hardware_concurrency().
  int threads = 0;
  // Largest output buffer (TotalTensorSizeInBytes, or the aliased range
  // in-place) one request may produce; above it RESOURCE_EXHAUSTED. The
  // engine also holds per-element bookkeeping (about 3x8 bytes per element
  // for MVN), so this bounds its memory per request.
  uint64_t max_buffer_bytes = uint64_t{1} << 30;
  // Requests of at most this many bytes (payloads plus output) that find
  // the queue empty and a worker free run on the submitting thread
  // (sched::Runner::AcceptInline): a few microseconds of work, where a hop
  // to the dispatch thread and a worker would cost more than the work.
  // 0: every request goes through the queue to the pool.
  uint64_t inline_max_bytes = uint64_t{16} << 10;
  // Admission and queueing in front of the pool.
  sched::SchedulerOptions scheduler;
};

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CPU_CPU_ENGINE_OPTIONS_H_
