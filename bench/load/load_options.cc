#include "bench/load/load_options.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace dmls::load {

absl::StatusOr<RpcKind> ParseRpcKind(absl::string_view text) {
  if (text == "unary") return RpcKind::kUnary;
  if (text == "stream") return RpcKind::kStream;
  return absl::InvalidArgumentError(
      absl::StrCat("bad --rpc '", text, "' (want unary or stream)"));
}

const char* RpcKindName(RpcKind kind) {
  return kind == RpcKind::kUnary ? "unary" : "stream";
}

absl::Status ValidateLoadOptions(const LoadOptions& o) {
  auto bad = [](absl::string_view what) {
    return absl::InvalidArgumentError(what);
  };
  if (o.target.empty()) return bad("--target is empty");
  if (!(o.rate >= 0) || !std::isfinite(o.rate)) return bad("--rate must be >= 0");
  if (o.rate == 0 && o.concurrency == 0) return bad("--concurrency must be >= 1");
  if (o.rate > 0 && o.max_outstanding == 0) {
    return bad("--max_outstanding must be >= 1");
  }
  if (o.connections == 0 || o.connections > 1024) {
    return bad("--connections must be in [1, 1024]");
  }
  if (o.streams == 0 || o.streams > 4096) {
    return bad("--streams must be in [1, 4096]");
  }
  if (o.duration <= absl::ZeroDuration()) return bad("--duration must be > 0");
  if (o.warmup < absl::ZeroDuration()) return bad("--warmup must be >= 0");
  if (o.timeout <= absl::ZeroDuration()) return bad("--timeout must be > 0");
  if (o.connect_timeout <= absl::ZeroDuration()) {
    return bad("--connect_timeout must be > 0");
  }
  const PayloadOptions& p = o.payload;
  if (!p.input_npy.empty() && p.op_json.empty()) {
    return bad("--input needs --op_json (the operator it feeds)");
  }
  if (p.op_json.empty()) {
    if (p.op.empty()) return bad("--op is empty");
    if (p.dtype != "float32" && p.dtype != "float16") {
      return bad("--dtype must be float32 or float16");
    }
    if (p.bytes == 0) return bad("--bytes must be > 0");
    if (p.mvn_cols == 0) return bad("--mvn_cols must be > 0");
  }
  return absl::OkStatus();
}

}  // namespace dmls::load
