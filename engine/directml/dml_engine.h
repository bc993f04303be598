// DmlEngine: an Engine (engine/core/engine.h) that runs every request
// through Microsoft's DirectML.dll (dml_device.h): the request's
// OperatorDesc mapped to a DML_OPERATOR_DESC (op_mapping.h), created,
// compiled and initialised once per distinct desc (cached by OperatorKey,
// refusals included; an operator with DML_TENSOR_FLAG_OWNED_BY_DML inputs
// is compiled and initialised for each request, since DirectML takes that
// data at initialisation and initialises a compiled operator once), then bound (binding table over one shader-visible
// descriptor heap; temporary and persistent resources as the compiled
// operator asks), dispatched through an IDMLCommandRecorder and read back.
// Windows only. It is the reference the other engines are compared with
// (docs/DIRECTML.md) and `dmlserve --device=directml`'s engine. Requests go
// through engine/sched's scheduler (queueing earliest deadline first,
// expiry, cancellation, the queue limit and the scheduler's metrics) to a
// sched::PoolRunner of one thread, which runs them one at a time with a
// fence wait after each (no coalescing, no arenas: one work buffer grown on
// demand).
//
// What DirectML refuses (CreateOperator or CompileOperator failing with
// E_INVALIDARG, E_NOTIMPL or DXGI_ERROR_UNSUPPORTED, e.g. a data type the
// device does not support) is INVALID_ARGUMENT with the rule
// DIRECTML_REFUSED, the DirectML operator name, the HRESULT and whether the
// device reports the data types as supported. A removed device (Wine's
// vkd3d reports DXGI_ERROR_DEVICE_REMOVED) is a DeviceLostError and the
// engine stays unhealthy; callers create a new one.
//
// Ownership: owns its DmlDevice, queue, command list, fence, heap, buffers,
// the compiled-operator cache, its runner and scheduler. Thread-safe:
// Execute may be called from any thread; requests run on the runner's
// thread (or inline on the caller's, for small ones offered while the
// queue is empty), serialised by one mutex.
#ifndef DMLSERVE_ENGINE_DIRECTML_DML_ENGINE_H_
#define DMLSERVE_ENGINE_DIRECTML_DML_ENGINE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "engine/core/mutex.h"
#include "engine/d3d12/com_ptr.h"
#include "engine/d3d12/fence.h"
#include "engine/directml/dml_device.h"
#include "engine/sched/pool_runner.h"
#include "engine/sched/scheduler.h"

namespace dmls::directml {

// The rule of a DirectML refusal (INVALID_ARGUMENT).
inline constexpr char kDirectMlRefused[] = "DIRECTML_REFUSED";

struct DmlEngineOptions : DmlDeviceOptions {
  // Queueing in front of the runner. No admission by default: the engine
  // is also the reference that passes every desc to DirectML (the server
  // admits requests itself and sets its batching policy here).
  sched::SchedulerOptions scheduler = NoAdmission();
  // Requests of at most this many bytes (payloads plus output) that find
  // the queue empty run on the submitting thread (sched::PoolRunner).
  uint64_t inline_max_bytes = uint64_t{16} << 10;

 private:
  static sched::SchedulerOptions NoAdmission() {
    sched::SchedulerOptions s;
    s.admission.reset();
    return s;
  }
};

class DmlEngine : public Engine {
 public:
  static absl::StatusOr<std::unique_ptr<DmlEngine>> Create(const DmlEngineOptions& options);
  ~DmlEngine() override;

  DeviceInfo device_info() const override { return device_->device_info(); }
  bool Healthy() const override;
  // Queues the request (sched::Scheduler::Submit); `done` is called once,
  // on the runner's thread or, inline, before returning. CANCELLED /
  // DEADLINE_EXCEEDED before any work as the other engines; UNAVAILABLE
  // after Shutdown or once the device is lost.
  void Execute(ExecuteRequest request, ExecuteCallback done) override;
  void Shutdown() override;
  std::vector<std::pair<std::string, uint64_t>> Counters() const override;

  const DmlDevice& device() const { return *device_; }

 private:
  struct Compiled;
  struct Buffer {
    d3d12::ComPtr<ID3D12Resource> resource;
    uint64_t bytes = 0;
  };
  DmlEngine(std::unique_ptr<DmlDevice> device, const DmlEngineOptions& options);
  // The runner's function: one request, serialised by mu_.
  absl::StatusOr<ExecuteResult> RunLocked(ExecuteRequest& request);
  absl::Status Init();

  absl::StatusOr<ExecuteResult> Run(const ExecuteRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The cache entry of `op`: compiled and initialised, or the refusal.
  absl::StatusOr<const Compiled*> GetCompiled(const OperatorDesc& op)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::unique_ptr<Compiled>> Compile(const OperatorDesc& op)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Initialises `c` (its own submission, waited for): writes its
  // persistent resource and takes its owned inputs from `inputs` (one
  // binding per operator input, a null buffer where not owned; nullptr
  // when it owns none).
  absl::Status Initialize(const Compiled& c, const DML_BUFFER_BINDING* inputs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Grows `buffer` to at least `bytes` (a new committed resource).
  absl::Status Ensure(Buffer& buffer, uint64_t bytes, D3D12_HEAP_TYPE heap,
                      D3D12_RESOURCE_STATES state, D3D12_RESOURCE_FLAGS flags)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status EnsureHeap(UINT descriptors) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Resets the command list for a new recording / closes, submits and waits.
  absl::Status Begin() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status SubmitAndWait() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `status` unless the device has been removed (D3D12 says so, or a call
  // failed with UNAVAILABLE, i.e. DXGI_ERROR_DEVICE_REMOVED): then the
  // engine is lost and the answer a DeviceLostError (execute_request.h).
  absl::Status CheckDevice(absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<DmlDevice> device_;
  mutable Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  bool lost_ ABSL_GUARDED_BY(mu_) = false;
  d3d12::ComPtr<ID3D12CommandQueue> queue_ ABSL_GUARDED_BY(mu_);
  d3d12::ComPtr<ID3D12CommandAllocator> allocator_ ABSL_GUARDED_BY(mu_);
  d3d12::ComPtr<ID3D12GraphicsCommandList> list_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<d3d12::Fence> fence_ ABSL_GUARDED_BY(mu_);
  d3d12::ComPtr<IDMLCommandRecorder> recorder_ ABSL_GUARDED_BY(mu_);
  d3d12::ComPtr<ID3D12DescriptorHeap> heap_ ABSL_GUARDED_BY(mu_);
  UINT heap_size_ ABSL_GUARDED_BY(mu_) = 0;
  // One device buffer holding every tensor of a request at 256-byte aligned
  // offsets, its upload and readback twins, and the shared temporary
  // resource; each grows on demand and is reused (requests are serial).
  Buffer work_ ABSL_GUARDED_BY(mu_);
  Buffer upload_ ABSL_GUARDED_BY(mu_);
  Buffer readback_ ABSL_GUARDED_BY(mu_);
  Buffer temporary_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::unique_ptr<Compiled>> compiled_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Status> refused_ ABSL_GUARDED_BY(mu_);
  uint64_t requests_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t compiles_ ABSL_GUARDED_BY(mu_) = 0;
  // Last, so that they stop (Shutdown joins their threads) before the
  // state above is destroyed.
  sched::PoolRunner runner_;
  sched::Scheduler scheduler_;
};

}  // namespace dmls::directml

#endif  // DMLSERVE_ENGINE_DIRECTML_DML_ENGINE_H_
