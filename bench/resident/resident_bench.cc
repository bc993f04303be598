// dmls_resident_bench: what resident tensors buy, measured from a client.
//
//   --mode=chain     three operators (CELU, MVN1 over rows, THRESHOLD) on a
//                    resident FLOAT32 tensor of --bytes as one ExecuteChain
//                    (result kept resident; and again with the result read
//                    back), against the same three as inline Execute round
//                    trips. Needs dmlserve.
//   --mode=transfer  a tensor of --bytes written with WriteTensor and read
//                    back with ReadTensor in chunks of --chunk_bytes, in
//                    bytes/s. Run it against dmlserve and against
//                    echo_server (the anchor: the same RPCs, storing
//                    nothing) with the same flags.
//   --mode=roundtrip create, write, CELU (kept resident), read a tensor of
//                    --bytes and check every element against the CELU
//                    formula on the client. Needs dmlserve.
//   --mode=chainload --clients threads, each with its own channel and
//                    tenant and a resident tensor of --bytes, run chains of
//                    --steps MVN1 (or --op=celu) steps on it in a closed
//                    loop for --seconds; prints chains/s and device GB/s
//                    (the compute-bound load of the several-GPU
//                    measurement).
//
// Each timed step runs --iters times after one warm-up; the report gives
// the median and the fastest, one line per figure, and "ratio" lines.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <atomic>
#include <functional>
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "dmlserve/v1/dmlserve.grpc.pb.h"
#include "grpcpp/grpcpp.h"

ABSL_FLAG(std::string, target, "127.0.0.1:50051", "server address");
ABSL_FLAG(std::string, mode, "chain", "chain, transfer or roundtrip");
ABSL_FLAG(uint64_t, bytes, uint64_t{64} << 20, "tensor bytes (a multiple of 16 KiB)");
ABSL_FLAG(uint64_t, chunk_bytes, uint64_t{4} << 20, "chunk size of transfers");
ABSL_FLAG(int, iters, 10, "timed repetitions");
ABSL_FLAG(int, clients, 16, "chainload: client threads");
ABSL_FLAG(int, steps, 16, "chainload: operators per chain");
ABSL_FLAG(double, seconds, 10, "chainload: measured seconds (after 1 s of warm-up)");
ABSL_FLAG(std::string, op, "mvn1", "chainload: mvn1 or celu");

namespace {

namespace v1 = dmlserve::v1;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

[[noreturn]] void Die(const std::string& what, const grpc::Status& s) {
  std::fprintf(stderr, "%s failed: %d %s\n", what.c_str(), static_cast<int>(s.error_code()),
               s.error_message().c_str());
  std::exit(1);
}

// Rows of 4096 elements (MVN1 normalises each row).
v1::TensorDesc Desc(uint64_t bytes) {
  v1::TensorDesc d;
  d.set_data_type(v1::DATA_TYPE_FLOAT32);
  const uint64_t n = bytes / 4;
  d.add_sizes(1);
  d.add_sizes(1);
  d.add_sizes(n / 4096);
  d.add_sizes(4096);
  d.set_total_tensor_size_in_bytes(bytes);
  return d;
}

v1::OperatorDesc Celu(const v1::TensorDesc& d) {
  v1::OperatorDesc op;
  *op.mutable_celu()->mutable_input() = d;
  *op.mutable_celu()->mutable_output() = d;
  op.mutable_celu()->set_alpha(1.0f);
  return op;
}
v1::OperatorDesc Mvn1(const v1::TensorDesc& d) {
  v1::OperatorDesc op;
  auto* m = op.mutable_mvn1();
  *m->mutable_input() = d;
  *m->mutable_output() = d;
  m->add_axes(3);
  m->set_normalize_variance(true);
  m->set_epsilon(1e-5f);
  return op;
}
v1::OperatorDesc Threshold(const v1::TensorDesc& d) {
  v1::OperatorDesc op;
  *op.mutable_threshold()->mutable_input() = d;
  *op.mutable_threshold()->mutable_output() = d;
  op.mutable_threshold()->set_min(0.0f);
  return op;
}

std::string Data(uint64_t bytes) {
  std::vector<float> v(bytes / 4);
  uint32_t seed = 1;
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int32_t>(seed)) / 2147483648.0f * 4.0f;
  }
  return std::string(reinterpret_cast<const char*>(v.data()), bytes);
}

