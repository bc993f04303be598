// dmls_load: a load generator for dmlserve.v1.DmlService (dmlserve, or the
// echo_server anchor). Flags -> LoadOptions and a Payload, one run, a human
// table on stdout and optionally the same fields as JSON (--json=FILE).
//
// Exit status: 0 when at least one request succeeded and no check failed;
// 1 when none succeeded, a --check failed, a stream response matched no
// request, or the target could not be reached; 2 for bad flags or payload
// files.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "bench/flags_help.h"
#include "bench/load/load_options.h"
#include "bench/load/load_runner.h"
#include "bench/load/payload.h"
#include "bench/load/report.h"
#include "bench/load/units.h"

namespace {
const dmls::load::LoadOptions kDefaults;
}  // namespace

ABSL_FLAG(std::string, target, kDefaults.target, "Server address, host:port.");
ABSL_FLAG(std::string, rpc, "unary",
          "unary (Execute) or stream (ExecuteStream, request_id matched).");
ABSL_FLAG(uint32_t, concurrency, kDefaults.concurrency,
          "Closed loop: requests outstanding at all times.");
ABSL_FLAG(double, rate, kDefaults.rate,
          "Open loop: requests/s due at fixed intervals (0 = closed loop).");
ABSL_FLAG(uint32_t, max_outstanding, kDefaults.max_outstanding,
          "Open loop: requests outstanding before due ones are skipped.");
ABSL_FLAG(uint32_t, connections, kDefaults.connections,
          "Distinct gRPC channels (TCP connections).");
ABSL_FLAG(uint32_t, streams, kDefaults.streams,
          "--rpc=stream: ExecuteStream calls carrying the load.");
ABSL_FLAG(absl::Duration, duration, kDefaults.duration,
          "Measured window, after the warm-up (e.g. 8s).");
ABSL_FLAG(absl::Duration, warmup, kDefaults.warmup,
          "Load applied before the measured window.");
ABSL_FLAG(absl::Duration, timeout, kDefaults.timeout,
          "Deadline of each unary call; longest drain at the end.");
ABSL_FLAG(absl::Duration, connect_timeout, kDefaults.connect_timeout,
          "How long each channel may take to connect.");
ABSL_FLAG(std::string, op, kDefaults.payload.op,
          "Generated payload: OperatorDesc member (celu, threshold, relu, "
          "sigmoid, clip, mvn1, ...).");
ABSL_FLAG(std::string, dtype, kDefaults.payload.dtype,
          "Generated payload: float32 or float16.");
ABSL_FLAG(std::string, bytes, "1KiB",
          "Generated payload: input tensor bytes (1KiB, 64KiB, 4MiB, ...).");
ABSL_FLAG(uint64_t, mvn_cols, kDefaults.payload.mvn_cols,
          "--op=mvn1: row length in elements (rows = elements / cols).");
ABSL_FLAG(std::string, op_json, "",
          "Operator descriptor, protobuf JSON of OperatorDesc (as dmlctl); "
          "replaces --op/--dtype/--bytes.");
ABSL_FLAG(std::string, input, "",
          ".npy input for --op_json (else every tensor gets random data).");
ABSL_FLAG(uint64_t, seed, kDefaults.payload.seed, "Seed of the random data.");
ABSL_FLAG(bool, check, false,
          "Validate the first --check_count successful responses.");
ABSL_FLAG(uint32_t, check_count, kDefaults.check_count,
          "Responses --check validates.");
ABSL_FLAG(std::string, json, "", "Also write the report as JSON to this file.");

namespace dmls::load {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

int Main() {
  LoadOptions options;
  options.target = absl::GetFlag(FLAGS_target);
  absl::StatusOr<RpcKind> rpc = ParseRpcKind(absl::GetFlag(FLAGS_rpc));
  absl::StatusOr<uint64_t> bytes = ParseByteSize(absl::GetFlag(FLAGS_bytes));
  if (!rpc.ok() || !bytes.ok()) {
    std::fprintf(stderr, "dmls_load: %s\n",
                 std::string((rpc.ok() ? bytes.status() : rpc.status()).message())
                     .c_str());
    return kExitUsage;
  }
  options.rpc = *rpc;
  options.concurrency = absl::GetFlag(FLAGS_concurrency);
  options.rate = absl::GetFlag(FLAGS_rate);
  options.max_outstanding = absl::GetFlag(FLAGS_max_outstanding);
  options.connections = absl::GetFlag(FLAGS_connections);
  options.streams = absl::GetFlag(FLAGS_streams);
  options.duration = absl::GetFlag(FLAGS_duration);
  options.warmup = absl::GetFlag(FLAGS_warmup);
  options.timeout = absl::GetFlag(FLAGS_timeout);
  options.connect_timeout = absl::GetFlag(FLAGS_connect_timeout);
  options.check = absl::GetFlag(FLAGS_check);
  options.check_count = absl::GetFlag(FLAGS_check_count);
  options.payload.op = absl::GetFlag(FLAGS_op);
  options.payload.dtype = absl::GetFlag(FLAGS_dtype);
  options.payload.bytes = *bytes;
  options.payload.mvn_cols = absl::GetFlag(FLAGS_mvn_cols);
  options.payload.op_json = absl::GetFlag(FLAGS_op_json);
  options.payload.input_npy = absl::GetFlag(FLAGS_input);
  options.payload.seed = absl::GetFlag(FLAGS_seed);
  if (absl::Status s = ValidateLoadOptions(options); !s.ok()) {
    std::fprintf(stderr, "dmls_load: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }

  absl::StatusOr<Payload> payload = BuildPayload(options.payload);
  if (!payload.ok()) {
    std::fprintf(stderr, "dmls_load: %s\n",
                 std::string(payload.status().message()).c_str());
    return kExitUsage;
  }
  absl::StatusOr<Report> report = RunLoad(options, *payload);
  if (!report.ok()) {
    std::fprintf(stderr, "dmls_load: %s\n",
                 std::string(report.status().message()).c_str());
    return kExitFailed;
  }
  std::fputs(FormatReportTable(*report).c_str(), stdout);
  std::fflush(stdout);
  const std::string json_path = absl::GetFlag(FLAGS_json);
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << ReportToJson(*report);
    if (!out.flush()) {
      std::fprintf(stderr, "dmls_load: cannot write %s\n", json_path.c_str());
      return kExitUsage;
    }
  }
  if (report->ok == 0) {
    std::fprintf(stderr, "dmls_load: no request succeeded\n");
    return kExitFailed;
  }
  if (report->check_failures > 0 || report->unmatched_responses > 0) {
    std::fprintf(stderr, "dmls_load: %llu check failure(s), %llu unmatched "
                 "response(s)\n",
                 static_cast<unsigned long long>(report->check_failures),
                 static_cast<unsigned long long>(report->unmatched_responses));
    return kExitFailed;
  }
  return 0;
}

}  // namespace
}  // namespace dmls::load

int main(int argc, char** argv) {
  dmls::bench::ParseCommandLineWithHelp(
      argc, argv,
      "Load generator for dmlserve.v1.DmlService.\n"
      "Usage: dmls_load --target=HOST:PORT [--concurrency=N | --rate=R] "
      "[--flag=value]...",
      "bench/load/load_main.cc");
  return dmls::load::Main();
}
