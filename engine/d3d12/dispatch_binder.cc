#include "engine/d3d12/dispatch_binder.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/d3d12/hresult.h"
#include "engine/d3d12/objects.h"
#include "engine/d3d12/view_cache.h"

namespace dmls::d3d12 {

namespace {

static_assert(sizeof(gpu::ElementwiseArgs) <= gpu::kViewBasesOffset &&
                  sizeof(gpu::MvnArgs) <= gpu::kViewBasesOffset,
              "every args struct ends before the view bases (kernel_abi.h)");

// Null views kept: an SRV and a UAV of each typed ViewFormat, with room to
// spare (kUnknown shares R32_FLOAT's: NullFormat).
constexpr uint32_t kNullViews = 16;

gpu::ViewFormat NullFormat(gpu::ViewFormat f) {
  // A null descriptor still needs a typed format; R32_FLOAT matches what
  // any unused slot of our kernels would declare when the plan says none.
  return f == gpu::ViewFormat::kUnknown ? gpu::ViewFormat::kR32Float : f;
}

absl::Status CheckView(const gpu::View& v, const SlotBuffers& buffers,
                       size_t dispatch, const char* what, size_t index) {
  if (v.buffer == gpu::BufferSlot::kNone) return absl::OkStatus();
  const size_t slot = static_cast<size_t>(v.buffer);
  const uint32_t texel = TexelBytes(v.format);
  auto fail = [&](const std::string& why) {
    return absl::InternalError(absl::StrCat("plan dispatch ", dispatch, " ",
                                            what, index, ": ", why));
  };
  if (slot >= kSlotCount || buffers.resource[slot] == nullptr) {
    return fail(absl::StrCat("refers to buffer slot ", slot,
                             " that the request does not have"));
  }
  if (texel == 0) return fail("has no view format");
  if (v.num_elements == 0 || v.num_elements > gpu::kMaxViewTexels) {
    return fail(absl::StrCat("has ", v.num_elements, " texels (limit ",
                             gpu::kMaxViewTexels, ")"));
  }
  if ((v.first_element + v.num_elements) * texel > buffers.bytes[slot]) {
    return fail(absl::StrCat("ends at byte ",
                             (v.first_element + v.num_elements) * texel,
                             " past its buffer of ", buffers.bytes[slot]));
  }
  return absl::OkStatus();
}

// The constant block and group counts of dispatch `i` are within the ABI
// (INTERNAL otherwise: a planner bug must not become a GPU fault).
absl::Status CheckShape(const gpu::Dispatch& d, size_t i) {
  if (d.args.size() > gpu::kViewBasesOffset) {
    return absl::InternalError(absl::StrCat(
        "plan dispatch ", i, " has a ", d.args.size(), "-byte constant block"));
  }
  for (uint32_t g : d.groups) {
    if (g > gpu::kMaxDispatchGroups) {
      return absl::InternalError(absl::StrCat("plan dispatch ", i, " has ", g,
                                              " groups in a dimension"));
    }
  }
  return absl::OkStatus();
}

// The arena SRV table of `d` (ArenaTables::srv): 2 where t1 or t2 is
// R32G32B32A32_UINT (BindArena checks t0 is too), else 0 where t0 is,
// else 1.
size_t SrvTable(const gpu::Dispatch& d) {
  auto vec4 = [](const gpu::View& v) {
    return v.buffer != gpu::BufferSlot::kNone && v.format == gpu::ViewFormat::kR32G32B32A32Uint;
  };
  if (vec4(d.srv[1]) || vec4(d.srv[2])) return 2;
  return vec4(d.srv[0]) ? 0 : 1;
}

}  // namespace

DispatchBinder::DispatchBinder(ID3D12Device* device, PipelineCache* pipelines,
                               DispatchBinderOptions options)
    : device_(device),
      pipelines_(pipelines),
      descriptor_ring_(options.descriptor_capacity),
      constant_ring_(options.constant_blocks),
      persistent_capacity_(options.persistent_descriptors) {}

absl::StatusOr<std::unique_ptr<DispatchBinder>> DispatchBinder::Create(
    ID3D12Device* device, PipelineCache* pipelines,
    DispatchBinderOptions options) {
  std::unique_ptr<DispatchBinder> b(
      new DispatchBinder(device, pipelines, options));

  D3D12_DESCRIPTOR_HEAP_DESC hd = {};
  hd.Type = D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV;
  hd.NumDescriptors = options.descriptor_capacity + options.persistent_descriptors;
  hd.Flags = D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE;
  DMLS_RETURN_IF_FAILED(
      device->CreateDescriptorHeap(
          &hd, DMLS_IID_PPV(ID3D12DescriptorHeap, b->heap_.Put())),
      "CreateDescriptorHeap");
  b->descriptor_size_ =
      device->GetDescriptorHandleIncrementSize(hd.Type);
  // Room for a null SRV and UAV of every view format (NullFormat).
  absl::StatusOr<std::unique_ptr<ViewCache>> nulls = ViewCache::Create(device, kNullViews);
  if (!nulls.ok()) return nulls.status();
  b->null_views_ = std::move(*nulls);
  b->cpu_start_ = CpuHeapStart(b->heap_.get());
  b->gpu_start_ = GpuHeapStart(b->heap_.get());

  D3D12_HEAP_PROPERTIES heap = {};
  heap.Type = D3D12_HEAP_TYPE_UPLOAD;
  const D3D12_RESOURCE_DESC rd =
      BufferDesc(uint64_t{options.constant_blocks} * kConstantBlockBytes);
  DMLS_RETURN_IF_FAILED(
      device->CreateCommittedResource(
          &heap, D3D12_HEAP_FLAG_NONE, &rd, D3D12_RESOURCE_STATE_GENERIC_READ,
          nullptr, DMLS_IID_PPV(ID3D12Resource, b->constants_.Put())),
      "CreateCommittedResource(constant ring)");
  void* p = nullptr;
  D3D12_RANGE none = {0, 0};
  DMLS_RETURN_IF_FAILED(b->constants_->Map(0, &none, &p),
                        "Map(constant ring)");
  b->constants_mapped_ = static_cast<uint8_t*>(p);
  b->constants_va_ = b->constants_->GetGPUVirtualAddress();
  return b;
}

bool DispatchBinder::CanBind(size_t dispatches) const {
  return descriptor_ring_.CanAllocate(dispatches * kDescriptorsPerDispatch) &&
         constant_ring_.CanAllocate(dispatches);
}

absl::StatusOr<DispatchBinder::CheckedPlan> DispatchBinder::Check(
    const gpu::DispatchPlan& plan, const SlotBuffers& buffers, SourceFn source) {
  const size_t n = plan.dispatches.size();
  CheckedPlan out;
  out.psos.resize(n);
  out.sources.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const gpu::Dispatch& d = plan.dispatches[i];
    if (absl::Status st = CheckShape(d, i); !st.ok()) return st;
    const std::array<const gpu::View*, kDescriptorsPerDispatch> v = {
        &d.srv[0], &d.srv[1], &d.srv[2], &d.uav[0], &d.uav[1]};
    for (size_t p = 0; p < v.size(); ++p) {
      const bool uav = p >= kSrvSlots;
      if (absl::Status st = CheckView(*v[p], buffers, i, uav ? "u" : "t",
                                      uav ? p - kSrvSlots : p);
          !st.ok()) {
        return st;
      }
      absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE> h = source(*v[p], uav);
      if (!h.ok()) return h.status();
      out.sources[i][p] = *h;
    }
    absl::StatusOr<ID3D12PipelineState*> pso = pipelines_->Get(d.key);
    if (!pso.ok()) return pso.status();
    out.psos[i] = *pso;
  }
  return out;
}