struct Timing {
  double median = 0, best = 0;
};
Timing Time(int iters, const std::function<void()>& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    const auto start = Clock::now();
    f();
    t.push_back(Seconds(Clock::now() - start));
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}

void Report(const std::string& name, const Timing& t, uint64_t bytes) {
  std::printf("%-28s median %10.3f ms  best %10.3f ms  %8.2f GB/s (median)\n", name.c_str(),
              t.median * 1e3, t.best * 1e3, bytes / t.median / 1e9);
}

class Bench {
 public:
  explicit Bench(const std::string& target, const std::string& tenant = "") : tenant_(tenant) {
    grpc::ChannelArguments args;
    // Each Bench its own connection (its own peer).
    args.SetInt("grpc.channel_id", next_channel_id_++);
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    auto channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
    dml_ = v1::DmlService::NewStub(channel);
    tensors_ = v1::TensorService::NewStub(channel);
  }

  // Writes `data` as a new tensor (or into `handle`) in chunks.
  std::string Upload(const std::string& data, uint64_t chunk, const std::string& handle = "") {
    grpc::ClientContext ctx;
    Tag(ctx);
    v1::ResidentTensorInfo info;
    auto writer = tensors_->WriteTensor(&ctx, &info);
    v1::WriteTensorRequest first;
    if (handle.empty()) {
      *first.mutable_create()->mutable_desc() = Desc(data.size());
    } else {
      first.set_handle(handle);
    }
    writer->Write(first);
    v1::WriteTensorRequest msg;
    for (uint64_t at = 0; at < data.size(); at += chunk) {
      msg.mutable_chunk()->set_offset(at);
      msg.mutable_chunk()->set_data(data.data() + at, std::min<uint64_t>(chunk, data.size() - at));
      if (!writer->Write(msg)) break;
    }
    writer->WritesDone();
    grpc::Status s = writer->Finish();
    if (!s.ok()) Die("WriteTensor", s);
    return info.handle();
  }

  std::string Download(const std::string& handle, uint64_t length, uint64_t chunk) {
    grpc::ClientContext ctx;
    Tag(ctx);
    v1::ReadTensorRequest r;
    r.set_handle(handle);
    r.set_length(length);
    r.set_chunk_bytes(chunk);
    auto reader = tensors_->ReadTensor(&ctx, r);
    std::string out;
    out.reserve(length);
    v1::TensorChunk c;
    while (reader->Read(&c)) out.append(c.data());
    grpc::Status s = reader->Finish();
    if (!s.ok()) Die("ReadTensor", s);
    return out;
  }

  std::string Execute(v1::ExecuteRequest r) {
    grpc::ClientContext ctx;
    Tag(ctx);
    v1::ExecuteResponse out;
    grpc::Status s = dml_->Execute(&ctx, r, &out);
    if (!s.ok()) Die("Execute", s);
    return out.output_handle().empty() ? std::move(*out.mutable_output()) : out.output_handle();
  }

  v1::ChainResponse Chain(const v1::ChainRequest& r) {
    grpc::ClientContext ctx;
    Tag(ctx);
    v1::ChainResponse out;
    grpc::Status s = dml_->ExecuteChain(&ctx, r, &out);
    if (!s.ok()) Die("ExecuteChain", s);
    return out;
  }

 private:
  void Tag(grpc::ClientContext& ctx) const {
    if (!tenant_.empty()) ctx.AddMetadata("tenant", tenant_);
  }
  static inline std::atomic<int> next_channel_id_{0};
  const std::string tenant_;
  std::unique_ptr<v1::DmlService::Stub> dml_;
  std::unique_ptr<v1::TensorService::Stub> tensors_;
};

