// libFuzzer target: the path of a request's bytes through the server before
// any device work. The input is a serialized ExecuteRequest or ChainRequest
// (the first byte chooses): the wire-format scanner, protobuf parsing, the
// mapping to engine descriptors, feature-level validation, admission, and
// for valid operators the GPU planner and the kernels its plan names (built
// once per key); for chains the whole-chain builder. Invariants beyond "no
// crash, no sanitizer report": the scanner and protobuf agree on what
// parses; a valid operator plans, and every kernel it names builds.
#include <cstddef>
#include <cstdint>
#include <array>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "dmlserve/v1/dmlserve.pb.h"
#include "engine/core/mutex.h"
#include "google/protobuf/stubs/logging.h"
#include "engine/core/engine.h"
#include "engine/kernels/kernels.h"
#include "engine/plan/planner.h"
#include "engine/ops/validator.h"
#include "engine/sched/admission.h"
#include "server/chain_builder.h"
#include "server/rpc/message_codec.h"
#include "server/mapping/proto_mapping.h"
#include "engine/store/tensor_store.h"

namespace {

namespace v1 = dmlserve::v1;
using namespace dmls;

// An engine that is never asked to execute (chains are only built).
class NoEngine : public Engine {
 public:
  DeviceInfo device_info() const override { return {"fuzz", "cpu", "none", 0}; }
  void Execute(ExecuteRequest, ExecuteCallback done) override {
    done(absl::InternalError("not used"));
  }
};

// One store for every input (its handles are unguessable, so the fuzzed
// ones find nothing; chains that keep outputs create and abandon tensors).
store::TensorStore* ResidentStore() {
  static NoEngine engine;
  static store::TensorStore* store = [] {
    store::TensorStoreOptions o;
    o.sweep_interval = absl::ZeroDuration();
    return new store::TensorStore(&engine, o);
  }();
  return store;
}

void Fail(const char* what) {
  std::fprintf(stderr, "invariant broken: %s\n", what);
  std::abort();
}

void CheckOperator(const OperatorDesc& op, uint32_t level, bool in_place) {
  if (!ops::ValidateAll(op, level, in_place).empty()) return;
  absl::StatusOr<gpu::DispatchPlan> plan = gpu::PlanExecution(op, in_place);
  // A valid operator plans, unless it is beyond what one view can address
  // (UNIMPLEMENTED, answered as RESOURCE_EXHAUSTED by the engine).
  if (!plan.ok()) {
    if (!absl::IsUnimplemented(plan.status()) && !absl::IsResourceExhausted(plan.status())) {
      Fail(plan.status().ToString().c_str());
    }
    return;
  }
  static Mutex mu;
  static absl::flat_hash_set<gpu::KernelKey, gpu::KernelKeyHash> built ABSL_GUARDED_BY(mu);
  for (const gpu::Dispatch& d : plan->dispatches) {
    MutexLock lock(&mu);
    if (!built.insert(d.key).second) continue;
    if (!gpu::BuildKernel(d.key).ok()) Fail("a planned kernel does not build");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // protobuf logs every invalid UTF-8 string it parses; that is expected.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool chain = data[0] & 1;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  const google::protobuf::Descriptor& type =
      chain ? *v1::ChainRequest::descriptor() : *v1::ExecuteRequest::descriptor();
  const std::optional<std::string> scan = server::FindWireFormatError(bytes, type);
  const bool scanner_ok = !scan.has_value();
  if (chain) {
    v1::ChainRequest r;
    const bool parsed = r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
    if (parsed != scanner_ok) {
      std::fprintf(stderr, "scanner: %s\n", scan ? scan->c_str() : "ok");
      Fail("the wire scanner and protobuf disagree (chain)");
    }
    if (!parsed) return 0;
    for (const v1::ChainStep& s : r.steps()) {
      CheckOperator(server::OperatorFromProto(s.operator_()),
                    server::FeatureLevelFromProto(r.feature_level(), kHighestFeatureLevel),
                    s.in_place());
    }
    store::TensorStore* store = ResidentStore();
    absl::StatusOr<server::BuiltChain> built =
        server::BuildChain(r, std::string("fuzz"), *store, kHighestFeatureLevel);
    if (built.ok()) {
      sched::Admission admission(sched::AdmissionOptions{});
      (void)admission.Admit(built->work);
      built->Settle(*store, false);
    }
    return 0;
  }
  v1::ExecuteRequest r;
  const bool parsed = r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  if (parsed != scanner_ok) {
    std::fprintf(stderr, "scanner: %s\n", scan ? scan->c_str() : "ok");
    Fail("the wire scanner and protobuf disagree (execute)");
  }
  if (!parsed) return 0;
  ExecuteRequest e;
  e.op = server::OperatorFromProto(r.operator_());
  e.feature_level = static_cast<FeatureLevel>(
      server::FeatureLevelFromProto(r.feature_level(), kHighestFeatureLevel));
  e.in_place = r.in_place();
  e.input = r.input();
  e.scale = r.scale();
  e.bias = r.bias();
  sched::Admission admission(sched::AdmissionOptions{});
  (void)admission.Admit(sched::ExecuteWork(e));
  CheckOperator(e.op, static_cast<uint32_t>(e.feature_level), e.in_place);
  if (server::UsesResidentTensors(r)) {
    std::array<std::string, 3> payloads = {r.input(), r.scale(), r.bias()};
    absl::StatusOr<server::BuiltChain> built = server::BuildExecute(
        r, payloads, std::string("fuzz"), *ResidentStore(), kHighestFeatureLevel);
    if (built.ok()) {
      (void)admission.Admit(built->work);
      built->Settle(*ResidentStore(), false);
    }
  }
  return 0;
}
