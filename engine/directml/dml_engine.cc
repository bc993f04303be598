#include "engine/directml/dml_engine.h"

#include <algorithm>
#include <optional>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/d3d12/hresult.h"
#include "engine/d3d12/objects.h"
#include "engine/directml/op_mapping.h"
#include "engine/ops/rule_status.h"
#include "engine/ops/schema.h"

namespace dmls::directml {
namespace {

constexpr uint64_t kPlacement = 256;  // offsets of the tensors in work_

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::string HexHr(HRESULT hr) { return absl::StrCat("0x", absl::Hex(static_cast<uint32_t>(hr))); }

}  // namespace

struct DmlEngine::Compiled {
  std::unique_ptr<DmlOperator> op;
  d3d12::ComPtr<IDMLCompiledOperator> compiled;
  DML_BINDING_PROPERTIES props{};
  Buffer persistent;
  // Some input is DML_TENSOR_FLAG_OWNED_BY_DML: DirectML takes its data at
  // initialisation (into the persistent resource), and a compiled operator
  // is initialised exactly once, so such an operator is compiled for each
  // request (not cached) and initialised with that request's data; the
  // input is bound as NONE when it executes. Binding it at execution
  // instead is invalid use, which DirectML answers by removing the device.
  bool owned_inputs = false;
};

namespace {

bool OwnedByDml(const DML_BUFFER_TENSOR_DESC* t) {
  return t != nullptr && (t->Flags & DML_TENSOR_FLAG_OWNED_BY_DML) != 0;
}

bool OwnedByDml(const std::optional<TensorDesc>& t) {
  return t.has_value() && (t->flags & kTensorFlagOwnedByDml) != 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DmlEngine>> DmlEngine::Create(const DmlEngineOptions& options) {
  absl::StatusOr<std::unique_ptr<DmlDevice>> device = DmlDevice::Create(options);
  if (!device.ok()) return device.status();
  std::unique_ptr<DmlEngine> engine(new DmlEngine(*std::move(device), options));
  MutexLock lock(&engine->mu_);
  absl::Status init = engine->Init();
  if (!init.ok()) return init;
  return engine;
}

DmlEngine::DmlEngine(std::unique_ptr<DmlDevice> device, const DmlEngineOptions& options)
    : device_(std::move(device)),
      runner_(sched::PoolRunnerOptions{1, options.inline_max_bytes, "DirectML engine is shutting down"},
              [this](ExecuteRequest& request) { return RunLocked(request); }),
      scheduler_(&runner_, options.scheduler) {}

DmlEngine::~DmlEngine() {
  Shutdown();
  MutexLock lock(&mu_);
  compiled_.clear();  // DirectML objects before the device (device_ last)
  recorder_.Reset();
}

absl::Status DmlEngine::Init() {
  ID3D12Device* d3d = device_->d3d();
  absl::Status s = d3d12::CreateDirectQueue(d3d, &queue_, "DmlEngine");
  if (s.ok()) s = d3d12::CreateClosedDirectList(d3d, &allocator_, &list_, "DmlEngine");
  if (!s.ok()) return s;
  absl::StatusOr<std::unique_ptr<d3d12::Fence>> fence = d3d12::Fence::Create(d3d);
  if (!fence.ok()) return fence.status();
  fence_ = *std::move(fence);
  DMLS_RETURN_IF_FAILED(
      device_->dml()->CreateCommandRecorder(__uuidof(IDMLCommandRecorder),
                                            reinterpret_cast<void**>(recorder_.Put())),
      "IDMLDevice::CreateCommandRecorder");
  return absl::OkStatus();
}

bool DmlEngine::Healthy() const {
  MutexLock lock(&mu_);
  return !lost_;
}

void DmlEngine::Shutdown() {
  scheduler_.Shutdown();  // the queued requests run first, as on every engine
  runner_.Shutdown();
  MutexLock lock(&mu_);
  shut_down_ = true;
}

std::vector<std::pair<std::string, uint64_t>> DmlEngine::Counters() const {
  const sched::SchedulerStats s = scheduler_.stats();
  MutexLock lock(&mu_);
  return {{"requests", requests_},
          {"compiled_operators", compiles_},
          {"refused_operators", refused_.size()},
          {"batches", s.batches},
          {"queue_expired", s.expired}};
}

void DmlEngine::Execute(ExecuteRequest request, ExecuteCallback done) {
  scheduler_.Submit(std::move(request), std::move(done));
}

absl::StatusOr<ExecuteResult> DmlEngine::RunLocked(ExecuteRequest& request) {
  absl::StatusOr<ExecuteResult> result;
  {
    MutexLock lock(&mu_);
    if (shut_down_) return absl::UnavailableError("DirectML engine is shutting down");
    ++requests_;
    result = Run(request);
    if (!result.ok()) result = CheckDevice(result.status());
  }
  // Right before the runner calls `done` (execute_request.h).
  if (!result.ok() && IsDeviceLost(result.status())) HandBackRequest(request);
  return result;
}

absl::Status DmlEngine::Ensure(Buffer& buffer, uint64_t bytes, D3D12_HEAP_TYPE heap,
                               D3D12_RESOURCE_STATES state, D3D12_RESOURCE_FLAGS flags) {
  if (bytes <= buffer.bytes) return absl::OkStatus();
  const uint64_t size = std::max<uint64_t>({AlignUp(bytes, kPlacement), 2 * buffer.bytes, 65536});
  D3D12_HEAP_PROPERTIES props = {};
  props.Type = heap;
  const D3D12_RESOURCE_DESC desc = d3d12::BufferDesc(size, flags);
  buffer.resource.Reset();
  buffer.bytes = 0;
  DMLS_RETURN_IF_FAILED(
      device_->d3d()->CreateCommittedResource(&props, D3D12_HEAP_FLAG_NONE, &desc, state, nullptr,
                                              __uuidof(ID3D12Resource),
                                              reinterpret_cast<void**>(buffer.resource.Put())),
      "CreateCommittedResource (DmlEngine)");
  buffer.bytes = size;
  return absl::OkStatus();
}

absl::Status DmlEngine::EnsureHeap(UINT descriptors) {
  descriptors = std::max<UINT>(descriptors, 1);
  if (descriptors <= heap_size_) return absl::OkStatus();
  const UINT size = std::max<UINT>(descriptors, 64);
  D3D12_DESCRIPTOR_HEAP_DESC desc = {D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, size,
                                     D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE, 0};
  heap_.Reset();
  heap_size_ = 0;
  DMLS_RETURN_IF_FAILED(device_->d3d()->CreateDescriptorHeap(&desc, __uuidof(ID3D12DescriptorHeap),
                                                             reinterpret_cast<void**>(heap_.Put())),
                        "CreateDescriptorHeap (DmlEngine)");
  heap_size_ = size;
  return absl::OkStatus();
}

absl::Status DmlEngine::Begin() {
  DMLS_RETURN_IF_FAILED(allocator_->Reset(), "ID3D12CommandAllocator::Reset (DmlEngine)");
  DMLS_RETURN_IF_FAILED(list_->Reset(allocator_.get(), nullptr),
                        "ID3D12GraphicsCommandList::Reset (DmlEngine)");
  ID3D12DescriptorHeap* heaps[] = {heap_.get()};
  list_->SetDescriptorHeaps(1, heaps);
  return absl::OkStatus();
}

absl::Status DmlEngine::CheckDevice(absl::Status status) {
  if (status.ok() || IsDeviceLost(status)) return status;
  // DirectML reports DXGI_ERROR_DEVICE_REMOVED (UNAVAILABLE, hresult.h)
  // from its own calls while Wine's D3D12 device may still say S_OK.
  const HRESULT removed = device_->d3d()->GetDeviceRemovedReason();
  if (removed == S_OK && !absl::IsUnavailable(status)) return status;
  lost_ = true;
  return DeviceLostError(absl::StrCat("DirectML engine: device removed (reason ", HexHr(removed),
                                      "): ", status.message()));
}

absl::Status DmlEngine::SubmitAndWait() {
  DMLS_RETURN_IF_FAILED(list_->Close(), "ID3D12GraphicsCommandList::Close (DmlEngine)");
  ID3D12CommandList* lists[] = {list_.get()};
  queue_->ExecuteCommandLists(1, lists);
  absl::StatusOr<uint64_t> value = fence_->Signal(queue_.get());
  if (!value.ok()) return value.status();
  absl::Status waited = fence_->Wait(*value);
  if (!waited.ok()) return waited;
  const HRESULT removed = device_->d3d()->GetDeviceRemovedReason();
  if (removed != S_OK) {
    lost_ = true;
    return DeviceLostError(
        absl::StrCat("DirectML engine: device removed, reason ", HexHr(removed)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<DmlEngine::Compiled>> DmlEngine::Compile(const OperatorDesc& op) {
  absl::StatusOr<std::unique_ptr<DmlOperator>> mapped = DmlOperator::Create(op);
  if (!mapped.ok()) return mapped.status();
  auto c = std::make_unique<Compiled>();
  c->op = *std::move(mapped);
  IDMLDevice* dml = device_->dml();
  auto refused = [&](const char* what, HRESULT hr) {
    const DataType in = op.input->type();
    const DataType out = op.output->type();
    std::string detail = absl::StrCat(
        "DirectML.dll ", what, "(", ops::OperatorTypeName(op.type), ") failed with hr=",
        HexHr(hr), "; input ", std::string(DataTypeName(in)),
        device_->SupportsDataType(in) ? "" : " (data type not supported by the device)",
        ", output ", std::string(DataTypeName(out)),
        device_->SupportsDataType(out) ? "" : " (data type not supported by the device)",
        "; device feature level ",
        FeatureLevelName(static_cast<uint32_t>(device_->max_feature_level())));
    // A rule status (engine/ops/rule_status.h): the server answers it as
    // INVALID_ARGUMENT with the rule, not as a fault of the engine.
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, kDirectMlRefused, "operator",
                           std::move(detail));
  };
  // Only a refusal of the desc is DIRECTML_REFUSED; a removed device or
  // anything else is not the request's fault.
  auto failed = [&](const char* what, HRESULT hr) -> absl::Status {
    if (hr == E_INVALIDARG || hr == E_NOTIMPL || hr == DXGI_ERROR_UNSUPPORTED) {
      return refused(what, hr);
    }
    return CheckDevice(d3d12::HrToStatus(hr, absl::StrCat("IDMLDevice::", what)));
  };
  d3d12::ComPtr<IDMLOperator> dml_op;
  HRESULT hr = dml->CreateOperator(&c->op->desc(), __uuidof(IDMLOperator),
                                   reinterpret_cast<void**>(dml_op.Put()));
  if (FAILED(hr)) return failed("CreateOperator", hr);
  hr = dml->CompileOperator(dml_op.get(), DML_EXECUTION_FLAG_NONE, __uuidof(IDMLCompiledOperator),
                            reinterpret_cast<void**>(c->compiled.Put()));
  if (FAILED(hr)) return failed("CompileOperator", hr);
  c->props = BindingProperties(c->compiled.get());
  if (c->props.PersistentResourceSize > 0) {
    absl::Status s =
        Ensure(c->persistent, c->props.PersistentResourceSize, D3D12_HEAP_TYPE_DEFAULT,
               D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS);
    if (!s.ok()) return s;
  }

  for (int i = 0; i < c->op->input_count(); ++i) c->owned_inputs |= OwnedByDml(c->op->input(i));
  // Initialised here once, or with each request's data when it owns some.
  if (!c->owned_inputs) {
    absl::Status s = Initialize(*c, nullptr);
    if (!s.ok()) return s;
  }
  return c;
}

absl::Status DmlEngine::Initialize(const Compiled& c, const DML_BUFFER_BINDING* inputs) {
  IDMLDevice* dml = device_->dml();
  d3d12::ComPtr<IDMLOperatorInitializer> init;
  IDMLCompiledOperator* ops[] = {c.compiled.get()};
  DMLS_RETURN_IF_FAILED(dml->CreateOperatorInitializer(1, ops, __uuidof(IDMLOperatorInitializer),
                                                       reinterpret_cast<void**>(init.Put())),
                        "IDMLDevice::CreateOperatorInitializer");
  const DML_BINDING_PROPERTIES ip = BindingProperties(init.get());
  absl::Status s = EnsureHeap(ip.RequiredDescriptorCount);
  if (s.ok() && ip.TemporaryResourceSize > 0) {
    s = Ensure(temporary_, ip.TemporaryResourceSize, D3D12_HEAP_TYPE_DEFAULT,
               D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS);
  }
  if (!s.ok()) return s;
  DML_BINDING_TABLE_DESC table_desc = {init.get(), d3d12::CpuHeapStart(heap_.get()),
                                       d3d12::GpuHeapStart(heap_.get()),
                                       std::max<UINT>(ip.RequiredDescriptorCount, 1)};
  d3d12::ComPtr<IDMLBindingTable> table;
  DMLS_RETURN_IF_FAILED(dml->CreateBindingTable(&table_desc, __uuidof(IDMLBindingTable),
                                                reinterpret_cast<void**>(table.Put())),
                        "IDMLDevice::CreateBindingTable (initializer)");
  // An initializer's inputs: one buffer array per operator it initialises,
  // with an entry per operator input (a null buffer where not owned).
  DML_BUFFER_ARRAY_BINDING array = {static_cast<UINT>(c.op->input_count()), inputs};
  DML_BINDING_DESC array_desc = {DML_BINDING_TYPE_BUFFER_ARRAY, &array};
  if (inputs != nullptr) table->BindInputs(1, &array_desc);
  DML_BUFFER_BINDING temp = {temporary_.resource.get(), 0, ip.TemporaryResourceSize};
  DML_BINDING_DESC temp_desc = {DML_BINDING_TYPE_BUFFER, &temp};
  if (ip.TemporaryResourceSize > 0) table->BindTemporaryResource(&temp_desc);
  DML_BUFFER_BINDING persistent = {c.persistent.resource.get(), 0,
                                   c.props.PersistentResourceSize};
  DML_BINDING_DESC persistent_desc = {DML_BINDING_TYPE_BUFFER, &persistent};
  if (c.props.PersistentResourceSize > 0) table->BindOutputs(1, &persistent_desc);
  s = Begin();
  if (!s.ok()) return s;
  recorder_->RecordDispatch(list_.get(), init.get(), table.get());
  return SubmitAndWait();  // `init` and `table` live until the work is done
}

absl::StatusOr<const DmlEngine::Compiled*> DmlEngine::GetCompiled(const OperatorDesc& op) {
  std::string key = OperatorKey(op);
  if (auto it = compiled_.find(key); it != compiled_.end()) return it->second.get();
  if (auto it = refused_.find(key); it != refused_.end()) return it->second;
  absl::StatusOr<std::unique_ptr<Compiled>> c = Compile(op);
  if (!c.ok()) {
    if (absl::IsInvalidArgument(c.status())) refused_.emplace(std::move(key), c.status());
    return c.status();
  }
  ++compiles_;
  const Compiled* result = c->get();
  compiled_.emplace(std::move(key), *std::move(c));
  return result;
}

absl::StatusOr<ExecuteResult> DmlEngine::Run(const ExecuteRequest& request) {
  if (lost_) return DeviceLostError("DirectML engine: device lost earlier");
  // An operator that owns inputs is initialised with this request's data,
  // and DirectML initialises a compiled operator once: a fresh one.
  std::unique_ptr<Compiled> fresh;
  const Compiled* cached = nullptr;
  if (OwnedByDml(request.op.input) || OwnedByDml(request.op.scale) ||
      OwnedByDml(request.op.bias)) {
    absl::StatusOr<std::unique_ptr<Compiled>> compiled = Compile(request.op);
    if (!compiled.ok()) return compiled.status();
    ++compiles_;
    fresh = *std::move(compiled);
  } else {
    absl::StatusOr<const Compiled*> got = GetCompiled(request.op);
    if (!got.ok()) return got.status();
    cached = *got;
  }
  const Compiled& c = fresh ? *fresh : *cached;

  // Placement of the tensors in work_; in place, the output is the input's
  // range, as large as the larger of the two tensors (OPERATORS.md §10).
  const uint64_t out_total = request.op.output->total_tensor_size_in_bytes;
  const uint64_t in_bound =
      request.in_place ? std::max<uint64_t>(request.input.size(), out_total) : request.input.size();
  uint64_t end = 0;
  auto place = [&end](uint64_t bytes) {
    const uint64_t at = end;
    end = AlignUp(at + std::max<uint64_t>(bytes, 4), kPlacement);
    return at;
  };
  const uint64_t in_at = place(in_bound);
  const uint64_t scale_at = request.scale.empty() ? 0 : place(request.scale.size());
  const uint64_t bias_at = request.bias.empty() ? 0 : place(request.bias.size());
  const uint64_t inputs_end = end;
  const uint64_t out_at = request.in_place ? in_at : place(out_total);
  const uint64_t out_bytes = request.in_place ? in_bound : out_total;

  const auto uav = D3D12_RESOURCE_STATE_UNORDERED_ACCESS;
  const auto uav_flag = D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS;
  absl::Status s = Ensure(work_, end, D3D12_HEAP_TYPE_DEFAULT, uav, uav_flag);
  if (s.ok())
    s = Ensure(upload_, inputs_end, D3D12_HEAP_TYPE_UPLOAD, D3D12_RESOURCE_STATE_GENERIC_READ,
               D3D12_RESOURCE_FLAG_NONE);
  if (s.ok())
    s = Ensure(readback_, out_bytes, D3D12_HEAP_TYPE_READBACK, D3D12_RESOURCE_STATE_COPY_DEST,
               D3D12_RESOURCE_FLAG_NONE);
  if (s.ok() && c.props.TemporaryResourceSize > 0) {
    s = Ensure(temporary_, c.props.TemporaryResourceSize, D3D12_HEAP_TYPE_DEFAULT, uav, uav_flag);
  }
  if (s.ok()) s = EnsureHeap(c.props.RequiredDescriptorCount);
  if (!s.ok()) return s;

  void* mapped = nullptr;
  DMLS_RETURN_IF_FAILED(upload_.resource->Map(0, nullptr, &mapped), "Map (DmlEngine upload)");
  char* up = static_cast<char*>(mapped);
  request.input.CopyTo(up + in_at);
  if (!request.scale.empty()) request.scale.CopyTo(up + scale_at);
  if (!request.bias.empty()) request.bias.CopyTo(up + bias_at);
  upload_.resource->Unmap(0, nullptr);

  // Inputs into the work buffer. An operator that owns some of them is
  // initialised with them first (its own submissions: the initializer's
  // binding table uses the same descriptor heap as the execution's). The
  // execution's table is made before its command list opens, so that no
  // early return leaves a list recording.
  ID3D12Resource* work = work_.resource.get();
  DML_BUFFER_BINDING buffers[3] = {{work, in_at, in_bound},
                                   {work, scale_at, request.scale.size()},
                                   {work, bias_at, request.bias.size()}};
  const auto copy_dest = D3D12_RESOURCE_STATE_COPY_DEST;
  const auto copy_source = D3D12_RESOURCE_STATE_COPY_SOURCE;
  auto record_upload = [&] {
    D3D12_RESOURCE_BARRIER to_copy = d3d12::TransitionBarrier(work, uav, copy_dest);
    list_->ResourceBarrier(1, &to_copy);
    list_->CopyBufferRegion(work, 0, upload_.resource.get(), 0, inputs_end);
    D3D12_RESOURCE_BARRIER to_uav = d3d12::TransitionBarrier(work, copy_dest, uav);
    list_->ResourceBarrier(1, &to_uav);
  };
  if (c.owned_inputs) {
    DML_BUFFER_BINDING owned[3] = {};
    for (int i = 0; i < c.op->input_count(); ++i) {
      if (OwnedByDml(c.op->input(i))) owned[i] = buffers[i];
    }
    s = Begin();
    if (!s.ok()) return s;
    record_upload();
    s = SubmitAndWait();
    if (s.ok()) s = Initialize(c, owned);
    if (!s.ok()) return s;
  }

  IDMLDevice* dml = device_->dml();
  DML_BINDING_TABLE_DESC table_desc = {c.compiled.get(), d3d12::CpuHeapStart(heap_.get()),
                                       d3d12::GpuHeapStart(heap_.get()),
                                       std::max<UINT>(c.props.RequiredDescriptorCount, 1)};
  d3d12::ComPtr<IDMLBindingTable> table;
  DMLS_RETURN_IF_FAILED(dml->CreateBindingTable(&table_desc, __uuidof(IDMLBindingTable),
                                                reinterpret_cast<void**>(table.Put())),
                        "IDMLDevice::CreateBindingTable");
  // Absent and owned inputs are NONE at execution.
  DML_BINDING_DESC inputs[3];
  for (int i = 0; i < c.op->input_count(); ++i) {
    const bool bound = c.op->input(i) != nullptr && !OwnedByDml(c.op->input(i));
    inputs[i] = bound ? DML_BINDING_DESC{DML_BINDING_TYPE_BUFFER, &buffers[i]}
                      : DML_BINDING_DESC{DML_BINDING_TYPE_NONE, nullptr};
  }
  table->BindInputs(c.op->input_count(), inputs);
  DML_BUFFER_BINDING out = {work, out_at, out_bytes};
  DML_BINDING_DESC out_desc = {DML_BINDING_TYPE_BUFFER, &out};
  table->BindOutputs(1, &out_desc);
  DML_BUFFER_BINDING temp = {temporary_.resource.get(), 0, c.props.TemporaryResourceSize};
  DML_BINDING_DESC temp_desc = {DML_BINDING_TYPE_BUFFER, &temp};
  if (c.props.TemporaryResourceSize > 0) table->BindTemporaryResource(&temp_desc);
  DML_BUFFER_BINDING persistent = {c.persistent.resource.get(), 0, c.props.PersistentResourceSize};
  DML_BINDING_DESC persistent_desc = {DML_BINDING_TYPE_BUFFER, &persistent};
  if (c.props.PersistentResourceSize > 0) table->BindPersistentResource(&persistent_desc);

  s = Begin();
  if (!s.ok()) return s;
  if (!c.owned_inputs) record_upload();
  recorder_->RecordDispatch(list_.get(), c.compiled.get(), table.get());
  D3D12_RESOURCE_BARRIER after[2] = {d3d12::UavBarrier(work),
                                     d3d12::TransitionBarrier(work, uav, copy_source)};
  list_->ResourceBarrier(2, after);
  list_->CopyBufferRegion(readback_.resource.get(), 0, work, out_at, out_bytes);
  D3D12_RESOURCE_BARRIER back = d3d12::TransitionBarrier(work, copy_source, uav);
  list_->ResourceBarrier(1, &back);
  s = SubmitAndWait();
  if (!s.ok()) return s;

  ExecuteResult result;
  result.output.resize(out_bytes);
  D3D12_RANGE read = {0, static_cast<SIZE_T>(out_bytes)};
  DMLS_RETURN_IF_FAILED(readback_.resource->Map(0, &read, &mapped), "Map (DmlEngine readback)");
  std::memcpy(result.output.data(), mapped, out_bytes);
  D3D12_RANGE none = {0, 0};
  readback_.resource->Unmap(0, &none);
  return result;
}

}  // namespace dmls::directml