int RunChain(Bench& b, uint64_t bytes, uint64_t chunk, int iters) {
  const v1::TensorDesc d = Desc(bytes);
  const std::string x = Data(bytes);
  const std::string in = b.Upload(x, chunk);
  const std::string out = b.Upload(std::string(bytes, '\0'), chunk);
  v1::ChainRequest chain;
  auto* s0 = chain.add_steps();
  *s0->mutable_operator_() = Celu(d);
  s0->mutable_input()->set_handle(in);
  auto* s1 = chain.add_steps();
  *s1->mutable_operator_() = Mvn1(d);
  s1->mutable_input()->set_step(0);
  auto* s2 = chain.add_steps();
  *s2->mutable_operator_() = Threshold(d);
  s2->mutable_input()->set_step(1);
  s2->set_output_handle(out);
  std::string via_chain;
  const Timing chained = Time(iters, [&] { b.Chain(chain); });
  const Timing chained_read = Time(iters, [&] {
    b.Chain(chain);
    via_chain = b.Download(out, bytes, chunk);
  });
  std::string via_inline;
  const Timing inline_trips = Time(iters, [&] {
    v1::ExecuteRequest r;
    *r.mutable_operator_() = Celu(d);
    r.set_input(x);
    std::string y = b.Execute(r);
    *r.mutable_operator_() = Mvn1(d);
    r.set_input(std::move(y));
    y = b.Execute(r);
    *r.mutable_operator_() = Threshold(d);
    r.set_input(std::move(y));
    via_inline = b.Execute(r);
  });
  std::printf("chain of 3 (CELU, MVN1, THRESHOLD) on %llu bytes, %d iterations\n",
              static_cast<unsigned long long>(bytes), iters);
  Report("chain, result resident", chained, bytes);
  Report("chain + ReadTensor", chained_read, bytes);
  Report("3 inline round trips", inline_trips, bytes);
  std::printf("ratio inline/chain %.2f\n", inline_trips.median / chained.median);
  std::printf("ratio inline/(chain+read) %.2f\n", inline_trips.median / chained_read.median);
  std::printf("results identical: %s\n", via_chain == via_inline ? "yes" : "NO");
  return via_chain == via_inline ? 0 : 1;
}

int RunTransfer(Bench& b, uint64_t bytes, uint64_t chunk, int iters) {
  const std::string x = Data(bytes);
  std::string handle = b.Upload(x, chunk);
  const Timing up = Time(iters, [&] { b.Upload(x, chunk, handle); });
  std::string back;
  const Timing down = Time(iters, [&] { back = b.Download(handle, bytes, chunk); });
  std::printf("transfer of %llu bytes in chunks of %llu, %d iterations\n",
              static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(chunk),
              iters);
  Report("WriteTensor", up, bytes);
  Report("ReadTensor", down, bytes);
  const bool echo = back.size() == bytes && back != x;
  std::printf("read back equals written: %s\n", back == x ? "yes" : (echo ? "n/a (echo)" : "NO"));
  return back == x || echo ? 0 : 1;
}

int RunRoundtrip(Bench& b, uint64_t bytes, uint64_t chunk) {
  const std::string x = Data(bytes);
  auto start = Clock::now();
  const std::string in = b.Upload(x, chunk);
  const double t_up = Seconds(Clock::now() - start);
  v1::ExecuteRequest r;
  *r.mutable_operator_() = Celu(Desc(bytes));
  r.set_input_handle(in);
  r.set_keep_output(true);
  start = Clock::now();
  const std::string out = b.Execute(r);
  const double t_run = Seconds(Clock::now() - start);
  start = Clock::now();
  const std::string y = b.Download(out, bytes, chunk);
  const double t_down = Seconds(Clock::now() - start);
  const float* xs = reinterpret_cast<const float*>(x.data());
  const float* ys = reinterpret_cast<const float*>(y.data());
  uint64_t bad = 0;
  double worst = 0;
  for (uint64_t i = 0; i < bytes / 4; ++i) {
    const double want = xs[i] > 0 ? xs[i] : std::expm1(static_cast<double>(xs[i]));
    const double err = std::abs(ys[i] - want);
    worst = std::max(worst, err);
    if (err > 1e-5 * (1 + std::abs(want))) ++bad;
  }
  std::printf("roundtrip of %llu bytes: write %.2f s (%.2f GB/s), CELU %.3f s, read %.2f s "
              "(%.2f GB/s); %llu elements off, worst abs error %.3g\n",
              static_cast<unsigned long long>(bytes), t_up, bytes / t_up / 1e9, t_run, t_down,
              bytes / t_down / 1e9, static_cast<unsigned long long>(bad), worst);
  return bad == 0 && y.size() == bytes ? 0 : 1;
}

