// Bounded randomized robustness test ("never a crash or a hang"): every
// oracle corpus case is mutated many ways at the wire level
// (dmlserve.v1.ExecuteRequest, see mutator.h), mapped with the server's
// proto mapping and validated. Invalid mutants must be reported with a rule
// id of the OPERATORS.md §9 catalogue and a request field path. Valid ones
// get payloads of their declared sizes and run on the CPU engine and on the
// Direct3D 12 engine (software adapter, poisoned outputs); both must finish
// (OK or a clean status) within a timeout, and when both succeed the GPU's
// output elements must match the CPU's within the operator's §8 tolerance.
// Every kernel key the planner emits is checked against AllKernelKeys()
// before the GPU engine sees the request, because vkd3d-shader aborts the
// process on a shader the tests have not compiled.
//
// Deterministic and bounded: kMutantsPerCase mutants per corpus case (797
// cases: about 51,000 mutants, about 18,600 of them valid and run on both
// engines); the seed of each mutant derives from the case index and the
// mutant index. The corpus is split in kShards shards (one gtest case each)
// so that ctest runs them in parallel. DMLS_ROBUSTNESS_SEED and
// DMLS_ROBUSTNESS_CASE (see below) are debugging aids.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/d3d12/test_adapter.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "engine/core/engine.h"
#include "engine/core/tensor_desc.h"
#include "engine/cpu/cpu_engine.h"
#include "engine/cpu/tensor_access.h"
#include "engine/d3d12/dxbc_engine.h"
#include "engine/kernels/kernels.h"
#include "engine/plan/planner.h"
#include "engine/ops/schema.h"
#include "engine/ops/validator.h"
#include "gtest/gtest.h"
#include "server/mapping/proto_mapping.h"
#include "tests/conformance/corpus.h"
#include "tests/conformance/tolerance.h"
#include "tests/robustness/ftz_alternative.h"
#include "tests/robustness/mutator.h"

