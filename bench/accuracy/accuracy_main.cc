// dmls_accuracy: worst error of every activation on the Direct3D 12 engine
// against the binary64 CPU reference (engine/cpu/activations.h) over a
// dense sweep of inputs (bench/accuracy/sweep.h), printed as a Markdown
// table. Relative figures only: references that are zero or denormal in
// the result type are checked apart (a result beyond the denormal range
// counts as a special mismatch, as does a wrong NaN or infinity).
//
//   dmls_accuracy [--device=auto|gpu|software] [--adapter=N]
//                 [--data_type=float32|float16] [--mantissas=4096]
//                 [--cases=NAME,...]
//
// --cases takes case names as printed ("celu(FLT_MAX)") or families
// ("celu" selects every CELU case).
//
// The exit status is 1 when a case has elements over its tolerance
// class's relative budget or special mismatches, 2 on errors.
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/accuracy/sweep.h"
#include "bench/device_flags.h"
#include "engine/core/execute_sync.h"
#include "engine/core/tensor_desc.h"
#include "engine/cpu/activations.h"
#include "engine/cpu/float16.h"
#include "engine/d3d12/device.h"
#include "engine/d3d12/dxbc_engine.h"
#include "engine/ops/validator.h"

namespace dmls::accuracy {
namespace {

struct Flags {
  d3d12::DeviceOptions device;
  bool half = false;
  uint32_t mantissas = 4096;
  std::vector<std::string> cases;  // substrings; empty = all
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (bool ok = true; bench::ParseDeviceFlag(key, value, &f->device, &ok)) {
      if (!ok) return false;
    } else if (key == "--data_type" && (value == "float32" || value == "float16")) {
      f->half = value == "float16";
    } else if (key == "--mantissas") {
      if (!absl::SimpleAtoi(value, &f->mantissas) || f->mantissas < 2) return false;
    } else if (key == "--cases") {
      f->cases = absl::StrSplit(value, ',', absl::SkipEmpty());
    } else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return false;
    }
  }
  return true;
}

bool Selected(const Flags& f, const std::string& name) {
  if (f.cases.empty()) return true;
  const std::string family = name.substr(0, name.find('('));
  for (const std::string& s : f.cases) {
    if (s == name || s == family) return true;
  }
  return false;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

int Main(int argc, char** argv) {
  Flags f;
  if (!ParseFlags(argc, argv, &f)) {
    std::fprintf(stderr,
                 "usage: dmls_accuracy [--device=auto|gpu|software] [--adapter=N] "
                 "[--data_type=float32|float16] [--mantissas=4096] [--cases=a,b]\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  d3d12::GpuEngineOptions o;
  o.device = f.device;
  o.logger = nullptr;
  absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> engine = d3d12::CreateGpuEngine(std::move(o));
  if (!engine.ok()) {
    std::fprintf(stderr, "dmls_accuracy: %s\n", std::string(engine.status().message()).c_str());
    return 2;
  }
  // The inputs as float32 values and as the tensor's bytes.
  std::vector<float> xs;
  std::string bytes;
  if (f.half) {
    std::vector<uint16_t> h = Float16Sweep();
    bytes.assign(reinterpret_cast<const char*>(h.data()), h.size() * 2);
    for (uint16_t b : h) xs.push_back(cpu::HalfBitsToFloat(b));
  } else {
    xs = Float32Sweep(f.mantissas);
    bytes.assign(reinterpret_cast<const char*>(xs.data()), xs.size() * 4);
  }
  const DataType type = f.half ? DataType::kFloat16 : DataType::kFloat32;
  const uint64_t elem = f.half ? 2 : 4;
  std::printf("dmls_accuracy: %s, %zu %s inputs, device %s\n\n",
              f.half ? "every finite binary16" : "float32 sweep", xs.size(),
              f.half ? "FLOAT16" : "FLOAT32",
              std::string(d3d12::DeviceKindName(f.device.kind)).c_str());
  std::printf("| case | class | compared | worst ulp | worst rel | at x | got | ref | "
              "over budget | special mismatches |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  int rc = 0;
  for (const SweepCase& c : DefaultCases()) {
    if (!Selected(f, c.name)) continue;
    OperatorDesc op;
    op.type = static_cast<uint32_t>(c.op);
    op.activation = {c.p0, c.p1};
    const uint64_t n = xs.size();
    op.input = MakeTensorDesc(type, {1, 1, 1, n});
    op.output = op.input;
    if (absl::Status s = ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), false);
        !s.ok()) {
      std::printf("| %s | invalid: %s |\n", c.name.c_str(), std::string(s.message()).c_str());
      rc = 2;
      continue;
    }
    ExecuteRequest r;
    r.op = op;
    std::string input = bytes;
    input.resize(op.input->total_tensor_size_in_bytes, '\0');
    r.input = std::move(input);
    absl::StatusOr<ExecuteResult> res = ExecuteSync(**engine, std::move(r));
    if (!res.ok() || res->output.size() < n * elem) {
      std::printf("| %s | error: %s |\n", c.name.c_str(),
                  res.ok() ? "short output" : std::string(res.status().message()).c_str());
      rc = 2;
      continue;
    }
    const cpu::ActivationFn fn = cpu::FindActivation(op.type);
    const cpu::ActivationArgs args{c.p0.value_or(0.0f), c.p1.value_or(0.0f)};
    const Budget budget = BudgetFor(c.tol, f.half);
    ErrorStats stats(f.half);
    for (uint64_t i = 0; i < n; ++i) {
      double got;
      if (f.half) {
        uint16_t b;
        std::memcpy(&b, res->output.data() + i * 2, 2);
        got = cpu::HalfBitsToDouble(b);
      } else {
        float g;
        std::memcpy(&g, res->output.data() + i * 4, 4);
        got = g;
      }
      double ref = fn(xs[i], args);
      if (!f.half && xs[i] != 0.0f && std::fabs(xs[i]) < FLT_MIN) {
        // OPERATORS.md §7.5: a denormal input may be flushed to a zero of
        // its sign before arithmetic; measure against the nearer result.
        const double flushed = fn(std::copysign(0.0f, xs[i]), args);
        if (std::fabs(got - flushed) < std::fabs(got - ref)) ref = flushed;
      }
      stats.Add(xs[i], ref, got, budget.ulp, budget.rel);
    }
    std::printf("| %s | %s | %llu | %.3g | %.3g | %s | %s | %s | %llu | %llu%s |\n",
                c.name.c_str(), TolClassName(c.tol),
                static_cast<unsigned long long>(stats.compared()), stats.worst_ulp(),
                stats.worst_rel(), Num(stats.worst_x()).c_str(), Num(stats.worst_got()).c_str(),
                Num(stats.worst_ref()).c_str(),
                static_cast<unsigned long long>(stats.over_budget()),
                static_cast<unsigned long long>(stats.special_mismatches()),
                stats.special_mismatches() > 0
                    ? (" (first at x=" + Num(stats.first_special_x()) + ")").c_str()
                    : "");
    std::fflush(stdout);
    if ((stats.over_budget() > 0 || stats.special_mismatches() > 0) && rc == 0) rc = 1;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("\n%.1f s\n", secs);
  return rc;
}

}  // namespace
}  // namespace dmls::accuracy

int main(int argc, char** argv) { return dmls::accuracy::Main(argc, argv); }