int RunChainLoad(const std::string& target, uint64_t bytes, uint64_t chunk) {
  const int clients = std::max(1, absl::GetFlag(FLAGS_clients));
  const int steps = std::max(1, absl::GetFlag(FLAGS_steps));
  const double seconds = absl::GetFlag(FLAGS_seconds);
  const bool mvn = absl::GetFlag(FLAGS_op) == "mvn1";
  const v1::TensorDesc d = Desc(bytes);
  const std::string x = Data(bytes);
  std::atomic<bool> measuring{false}, stop{false};
  std::atomic<uint64_t> chains{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      Bench b(target, absl::StrCat("load-", c));
      const std::string h = b.Upload(x, chunk);
      v1::ChainRequest chain;
      for (int i = 0; i < steps; ++i) {
        auto* s = chain.add_steps();
        *s->mutable_operator_() = mvn ? Mvn1(d) : Celu(d);
        s->set_in_place(!mvn);  // MVN1 has no in-place form
        if (i == 0 || !mvn) {
          s->mutable_input()->set_handle(h);
        } else {
          s->mutable_input()->set_step(i - 1);
        }
      }
      if (mvn) chain.mutable_steps(steps - 1)->set_output_handle(b.Upload(x, chunk));
      while (!stop.load()) {
        b.Chain(chain);
        if (measuring.load()) chains.fetch_add(1);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(1) + std::chrono::milliseconds(200 * clients));
  measuring = true;
  const auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const uint64_t done = chains.load();
  const double elapsed = Seconds(Clock::now() - start);
  stop = true;
  for (std::thread& t : threads) t.join();
  const double per_s = done / elapsed;
  // Device bytes per step: MVN1 reads its input twice and writes once;
  // CELU in place reads and writes once.
  const double step_bytes = (mvn ? 3.0 : 2.0) * bytes;
  std::printf("chainload: %d clients, chains of %d x %s on %llu bytes: %llu chains in %.2f s = "
              "%.1f chains/s, %.1f steps/s, %.1f GB/s of device traffic\n",
              clients, steps, mvn ? "MVN1" : "CELU", static_cast<unsigned long long>(bytes),
              static_cast<unsigned long long>(done), elapsed, per_s, per_s * steps,
              per_s * steps * step_bytes / 1e9);
  return done > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const uint64_t bytes = absl::GetFlag(FLAGS_bytes);
  const uint64_t chunk = absl::GetFlag(FLAGS_chunk_bytes);
  if (bytes == 0 || bytes % (16 << 10) != 0) {
    std::fprintf(stderr, "--bytes must be a positive multiple of 16 KiB\n");
    return 2;
  }
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "chainload") return RunChainLoad(absl::GetFlag(FLAGS_target), bytes, chunk);
  Bench b(absl::GetFlag(FLAGS_target), "bench");  // tensors need an identity
  const int iters = std::max(1, absl::GetFlag(FLAGS_iters));
  if (mode == "chain") return RunChain(b, bytes, chunk, iters);
  if (mode == "transfer") return RunTransfer(b, bytes, chunk, iters);
  if (mode == "roundtrip") return RunRoundtrip(b, bytes, chunk);
  std::fprintf(stderr, "unknown --mode %s\n", mode.c_str());
  return 2;
}
