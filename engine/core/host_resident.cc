#include "engine/core/host_resident.h"

#include <algorithm>
#include <new>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace dmls {
namespace {

uint64_t Bytes(const std::optional<TensorDesc>& t) {
  return t ? t->total_tensor_size_in_bytes : 0;
}

// The state of one chain between steps. Owned by the callback chain.
struct HostChain {
  Engine* engine = nullptr;  // owns the chain's HostResidentBuffers
  ExecuteFn execute;
  ChainRequest request;
  ChainCallback done;
  std::vector<std::string> outputs;  // each step's output range, until its last use
  std::vector<size_t> last_use;      // the last step that reads a step's output
  ChainResult result;
};

absl::StatusOr<std::string> SourceBytes(HostChain& chain, ChainSource& source) {
  switch (source.kind) {
    case ChainSource::Kind::kNone:
      return std::string();
    case ChainSource::Kind::kInline:
      return std::move(source.bytes);
    case ChainSource::Kind::kResident: {
      auto* host = dynamic_cast<HostResidentBuffer*>(source.resident.get());
      if (host == nullptr || host->engine() != chain.engine) {
        return absl::InternalError("a resident tensor of another engine reached this one");
      }
      return host->Read(0, host->size());
    }
    case ChainSource::Kind::kStep: {
      return chain.outputs[source.step];
    }
  }
  return absl::InternalError("unknown chain source");
}

void RunStep(std::shared_ptr<HostChain> chain, size_t i);

void FinishStep(std::shared_ptr<HostChain> chain, size_t i, std::string output) {
  ChainStep& step = chain->request.steps[i];
  auto write_to = [&](ResidentBuffer* target) -> absl::Status {
    auto* host = dynamic_cast<HostResidentBuffer*>(target);
    if (host == nullptr || host->engine() != chain->engine) {
      return absl::InternalError("a resident tensor of another engine reached this one");
    }
    const uint64_t n = std::min<uint64_t>(output.size(), host->size());
    return host->Write(0, absl::string_view(output).substr(0, n));
  };
  absl::Status s;
  if (step.in_place && step.input.kind == ChainSource::Kind::kResident) {
    s = write_to(step.input.resident.get());
  }
  if (s.ok() && step.output) s = write_to(step.output.get());
  if (!s.ok()) return chain->done(s);
  for (const ChainSource* src : {&step.input, &step.scale, &step.bias}) {
    if (src->kind == ChainSource::Kind::kStep && chain->last_use[src->step] == i) {
      std::string().swap(chain->outputs[src->step]);  // its last reader is done
    }
  }
  if (step.return_output) chain->result.outputs[i] = output;
  if (chain->last_use[i] > i) chain->outputs[i] = std::move(output);
  RunStep(std::move(chain), i + 1);
}

void RunStep(std::shared_ptr<HostChain> chain, size_t i) {
  if (i == chain->request.steps.size()) {
    return chain->done(std::move(chain->result));
  }
  ChainStep& step = chain->request.steps[i];
  ExecuteRequest r;
  r.op = step.op;
  r.feature_level = chain->request.feature_level;
  r.in_place = step.in_place;
  r.deadline = chain->request.deadline;
  r.cancelled = chain->request.cancelled;
  for (auto [source, payload] : {std::pair{&step.input, &r.input},
                                 std::pair{&step.scale, &r.scale},
                                 std::pair{&step.bias, &r.bias}}) {
    absl::StatusOr<std::string> bytes = SourceBytes(*chain, *source);
    if (!bytes.ok()) return chain->done(bytes.status());
    *payload = std::move(*bytes);
  }
  // A step's inputs were checked against its descriptor; a copy that came
  // out short is our fault.
  if (r.input.size() != Bytes(r.op.input) || r.scale.size() != Bytes(r.op.scale) ||
      r.bias.size() != Bytes(r.op.bias)) {
    return chain->done(absl::InternalError(
        absl::StrCat("chain step ", i, ": input bytes do not match the descriptor")));
  }
  ExecuteFn& execute = chain->execute;
  execute(std::move(r), [chain = std::move(chain),
                         i](absl::StatusOr<ExecuteResult> result) mutable {
    if (!result.ok()) return chain->done(result.status());
    FinishStep(std::move(chain), i, std::move(result->output));
  });
}

}  // namespace

absl::Status CheckResidentRange(uint64_t size, uint64_t offset, uint64_t length) {
  if (offset > size || length > size - offset) {
    return absl::OutOfRangeError(absl::StrCat("bytes [", offset, ", +", length,
                                              ") are outside the tensor's ", size));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<HostResidentBuffer>> HostResidentBuffer::Create(
    Engine* engine, uint64_t size, std::string device) {
  std::shared_ptr<HostResidentBuffer> b(
      new HostResidentBuffer(engine, size, std::move(device)));
  try {
    MutexLock lock(&b->mu_);
    b->bytes_.assign(size, '\0');
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("no host memory for a resident tensor of ", size, " bytes"));
  }
  return b;
}

absl::Status HostResidentBuffer::Write(uint64_t offset, absl::string_view bytes) {
  if (absl::Status s = CheckResidentRange(size(), offset, bytes.size()); !s.ok()) {
    return s;
  }
  MutexLock lock(&mu_);
  std::copy(bytes.begin(), bytes.end(), bytes_.begin() + offset);
  return absl::OkStatus();
}

absl::StatusOr<std::string> HostResidentBuffer::Read(uint64_t offset,
                                                     uint64_t length) const {
  if (absl::Status s = CheckResidentRange(size(), offset, length); !s.ok()) {
    return s;
  }
  MutexLock lock(&mu_);
  return bytes_.substr(offset, length);
}

absl::Status HostResidentBuffer::ReadInto(uint64_t offset, absl::Span<char> into) const {
  if (absl::Status s = CheckResidentRange(size(), offset, into.size()); !s.ok()) return s;
  MutexLock lock(&mu_);
  bytes_.copy(into.data(), into.size(), offset);
  return absl::OkStatus();
}

void RunChainOnHost(Engine* owner, ExecuteFn execute, ChainRequest request,
                    ChainCallback done) {
  auto chain = std::make_shared<HostChain>();
  chain->engine = owner;
  chain->execute = std::move(execute);
  const size_t n = request.steps.size();
  chain->outputs.resize(n);
  chain->result.outputs.resize(n);
  chain->last_use.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const ChainStep& s = request.steps[i];
    for (const ChainSource* src : {&s.input, &s.scale, &s.bias}) {
      if (src->kind == ChainSource::Kind::kStep && src->step < i) {
        chain->last_use[src->step] = i;
      }
    }
  }
  chain->request = std::move(request);
  chain->done = std::move(done);
  RunStep(std::move(chain), 0);
}

uint64_t StepOutputBytes(const ChainStep& step) {
  uint64_t out = Bytes(step.op.output);
  if (step.in_place) out = std::max(out, Bytes(step.op.input));
  return out;
}

}  // namespace dmls
