#include "tests/conformance/corpus.h"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/core/mutex.h"
#include "engine/cpu/tensor_access.h"
#include "server/mapping/proto_mapping.h"
#include "tests/conformance/tolerance.h"

namespace dmls::conformance {

std::string CorpusReport::Summary(size_t max_failures) const {
  std::string out = absl::StrCat(passed, "/", total, " cases passed");
  for (size_t i = 0; i < failures.size() && i < max_failures; ++i) {
    absl::StrAppend(&out, "\n  FAIL ", failures[i].id, ": ",
                    failures[i].message);
  }
  if (failures.size() > max_failures) {
    absl::StrAppend(&out, "\n  ... and ", failures.size() - max_failures,
                    " more");
  }
  return out;
}

absl::StatusOr<CaseSet> LoadCaseSet(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream data;
  data << in.rdbuf();
  CaseSet set;
  if (!set.ParseFromString(data.str())) {
    return absl::DataLossError(absl::StrCat(path, " is not a CaseSet"));
  }
  return set;
}

absl::StatusOr<std::vector<std::string>> CorpusFileNames(
    const std::string& dir, const std::vector<std::string>& skip_prefixes) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      const bool skipped = std::any_of(
          skip_prefixes.begin(), skip_prefixes.end(),
          [&](const std::string& p) { return absl::StartsWith(name, p); });
      if (absl::StartsWith(name, "conformance_") &&
          absl::EndsWith(name, ".pb") && !skipped) {
        names.push_back(name);
      }
    }
    closedir(d);
  } else {
    return absl::NotFoundError(absl::StrCat("cannot list ", dir));
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) {
    return absl::NotFoundError(absl::StrCat("no conformance_*.pb in ", dir));
  }
  return names;
}

absl::StatusOr<CaseSet> LoadCorpusDir(
    const std::string& dir, const std::vector<std::string>& skip_prefixes) {
  absl::StatusOr<std::vector<std::string>> names = CorpusFileNames(dir, skip_prefixes);
  if (!names.ok()) return names.status();
  CaseSet all;
  for (const std::string& name : *names) {
    absl::StatusOr<CaseSet> set = LoadCaseSet(dir + "/" + name);
    if (!set.ok()) return set.status();
    for (Case& c : *set->mutable_cases()) *all.add_cases() = std::move(c);
  }
  return all;
}

ExecuteRequest RequestFromCase(const Case& c) {
  const dmlserve::v1::ExecuteRequest& proto = c.request();
  ExecuteRequest request;
  request.op = server::OperatorFromProto(proto.operator_());
  request.feature_level =
      static_cast<FeatureLevel>(server::FeatureLevelFromProto(
          proto.feature_level(), kHighestFeatureLevel));
  request.in_place = proto.in_place();
  request.input = proto.input();
  request.scale = proto.scale();
  request.bias = proto.bias();
  return request;
}

std::optional<std::string> GatherElements(const TensorDesc& desc,
                                          const std::string& buffer) {
  const uint32_t size = ElementBytes(desc.type());
  const std::vector<uint64_t> offsets = cpu::ElementOffsets(desc);
  std::string packed;
  packed.reserve(offsets.size() * size);
  for (uint64_t offset : offsets) {
    if ((offset + 1) * size > buffer.size()) return std::nullopt;
    packed.append(buffer.data() + offset * size, size);
  }
  return packed;
}

std::optional<std::string> CheckResult(
    const Case& c, const OperatorDesc& op, bool in_place,
    const absl::StatusOr<ExecuteResult>& result, const RunOptions& options) {
  if (!result.ok()) {
    return absl::StrCat("engine error: ", result.status().ToString());
  }
  if (!op.input || !op.output) return std::string("case has no input/output");
  const std::optional<DataType> type = DataTypeFromName(c.output_dtype());
  if (!type || *type != op.output->type()) {
    return absl::StrCat("case output_dtype '", c.output_dtype(),
                        "' does not match the output tensor");
  }
  uint64_t want_size = op.output->total_tensor_size_in_bytes;
  if (in_place) {
    want_size = std::max(want_size, op.input->total_tensor_size_in_bytes);
  }
  const std::string& out = result->output;
  if (out.size() != want_size) {
    return absl::StrCat("output is ", out.size(), " bytes, expected ",
                        want_size);
  }
  // Gather the logical elements through the output's strides.
  const std::optional<std::string> gathered = GatherElements(*op.output, out);
  if (!gathered) return std::string("an output element lies outside the output buffer");
  const std::string& actual = *gathered;
  const uint64_t count = actual.size() / ElementBytes(*type);
  const std::string& tolerance_class = options.tolerance_override.empty()
                                           ? c.tolerance_class()
                                           : options.tolerance_override;
  const absl::StatusOr<Tolerance> tolerance =
      ToleranceFor(tolerance_class, *type);
  if (!tolerance.ok()) return tolerance.status().ToString();
  const bool allow_nan = options.relax_nan_sensitive && c.nan_sensitive();
  const std::optional<Mismatch> mismatch =
      options.accept_ftz && !c.expected_ftz().empty()
          ? CompareElementsWithAlternative(actual, c.expected(),
                                           c.expected_ftz(), *type,
                                           count, *tolerance,
                                           allow_nan)
          : CompareElements(actual, c.expected(), *type, count,
                            *tolerance, allow_nan);
  if (mismatch) {
    return absl::StrCat(mismatch->message, " [", tolerance_class, "]");
  }
  return std::nullopt;
}

CorpusReport RunCorpus(Engine& engine, const CaseSet& cases,
                       const RunOptions& options) {
  // Shared with the callbacks, so that a callback finishing its unlock never
  // touches a mutex this function has already destroyed.
  struct State {
    Mutex mu;
    CondVar changed;
    int in_flight ABSL_GUARDED_BY(mu) = 0;
    CorpusReport report ABSL_GUARDED_BY(mu);
  };
  auto state = std::make_shared<State>();
  const int max_in_flight = std::max(1, options.max_in_flight);
  for (const Case& c : cases.cases()) {
    if (!options.id_filter.empty() &&
        !absl::StrContains(c.id(), options.id_filter)) {
      continue;
    }
    ExecuteRequest request = RequestFromCase(c);
    OperatorDesc op = request.op;  // the request moves into the engine
    const bool in_place = request.in_place;
    {
      MutexLock lock(&state->mu);
      ++state->report.total;
      while (state->in_flight >= max_in_flight) state->changed.Wait(&state->mu);
      ++state->in_flight;
    }
    // The case and the options outlive the callback's use of them: this
    // function waits for every in-flight request before returning.
    engine.Execute(
        std::move(request), [state, &options, c_ptr = &c, op = std::move(op),
                             in_place](absl::StatusOr<ExecuteResult> result) {
          std::optional<std::string> failure =
              CheckResult(*c_ptr, op, in_place, result, options);
          MutexLock lock(&state->mu);
          if (failure) {
            state->report.failures.push_back({c_ptr->id(), *failure});
          } else {
            ++state->report.passed;
          }
          --state->in_flight;
          state->changed.SignalAll();
        });
  }
  CorpusReport report;
  {
    MutexLock lock(&state->mu);
    while (state->in_flight > 0) state->changed.Wait(&state->mu);
    report = std::move(state->report);
  }
  // Completion order is free; report failures in a stable order.
  std::sort(
      report.failures.begin(), report.failures.end(),
      [](const CaseFailure& a, const CaseFailure& b) { return a.id < b.id; });
  return report;
}

}  // namespace dmls::conformance