namespace dmls::robustness {
namespace {

constexpr int kShards = 4;
// Mutants per corpus case; each applies 1-3 mutations.
constexpr int kMutantsPerCase = 64;
// The server's default tensor limit refuses anything larger; executing
// such mutants would only measure lavapipe.
constexpr uint64_t kMaxExecutedTensorBytes = uint64_t{64} << 20;
// Mutants of the ordinary corpus cases are executed only up to this size
// (a mutated size can blow a small tensor up to tens of MiB); those of the
// large-tensor cases up to kMaxExecutedTensorBytes. Larger valid mutants
// are still validated, just not run, to keep the test bounded.
constexpr uint64_t kMaxRoutineTensorBytes = uint64_t{4} << 20;
// A request that has not completed by then counts as a hang.
constexpr absl::Duration kHangTimeout = absl::Seconds(60);

// The OPERATORS.md §9 catalogue (TENSOR_INVALID has no C++ form).
const std::set<std::string>& Catalogue() {
  static const auto* rules = new std::set<std::string>{
      "FL_UNKNOWN", "OP_UNKNOWN", "OP_NOT_AVAILABLE", "PARAM_MISSING",
      "PARAM_INVALID", "TENSOR_MISSING", "TENSOR_TYPE_INVALID",
      "DATATYPE_UNKNOWN", "FLAGS_INVALID", "FLAGS_OWNED_BY_DML_ON_OUTPUT",
      "DIMCOUNT_RANGE", "SIZES_LENGTH_MISMATCH", "STRIDES_LENGTH_MISMATCH",
      "SIZE_ZERO", "SIZE_INVALID", "STRIDE_INVALID", "TENSOR_TOO_LARGE",
      "TOTAL_SIZE_TOO_SMALL", "TOTAL_SIZE_NOT_DWORD_MULTIPLE",
      "ALIGNMENT_INVALID", "DIMCOUNT_UNSUPPORTED", "DATATYPE_UNSUPPORTED",
      "DATATYPE_MISMATCH", "DIMCOUNT_MISMATCH", "SIZES_MISMATCH",
      "OUTPUT_OVERLAP", "SCALEBIAS_64BIT_UNSUPPORTED", "CELU_ALPHA_INVALID",
      "SOFTPLUS_STEEPNESS_RANGE", "MVN_SCALE_BIAS_PAIRING",
      "MVN_SCALE_BIAS_BROADCAST", "MVN_AXIS_COUNT_MISMATCH", "MVN_AXES_EMPTY",
      "MVN_AXIS_OUT_OF_RANGE", "MVN_AXES_DUPLICATE", "MVN_EPSILON_INVALID",
      "FUSED_NOT_FUSABLE", "FUSED_NOT_AVAILABLE", "FUSED_TENSORS_NOT_NULL",
      "FUSED_PARAM_INVALID", "INPLACE_NOT_SUPPORTED",
      "INPLACE_LAYOUT_MISMATCH"};
  return *rules;
}

bool IsCleanStatus(const absl::Status& s) {
  return s.ok() || absl::IsInvalidArgument(s) || absl::IsResourceExhausted(s) ||
         absl::IsUnimplemented(s) || absl::IsOutOfRange(s);
}

// Runs one request and waits for its callback; `hung` when it did not come
// within kHangTimeout (the state outlives this function in that case).
absl::StatusOr<ExecuteResult> RunOne(Engine& engine, ExecuteRequest request,
                                     bool* hung) {
  struct State {
    absl::Notification done;
    absl::StatusOr<ExecuteResult> result = absl::UnknownError("no result");
  };
  auto state = std::make_shared<State>();
  engine.Execute(std::move(request),
                 [state](absl::StatusOr<ExecuteResult> r) {
                   state->result = std::move(r);
                   state->done.Notify();
                 });
  *hung = !state->done.WaitForNotificationWithTimeout(kHangTimeout);
  if (*hung) return absl::DeadlineExceededError("hang");
  return std::move(state->result);
}

// The payload bytes of a tensor of `bytes` bytes: the original payload
// repeated (realistic values, including the corpus' NaN/Inf edge values),
// zeros when there was none.
std::string Resized(const std::string& original, uint64_t bytes) {
  std::string out(bytes, '\0');
  // Repeat whole 8-byte units, so that a payload mutated to an odd length
  // does not shift the repeated values into byte-misaligned garbage.
  const size_t unit = original.size() >= 8 ? original.size() / 8 * 8 : original.size();
  if (unit > 0) {
    for (uint64_t i = 0; i < bytes; ++i) out[i] = original[i % unit];
  }
  return out;
}

// MVN groups with values beyond what unscaled float32 statistics survive
// (|x| above 2^40, or an infinite or NaN element). The GPU's statistics
// scale such groups (engine/kernels/mvn_stats_emit.h), so they are compared
// like every other request; counted to show that the mix reaches them.
bool MvnHasExtremeValues(const OperatorDesc& op, const std::string& input) {
  const ops::OperatorSchema* schema = ops::FindOperator(op.type);
  if (schema == nullptr ||
      (schema->kind != ops::OpKind::kMvn && schema->kind != ops::OpKind::kMvn1)) {
    return false;
  }
  const DataType type = op.input->type();
  for (uint64_t offset : cpu::ElementOffsets(*op.input)) {
    if (type == DataType::kFloat32) {
      float v;
      std::memcpy(&v, input.data() + offset * 4, 4);
      if (!(std::fabs(v) <= 0x1p40f)) return true;  // also NaN
    } else if (type == DataType::kFloat16) {
      uint16_t h;
      std::memcpy(&h, input.data() + offset * 2, 2);
      if ((h & 0x7c00u) == 0x7c00u) return true;  // inf or NaN; finite ones are small
    }
  }
  return false;
}

// §8 class of a request: the schema's, EXACT raised to ARITH by ScaleBias.
std::string ToleranceClassOf(const OperatorDesc& op) {
  const ops::OperatorSchema* schema = ops::FindOperator(op.type);
  if (schema == nullptr) return "EXACT";
  if (schema->tolerance == ops::ToleranceClass::kExact && op.scale_bias) {
    return "ARITH";
  }
  return std::string(ops::ToleranceClassName(schema->tolerance));
}

// The output's logical elements gathered through its strides.
std::optional<std::string> Gather(const TensorDesc& out_desc,
                                  const std::string& buffer) {
  const uint32_t size = ElementBytes(out_desc.type());
  std::string out;
  for (uint64_t offset : cpu::ElementOffsets(out_desc)) {
    if ((offset + 1) * size > buffer.size()) return std::nullopt;
    out.append(buffer.data() + offset * size, size);
  }
  return out;
}

// The CPU engine's logical output elements for `proto` (mapped with
// feature level `fl`) with every float32 denormal parameter and FLOAT32
// payload element flushed (OPERATORS.md §7.5, ftz_alternative.h), run on
// `request`'s payloads; nullopt when nothing was flushed or when the
// flushed descriptor is invalid (then only the exact result conforms). A
// CPU engine that hangs or fails on the flushed request (it ran the
// unflushed one) is a test failure.
std::optional<std::string> FlushedExpectation(Engine& cpu, dmlserve::v1::ExecuteRequest proto,
                                              uint32_t fl, bool in_place,
                                              const ExecuteRequest& request,
                                              const TensorDesc& out_desc) {
  int changed = FlushDenormalFloatFields(proto);
  const OperatorDesc op = server::OperatorFromProto(proto.operator_());
  if (!ops::ValidateAll(op, fl, in_place).empty()) return std::nullopt;
  ExecuteRequest flushed = request;
  flushed.op = op;
  if (op.input && op.input->type() == DataType::kFloat32) {
    flushed.input = FlushDenormalWords(request.input.ToString(), &changed);
    flushed.scale = FlushDenormalWords(request.scale.ToString(), &changed);
    flushed.bias = FlushDenormalWords(request.bias.ToString(), &changed);
  }
  if (changed == 0) return std::nullopt;
  bool hung = false;
  const absl::StatusOr<ExecuteResult> result = RunOne(cpu, std::move(flushed), &hung);
  if (hung || !result.ok()) {
    ADD_FAILURE() << "CPU engine on the flushed request: "
                  << (hung ? "did not complete" : result.status().ToString());
    return std::nullopt;
  }
  return Gather(out_desc, result->output);
}

// "cpu INVALID_ARGUMENT: InputTensor payload is" -- the message up to its
// first digit, so that errors group by kind in the summary.
std::string ErrorKind(const char* engine, const absl::Status& s) {
  std::string text = s.ToString();
  text = text.substr(0, std::min<size_t>(text.find_first_of("0123456789"), 60));
  return absl::StrCat(engine, " ", text);
}

// Up to the first 160 FLOAT32 values of a payload, for failure messages.
std::string PayloadPrefix(DataType type, const std::string& payload) {
  if (type != DataType::kFloat32) return "(not FLOAT32)";
  std::string out;
  for (size_t i = 0; i + 4 <= payload.size() && i < 160 * 4; i += 4) {
    float v;
    std::memcpy(&v, payload.data() + i, 4);
    absl::StrAppend(&out, v, " ");
  }
  return out;
}

struct Stats {
  int mutants = 0;
  int invalid = 0;
  int valid = 0;
  int skipped_large = 0;
  int executed = 0;
  int bad_payload = 0;  // valid mutants run with a payload off by one
  int both_ok = 0;
  int mvn_extreme = 0;  // compared MVN with |x| > 2^40 or non-finite values
  uint64_t compared_elements = 0;
  int ftz_alternatives = 0;  // mismatches compared with the §7.5 result too
  int ftz_rescued = 0;       // of those, the ones that matched it
  std::map<std::string, int> rules;  // first violation's rule -> count
  std::map<std::string, int> engine_errors;
};

class RobustnessTest : public ::testing::TestWithParam<int> {};

TEST_P(RobustnessTest, MutantsNeverCrashHangOrDisagree) {
  const int shard = GetParam();
  const char* dir = std::getenv("DMLS_CONFORMANCE_DATA_DIR");
  // The curated corpus only: conformance_random*.pb is itself a randomized
  // run (3,000 cases), and 64 mutants of each would triple this test's time
  // for little new coverage.
  absl::StatusOr<conformance::CaseSet> corpus = conformance::LoadCorpusDir(
      dir ? dir : DMLS_CONFORMANCE_DATA_DIR, {"conformance_random"});
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  ASSERT_GT(corpus->cases_size(), 0);

  CpuEngineOptions cpu_options;
  cpu_options.threads = 1;
  CpuEngine cpu(cpu_options);
  d3d12::GpuEngineOptions gpu_options;
  const d3d12::DeviceOptions::Kind gpu_kind = d3d12::TestAdapterKind();
  gpu_options.device.kind = gpu_kind;
  gpu_options.poison_outputs = true;
  absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> gpu =
      d3d12::CreateGpuEngine(std::move(gpu_options));
  ASSERT_TRUE(gpu.ok()) << gpu.status();

  const std::vector<gpu::KernelKey> all_keys_vec = gpu::AllKernelKeys();
  const std::unordered_set<gpu::KernelKey, gpu::KernelKeyHash> all_keys(
      all_keys_vec.begin(), all_keys_vec.end());

  // DMLS_ROBUSTNESS_SEED=<n> explores other mutants (a debugging aid; the
  // registered test always uses the default).
  uint64_t seed_base = 0x5eed;
  if (const char* seed = std::getenv("DMLS_ROBUSTNESS_SEED")) {
    seed_base = std::strtoull(seed, nullptr, 0);
  }
  Stats stats;
  const absl::Time start = absl::Now();
  for (int ci = shard; ci < corpus->cases_size(); ci += kShards) {
    const conformance::Case& c = corpus->cases(ci);
    // Debugging aid: DMLS_ROBUSTNESS_CASE=<substring of a case id> runs
    // only the matching cases (the seeds do not depend on the filter).
    if (const char* only = std::getenv("DMLS_ROBUSTNESS_CASE");
        only != nullptr && !absl::StrContains(c.id(), only)) {
      continue;
    }
    const bool large_case = absl::StrContains(c.id(), "large");
    for (int mi = 0; mi < kMutantsPerCase; ++mi) {
      Mutator mutator(seed_base * 1000003u + uint64_t(ci) * 131u + mi);
      dmlserve::v1::ExecuteRequest proto = c.request();
      std::string what;
      const uint32_t count = 1 + mutator.Uniform(3);
      for (uint32_t k = 0; k < count; ++k) {
        absl::StrAppend(&what, k ? ", " : "", mutator.MutateOnce(proto));
      }
      mutator.MaybeRepair(proto);
      const std::string label = absl::StrCat(c.id(), " #", mi, " [", what, "]");
      SCOPED_TRACE(label);
      ++stats.mutants;

      const OperatorDesc op = server::OperatorFromProto(proto.operator_());
      const uint32_t fl = server::FeatureLevelFromProto(proto.feature_level(),
                                                        kHighestFeatureLevel);
      const bool in_place = proto.in_place();
      const std::vector<ops::Violation> violations =
          ops::ValidateAll(op, fl, in_place);
      if (!violations.empty()) {
        ++stats.invalid;
        ++stats.rules[violations.front().rule];
        for (const ops::Violation& v : violations) {
          EXPECT_TRUE(Catalogue().count(v.rule)) << "rule '" << v.rule << "'";
          EXPECT_TRUE(absl::StartsWith(v.field, "operator") ||
                      absl::StartsWith(v.field, "feature_level") ||
                      absl::StartsWith(v.field, "in_place"))
              << v.rule << " at '" << v.field << "'";
          EXPECT_FALSE(v.message.empty()) << v.rule;
        }
        continue;
      }
      ++stats.valid;
      ASSERT_TRUE(op.input && op.output) << "valid without input/output";

      const uint64_t in_bytes = op.input->total_tensor_size_in_bytes;
      const uint64_t scale_bytes = op.scale ? op.scale->total_tensor_size_in_bytes : 0;
      const uint64_t bias_bytes = op.bias ? op.bias->total_tensor_size_in_bytes : 0;
      const uint64_t largest = std::max({in_bytes, scale_bytes, bias_bytes,
                                         op.output->total_tensor_size_in_bytes});
      if (largest > (large_case ? kMaxExecutedTensorBytes : kMaxRoutineTensorBytes) ||
          largest > kMaxExecutedTensorBytes) {
        ++stats.skipped_large;
        continue;
      }

      // No request may reach the DXBC emitter with an uncompiled key.
      const absl::StatusOr<gpu::DispatchPlan> plan = gpu::PlanExecution(op, in_place);
      bool keys_ok = true;
      if (plan.ok()) {
        for (const gpu::Dispatch& d : plan->dispatches) {
          if (!all_keys.count(d.key)) {
            ADD_FAILURE() << "planned key outside AllKernelKeys: " << d.key.DebugString();
            keys_ok = false;
          }
        }
      } else {
        EXPECT_TRUE(IsCleanStatus(plan.status())) << plan.status();
      }

      ExecuteRequest request;
      request.op = op;
      request.feature_level = static_cast<FeatureLevel>(fl);
      request.in_place = in_place;
      request.input = Resized(proto.input(), in_bytes);
      request.scale = Resized(proto.scale(), scale_bytes);
      request.bias = Resized(proto.bias(), bias_bytes);
      // One in eight runs with a payload one byte off: both engines must
      // refuse it cleanly (the server checks lengths first; the engines
      // must not trust that).
      const bool bad_payload = mutator.Uniform(8) == 0;
      if (bad_payload) {
        ++stats.bad_payload;
        // Only payloads of tensors the operator has: the CPU engine ignores
        // a scale/bias payload sent for an absent tensor (the server
        // rejects it before any engine sees it).
        std::string& p =
            (op.scale && mutator.Uniform(2) ? request.scale : request.input).mutable_string();
        if (mutator.Uniform(2) == 0 || p.empty()) {
          p.push_back('\0');
        } else {
          p.pop_back();
        }
      }
      ++stats.executed;

      bool hung = false;
      const absl::StatusOr<ExecuteResult> cpu_result = RunOne(cpu, request, &hung);
      ASSERT_FALSE(hung) << "CPU engine did not complete";
      EXPECT_TRUE(IsCleanStatus(cpu_result.status())) << "CPU: " << cpu_result.status();
      if (!cpu_result.ok()) ++stats.engine_errors[ErrorKind("cpu", cpu_result.status())];
      if (!keys_ok) continue;
      const absl::StatusOr<ExecuteResult> gpu_result = RunOne(**gpu, request, &hung);
      ASSERT_FALSE(hung) << "GPU engine did not complete";
      EXPECT_TRUE(IsCleanStatus(gpu_result.status())) << "GPU: " << gpu_result.status();
      if (!gpu_result.ok()) ++stats.engine_errors[ErrorKind("gpu", gpu_result.status())];
      if (bad_payload) {
        EXPECT_TRUE(absl::IsInvalidArgument(cpu_result.status())) << cpu_result.status();
        EXPECT_TRUE(absl::IsInvalidArgument(gpu_result.status())) << gpu_result.status();
        continue;
      }
      if (!cpu_result.ok() || !gpu_result.ok()) continue;
      ++stats.both_ok;
      if (MvnHasExtremeValues(op, request.input.ToString())) ++stats.mvn_extreme;

      uint64_t want = op.output->total_tensor_size_in_bytes;
      if (in_place) want = std::max(want, in_bytes);
      ASSERT_EQ(cpu_result->output.size(), want);
      ASSERT_EQ(gpu_result->output.size(), want);
      const std::optional<std::string> expected = Gather(*op.output, cpu_result->output);
      const std::optional<std::string> actual = Gather(*op.output, gpu_result->output);
      ASSERT_TRUE(expected && actual) << "output element outside the buffer";
      const DataType type = op.output->type();
      const std::string tolerance_class = ToleranceClassOf(op);
      const absl::StatusOr<conformance::Tolerance> tolerance =
          conformance::ToleranceFor(tolerance_class, type);
      ASSERT_TRUE(tolerance.ok()) << tolerance.status();
      const uint64_t elements = expected->size() / ElementBytes(type);
      std::optional<conformance::Mismatch> mismatch =
          conformance::CompareElements(*actual, *expected, type, elements, *tolerance);
      if (mismatch) {
        // A device that flushes float32 denormals (the H100; not lavapipe)
        // may also give the flushed request's result, element by element.
        const std::optional<std::string> flushed =
            FlushedExpectation(cpu, proto, fl, in_place, request, *op.output);
        if (flushed) {
          ++stats.ftz_alternatives;
          mismatch = conformance::CompareElementsWithAlternative(*actual, *expected, *flushed,
                                                                 type, elements, *tolerance);
          if (!mismatch) ++stats.ftz_rescued;
          // The software adapter (lavapipe) never flushes: a flushed
          // result there is a regression of the exact paths (a denormal
          // Epsilon or parameter the kernels must honour).
          EXPECT_FALSE(!mismatch && gpu_kind == d3d12::DeviceOptions::Kind::kSoftware)
              << "the software adapter matched only the flushed-denormal result";
        }
      }
      if (mismatch) {
        dmlserve::v1::ExecuteRequest shown = proto;  // without the payloads
        shown.clear_input();
        shown.clear_scale();
        shown.clear_bias();
        ADD_FAILURE() << "GPU vs CPU: " << mismatch->message << " [" << tolerance_class
                      << "]\n  request: " << shown.ShortDebugString()
                      << "\n  input: " << PayloadPrefix(op.input->type(), request.input.ToString());
      }
      stats.compared_elements += elements;
    }
  }
  (*gpu)->Shutdown();
  cpu.Shutdown();

  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::string rules;
  for (const auto& [rule, n] : stats.rules) absl::StrAppend(&rules, " ", rule, "=", n);
  std::string errors;
  for (const auto& [e, n] : stats.engine_errors) absl::StrAppend(&errors, "\n    ", n, "x ", e);
  std::cout << "shard " << shard << ": " << stats.mutants << " mutants, "
            << stats.invalid << " invalid, " << stats.valid << " valid ("
            << stats.skipped_large << " too large to run), " << stats.executed
            << " executed (" << stats.bad_payload << " with a payload off by one), "
            << stats.both_ok << " compared (" << stats.compared_elements
            << " elements; " << stats.mvn_extreme
            << " of them MVN with |x| > 2^40 or non-finite; " << stats.ftz_alternatives
            << " compared with their flushed-denormal result too, " << stats.ftz_rescued
            << " matching it) in " << seconds
            << " s\n  first rules:" << rules
            << "\n  engine errors:" << errors << "\n";
  // The mutation mix must keep reaching both sides of the validator and the
  // comparison, or the test silently stops testing the engines.
  if (std::getenv("DMLS_ROBUSTNESS_CASE") == nullptr) {
    EXPECT_GT(stats.invalid, stats.mutants / 10);
    EXPECT_GT(stats.both_ok, stats.mutants / 10);
    EXPECT_GT(stats.mvn_extreme, 0);  // huge-value MVN mutants are compared too
  }
}

INSTANTIATE_TEST_SUITE_P(Shards, RobustnessTest, ::testing::Range(0, kShards));

}  // namespace
}  // namespace dmls::robustness