absl::StatusOr<std::vector<BoundDispatch>> DispatchBinder::Bind(
    const gpu::DispatchPlan& plan, const SlotBuffers& buffers) {
  const size_t n = plan.dispatches.size();
  // Check everything before allocating, so that a failure leaves the rings
  // untouched. Unused slots get a copy of the cached null view.
  absl::StatusOr<CheckedPlan> checked =
      Check(plan, buffers,
            [&](const gpu::View& v, bool uav) -> absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE> {
              if (v.buffer == gpu::BufferSlot::kNone) return NullView(v.format, uav);
              return D3D12_CPU_DESCRIPTOR_HANDLE{};  // created below
            });
  if (!checked.ok()) return checked.status();
  const std::vector<ID3D12PipelineState*>& psos = checked->psos;
  const auto& nulls = checked->sources;
  if (n == 0) return std::vector<BoundDispatch>();
  if (!CanBind(n)) {
    return absl::ResourceExhaustedError("descriptor or constant ring full");
  }
  const uint64_t first_desc = *descriptor_ring_.Allocate(n * kDescriptorsPerDispatch);
  const uint64_t first_block = *constant_ring_.Allocate(n);

  std::vector<BoundDispatch> out(n);
  std::vector<ID3D12Resource*> written;  // UAV resources of earlier dispatches
  for (size_t i = 0; i < n; ++i) {
    const gpu::Dispatch& d = plan.dispatches[i];
    BoundDispatch& b = out[i];
    b.pso = psos[i];
    b.groups = d.groups;

    b.cbv = WriteConstants(first_block + i, d);

    const uint64_t base = first_desc + i * kDescriptorsPerDispatch;
    b.srv_table.ptr = gpu_start_.ptr + base * descriptor_size_;
    b.uav_table.ptr = gpu_start_.ptr + (base + kSrvSlots) * descriptor_size_;
    for (size_t s = 0; s < kSrvSlots; ++s) {
      const gpu::View& v = d.srv[s];
      D3D12_CPU_DESCRIPTOR_HANDLE h = {cpu_start_.ptr + (base + s) * descriptor_size_};
      if (v.buffer == gpu::BufferSlot::kNone) {
        device_->CopyDescriptorsSimple(1, h, nulls[i][s], D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV);
        continue;
      }
      D3D12_SHADER_RESOURCE_VIEW_DESC sd = {};
      sd.ViewDimension = D3D12_SRV_DIMENSION_BUFFER;
      sd.Shader4ComponentMapping = D3D12_DEFAULT_SHADER_4_COMPONENT_MAPPING;
      sd.Format = static_cast<DXGI_FORMAT>(v.format);  // typed: CheckView
      sd.Buffer.FirstElement = v.first_element;
      sd.Buffer.NumElements = v.num_elements;
      device_->CreateShaderResourceView(buffers.resource[static_cast<size_t>(v.buffer)], &sd, h);
      views_created_.fetch_add(1, std::memory_order_relaxed);
    }
    if (d.barrier_before) b.barrier_before = written;
    for (size_t u = 0; u < kUavSlots; ++u) {
      const gpu::View& v = d.uav[u];
      D3D12_CPU_DESCRIPTOR_HANDLE h = {
          cpu_start_.ptr + (base + kSrvSlots + u) * descriptor_size_};
      if (v.buffer == gpu::BufferSlot::kNone) {
        device_->CopyDescriptorsSimple(1, h, nulls[i][kSrvSlots + u],
                                       D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV);
        continue;
      }
      ID3D12Resource* r = buffers.resource[static_cast<size_t>(v.buffer)];
      D3D12_UNORDERED_ACCESS_VIEW_DESC ud = {};
      ud.ViewDimension = D3D12_UAV_DIMENSION_BUFFER;
      ud.Format = static_cast<DXGI_FORMAT>(v.format);
      ud.Buffer.FirstElement = v.first_element;
      ud.Buffer.NumElements = v.num_elements;
      if (std::find(written.begin(), written.end(), r) == written.end()) {
        written.push_back(r);
      }
      device_->CreateUnorderedAccessView(r, nullptr, &ud, h);
      views_created_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  return out;
}

absl::StatusOr<ArenaTables> DispatchBinder::CreateArenaTables(
    ID3D12Resource* buffer, uint64_t bytes) {
  absl::StatusOr<ArenaTables> t = CreateTables({buffer, buffer, buffer, buffer, buffer},
                                               {bytes, bytes, bytes, bytes, bytes});
  if (t.ok()) t->resource = buffer;
  return t;
}

absl::StatusOr<ArenaTables> DispatchBinder::CreateTables(
    const std::array<ID3D12Resource*, 5>& buffers, const std::array<uint64_t, 5>& bytes) {
  constexpr uint32_t kPerArena = 3 * kSrvSlots + 2 * kUavSlots;
  for (uint64_t b : bytes) {
    if (b / 4 > gpu::kMaxViewTexels) {
      return absl::InvalidArgumentError(
          absl::StrCat("a buffer of ", b, " bytes exceeds one R32 view"));
    }
    if (b % 16 != 0) {  // the texel views would drop its tail
      return absl::InvalidArgumentError(
          absl::StrCat("a buffer of ", b, " bytes is not whole 16-byte texels"));
    }
  }
  uint32_t first = 0;
  {
    MutexLock lock(&persistent_mu_);
    if (!persistent_free_.empty()) {
      first = persistent_free_.back();
      persistent_free_.pop_back();
    } else if (persistent_used_ + kPerArena <= persistent_capacity_) {
      first = persistent_used_;
      persistent_used_ += kPerArena;
    } else {
      return absl::ResourceExhaustedError("no descriptors left for persistent tables");
    }
  }
  const uint64_t heap_index = uint64_t{descriptor_ring_.capacity()} + first;
  auto cpu = [&](uint64_t i) {
    return D3D12_CPU_DESCRIPTOR_HANDLE{cpu_start_.ptr + (heap_index + i) * descriptor_size_};
  };
  auto gpu = [&](uint64_t i) {
    return D3D12_GPU_DESCRIPTOR_HANDLE{gpu_start_.ptr + (heap_index + i) * descriptor_size_};
  };
  // A null resource gets a null descriptor (the kernel never reads it).
  auto srv = [&](uint64_t i, size_t position, gpu::ViewFormat f) {
    D3D12_SHADER_RESOURCE_VIEW_DESC sd = {};
    sd.ViewDimension = D3D12_SRV_DIMENSION_BUFFER;
    sd.Shader4ComponentMapping = D3D12_DEFAULT_SHADER_4_COMPONENT_MAPPING;
    sd.Format = static_cast<DXGI_FORMAT>(f);
    if (buffers[position]) {
      sd.Buffer.NumElements = static_cast<UINT>(bytes[position] / TexelBytes(f));
    }
    device_->CreateShaderResourceView(buffers[position], &sd, cpu(i));
    views_created_.fetch_add(1, std::memory_order_relaxed);
  };
  auto uav = [&](uint64_t i, size_t position, gpu::ViewFormat f) {
    D3D12_UNORDERED_ACCESS_VIEW_DESC ud = {};
    ud.ViewDimension = D3D12_UAV_DIMENSION_BUFFER;
    ud.Format = static_cast<DXGI_FORMAT>(f);
    if (buffers[position]) {
      ud.Buffer.NumElements = static_cast<UINT>(bytes[position] / TexelBytes(f));
    }
    device_->CreateUnorderedAccessView(buffers[position], nullptr, &ud, cpu(i));
    views_created_.fetch_add(1, std::memory_order_relaxed);
  };
  using F = gpu::ViewFormat;
  ArenaTables t;
  const F t0[3] = {F::kR32G32B32A32Uint, F::kR32Uint, F::kR32G32B32A32Uint};
  for (uint64_t k = 0; k < 3; ++k) {
    const uint64_t at = k * kSrvSlots;
    const F t12 = k == 2 ? F::kR32G32B32A32Uint : F::kR32Uint;
    srv(at + 0, 0, t0[k]);
    srv(at + 1, 1, t12);
    srv(at + 2, 2, t12);
    t.srv[k] = gpu(at);
  }
  for (uint64_t k = 0; k < 2; ++k) {
    const uint64_t at = 3 * kSrvSlots + k * kUavSlots;
    uav(at + 0, 3, t0[k]);
    uav(at + 1, 4, F::kR32Float);
    t.uav[k] = gpu(at);
  }
  return t;
}

void DispatchBinder::ReleaseArenaTables(const ArenaTables& tables) {
  const uint64_t heap_index = (tables.srv[0].ptr - gpu_start_.ptr) / descriptor_size_;
  MutexLock lock(&persistent_mu_);
  persistent_free_.push_back(
      static_cast<uint32_t>(heap_index - descriptor_ring_.capacity()));
}

absl::StatusOr<std::vector<BoundDispatch>> DispatchBinder::BindArena(
    const gpu::DispatchPlan& plan, const ArenaTables& tables) {
  using F = gpu::ViewFormat;
  const size_t n = plan.dispatches.size();
  std::vector<BoundDispatch> out(n);
  // Check everything before allocating, so a failure leaves the ring as it was.
  for (size_t i = 0; i < n; ++i) {
    const gpu::Dispatch& d = plan.dispatches[i];
    if (absl::Status st = CheckShape(d, i); !st.ok()) return st;
    auto is = [](const gpu::View& v, std::initializer_list<F> ok) {
      if (v.buffer == gpu::BufferSlot::kNone) return true;
      for (F f : ok) {
        if (v.format == f) return true;
      }
      return false;
    };
    // t1 and t2 as texels only beside t0 as texels (srv[2]).
    const bool sb_vec4 = SrvTable(d) == 2;
    const F sb = sb_vec4 ? F::kR32G32B32A32Uint : F::kR32Uint;
    if (!is(d.srv[0], {F::kR32G32B32A32Uint, F::kR32Uint}) || !is(d.srv[1], {sb}) ||
        !is(d.srv[2], {sb}) || (sb_vec4 && !is(d.srv[0], {F::kR32G32B32A32Uint})) ||
        !is(d.uav[0], {F::kR32G32B32A32Uint, F::kR32Uint}) ||
        !is(d.uav[1], {F::kR32Float})) {
      return absl::UnimplementedError(
          absl::StrCat("plan dispatch ", i, " has views outside the arena tables"));
    }
    absl::StatusOr<ID3D12PipelineState*> pso = pipelines_->Get(d.key);
    if (!pso.ok()) return pso.status();
    out[i].pso = *pso;
  }
  if (n == 0) return out;
  if (!constant_ring_.CanAllocate(n)) {
    return absl::ResourceExhaustedError("constant ring full");
  }
  const uint64_t first_block = *constant_ring_.Allocate(n);
  for (size_t i = 0; i < n; ++i) {
    const gpu::Dispatch& d = plan.dispatches[i];
    BoundDispatch& b = out[i];
    b.groups = d.groups;
    b.cbv = WriteConstants(first_block + i, d);
    const bool vec4_out = d.uav[0].buffer != gpu::BufferSlot::kNone &&
                          d.uav[0].format == F::kR32G32B32A32Uint;
    b.srv_table = tables.srv[SrvTable(d)];
    b.uav_table = tables.uav[vec4_out ? 0 : 1];
    if (d.barrier_before) b.barrier_before = {tables.resource};
  }
  return out;
}

absl::StatusOr<std::vector<BoundDispatch>> DispatchBinder::BindCopied(
    const gpu::DispatchPlan& plan, const SlotBuffers& buffers, ViewCache& views) {
  const size_t n = plan.dispatches.size();
  // Every view's source first (made on first use), so that a failure
  // leaves the rings untouched.
  absl::StatusOr<CheckedPlan> checked = Check(
      plan, buffers,
      [&](const gpu::View& v, bool uav) -> absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE> {
        const size_t slot = static_cast<size_t>(v.buffer);
        absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE> h =
            v.buffer == gpu::BufferSlot::kNone
                ? NullView(v.format, uav)
                : views.Get(buffers.resource[slot], buffers.bytes[slot], v.format, uav);
        if (!h.ok()) return absl::UnimplementedError(h.status().message());
        return h;
      });
  if (!checked.ok()) return checked.status();
  const std::vector<ID3D12PipelineState*>& psos = checked->psos;
  const auto& sources = checked->sources;
  if (n == 0) return std::vector<BoundDispatch>();
  if (!CanBind(n)) return absl::ResourceExhaustedError("descriptor or constant ring full");
  const uint64_t first_desc = *descriptor_ring_.Allocate(n * kDescriptorsPerDispatch);
  const uint64_t first_block = *constant_ring_.Allocate(n);
  std::vector<BoundDispatch> out(n);
  for (size_t i = 0; i < n; ++i) {
    gpu::Dispatch d = plan.dispatches[i];
    const std::array<const gpu::View*, kDescriptorsPerDispatch> v = {
        &d.srv[0], &d.srv[1], &d.srv[2], &d.uav[0], &d.uav[1]};
    const uint64_t base = first_desc + i * kDescriptorsPerDispatch;
    for (size_t p = 0; p < v.size(); ++p) {
      const D3D12_CPU_DESCRIPTOR_HANDLE dst{cpu_start_.ptr + (base + p) * descriptor_size_};
      // The cached views start at each buffer's first byte.
      d.view_base[p] = static_cast<uint32_t>(v[p]->first_element);
      device_->CopyDescriptorsSimple(1, dst, sources[i][p],
                                     D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV);
    }
    BoundDispatch& b = out[i];
    b.pso = psos[i];
    b.groups = d.groups;
    b.cbv = WriteConstants(first_block + i, d);
    b.srv_table.ptr = gpu_start_.ptr + base * descriptor_size_;
    b.uav_table.ptr = gpu_start_.ptr + (base + kSrvSlots) * descriptor_size_;
    // Inside a plan: every UAV access before, before every one after.
    if (d.barrier_before) b.barrier_before = {nullptr};
  }
  return out;
}

D3D12_GPU_VIRTUAL_ADDRESS DispatchBinder::WriteConstants(uint64_t block,
                                                         const gpu::Dispatch& d) {
  uint8_t* p = constants_mapped_ + block * kConstantBlockBytes;
  std::memset(p, 0, kConstantBlockBytes);
  if (!d.args.empty()) std::memcpy(p, d.args.data(), d.args.size());
  std::memcpy(p + gpu::kViewBasesOffset, d.view_base.data(), sizeof(d.view_base));
  return constants_va_ + block * kConstantBlockBytes;
}

void DispatchBinder::SetState(ID3D12GraphicsCommandList* list) const {
  ID3D12DescriptorHeap* heaps[] = {heap_.get()};
  list->SetDescriptorHeaps(1, heaps);
  list->SetComputeRootSignature(pipelines_->root_signature());
}

void DispatchBinder::Record(ID3D12GraphicsCommandList* list,
                            absl::Span<const BoundDispatch> dispatches,
                            ID3D12PipelineState** current_pso) {
  std::vector<D3D12_RESOURCE_BARRIER> barriers;
  for (const BoundDispatch& d : dispatches) {
    if (!d.barrier_before.empty()) {
      barriers.clear();
      for (ID3D12Resource* r : d.barrier_before) barriers.push_back(UavBarrier(r));
      list->ResourceBarrier(static_cast<UINT>(barriers.size()), barriers.data());
    }
    if (*current_pso != d.pso) {
      list->SetPipelineState(d.pso);
      *current_pso = d.pso;
    }
    list->SetComputeRootConstantBufferView(kRootCbv, d.cbv);
    list->SetComputeRootDescriptorTable(kRootSrvTable, d.srv_table);
    list->SetComputeRootDescriptorTable(kRootUavTable, d.uav_table);
    if (d.groups[0] && d.groups[1] && d.groups[2]) {
      list->Dispatch(d.groups[0], d.groups[1], d.groups[2]);
    }
  }
}

absl::StatusOr<D3D12_CPU_DESCRIPTOR_HANDLE> DispatchBinder::NullView(gpu::ViewFormat format,
                                                                  bool uav) {
  return null_views_->GetNull(NullFormat(format), uav);
}

uint64_t DispatchBinder::views_created() const {
  return views_created_.load() + null_views_->views_created();
}

void DispatchBinder::Retire(uint64_t fence) {
  descriptor_ring_.Retire(fence);
  constant_ring_.Retire(fence);
}

void DispatchBinder::Reclaim(uint64_t completed_fence) {
  descriptor_ring_.Reclaim(completed_fence);
  constant_ring_.Reclaim(completed_fence);
}

}  // namespace dmls::d3d12
