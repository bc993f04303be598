#include "bench/engine_throughput.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/bench_ops.h"
#include "engine/core/execute_request.h"
#include "engine/d3d12/dxbc_engine.h"
#include "engine/d3d12/gpu_engine.h"

namespace dmls::bench {

void MeasureEngine(const BenchOptions& f) {
  for (uint32_t max_batch : f.engine_max_batch) {
    d3d12::GpuEngineOptions o;
    o.device = f.device;
    o.logger = nullptr;
    o.scheduler.policy.max_batch_requests = max_batch;
    absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> engine =
        d3d12::CreateGpuEngine(std::move(o));
    if (!engine.ok()) {
      std::printf("engine: error: %s\n", std::string(engine.status().message()).c_str());
      return;
    }
    absl::StatusOr<OperatorDesc> op = MakeOp("celu", f.engine_elements, 1, f.data_type);
    if (!op.ok()) {
      std::printf("engine: error: %s\n", std::string(op.status().message()).c_str());
      return;
    }
    const std::string payload(op->input->total_tensor_size_in_bytes, '\0');
    const int threads = std::max(1, f.engine_threads);
    const int window = std::max(1, f.engine_in_flight / threads);
    std::atomic<int> failed{0};
    auto submit_all = [&](int count) {
      std::vector<std::thread> submitters;
      for (int t = 0; t < threads; ++t) {
        const int mine = count / threads + (t < count % threads ? 1 : 0);
        submitters.emplace_back([&, mine] {
          std::mutex mu;
          std::condition_variable cv;
          int outstanding = 0;
          for (int i = 0; i < mine; ++i) {
            {
              std::unique_lock<std::mutex> lock(mu);
              cv.wait(lock, [&] { return outstanding < window; });
              ++outstanding;
            }
            ExecuteRequest r;
            r.op = *op;
            r.input = payload;
            (*engine)->Execute(std::move(r), [&](absl::StatusOr<ExecuteResult> res) {
              if (!res.ok()) failed.fetch_add(1);
              std::lock_guard<std::mutex> lock(mu);
              // Wake the submitter only when it can be waiting: at the
              // window's edge or at the end (a futex per request would
              // measure the harness, not the engine).
              if (--outstanding == window - 1 || outstanding == 0) cv.notify_all();
            });
          }
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return outstanding == 0; });
        });
      }
      for (std::thread& t : submitters) t.join();
    };
    submit_all(std::min(2000, f.engine_requests));  // warm-up: pipelines, arenas
    const d3d12::GpuEngineStats before = (*engine)->stats();
    const auto start = std::chrono::steady_clock::now();
    submit_all(f.engine_requests);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const d3d12::GpuEngineStats after = (*engine)->stats();
    const uint64_t batches = after.batches - before.batches;
    const uint64_t requests = after.requests - before.requests;
    std::printf("engine: max_batch=%u: %d CELU requests of %llu elements, %d in flight "
                "from %d threads: %.0f requests/s, %.2f us per request, %.1f requests "
                "per command list, %.1f requests per dispatch, %llu resources and %llu "
                "views created while measuring, %d failed (fence: %llu kicks, %llu lost "
                "events)\n",
                max_batch, f.engine_requests,
                static_cast<unsigned long long>(f.engine_elements), window * threads,
                threads, f.engine_requests / seconds, seconds / f.engine_requests * 1e6,
                batches ? static_cast<double>(requests) / batches : 0.0,
                after.dispatches > before.dispatches
                    ? static_cast<double>(requests) / (after.dispatches - before.dispatches)
                    : 0.0,
                static_cast<unsigned long long>(after.pool.resources_created -
                                                before.pool.resources_created),
                static_cast<unsigned long long>(after.views_created - before.views_created),
                failed.load(), static_cast<unsigned long long>(after.fence_kicks),
                static_cast<unsigned long long>(after.fence_lost_events));
    (*engine)->Shutdown();
  }
}

}  // namespace dmls::bench
