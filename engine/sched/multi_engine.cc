#include "engine/sched/multi_engine.h"

#include <limits>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "engine/sched/admission.h"
#include "spdlog/spdlog.h"

namespace dmls::sched {

// One request across its attempts. Shared by the child's `done` and the
// on_device_lost hook, which the child calls on one thread, hook first
// (engine.h), so `returned` needs no lock.
struct MultiEngine::Call {
  ExecuteCallback done;
  int attempts = 0;         // runs started
  std::vector<bool> tried;  // per child
  std::unique_ptr<ExecuteRequest> returned;  // handed back by a lost child
};

MultiEngine::MultiEngine(std::vector<std::unique_ptr<Engine>> children,
                         MultiEngineOptions options)
    : options_(std::move(options)),
      log_(options_.logger ? options_.logger : spdlog::default_logger()) {
  for (size_t i = 0; i < children.size(); ++i) {
    auto c = std::make_unique<Child>();
    c->engine = std::move(children[i]);
    c->label = i < options_.labels.size() ? options_.labels[i]
                                          : absl::StrCat("engine", i);
    children_.push_back(std::move(c));
  }
}

MultiEngine::~MultiEngine() { Shutdown(); }

DeviceInfo MultiEngine::device_info() const {
  const std::vector<DeviceInfo> all = devices();
  if (all.empty()) return DeviceInfo{};
  DeviceInfo summary = all.front();
  bool same = true;
  std::string names;
  summary.memory_bytes = 0;
  summary.memory_cap_bytes = 0;
  for (const DeviceInfo& d : all) {
    same &= d.name == all.front().name;
    absl::StrAppend(&names, names.empty() ? "" : " + ", d.name);
    summary.memory_bytes += d.memory_bytes;
    summary.memory_cap_bytes += d.memory_cap_bytes;
  }
  summary.name =
      same ? absl::StrCat(all.size(), " x ", all.front().name) : names;
  return summary;
}

std::vector<DeviceInfo> MultiEngine::devices() const {
  std::vector<DeviceInfo> all;
  for (const auto& c : children_) {
    for (DeviceInfo& d : c->engine->devices()) all.push_back(std::move(d));
  }
  return all;
}

bool MultiEngine::Healthy() const {
  for (const auto& c : children_) {
    if (c->engine->Healthy()) return true;
  }
  return false;
}

void MultiEngine::Execute(ExecuteRequest request, ExecuteCallback done) {
  auto call = std::make_shared<Call>();
  call->done = std::move(done);
  call->tried.resize(children_.size());
  routed_.fetch_add(1);
  Route(std::move(call), std::move(request),
        absl::UnavailableError("every device of the server is lost"));
}

int MultiEngine::Pick(const std::vector<bool>& tried) {
  const size_t n = children_.size();
  if (n == 0) return -1;
  const size_t start = next_.fetch_add(1) % n;
  int best = -1;
  uint64_t best_load = std::numeric_limits<uint64_t>::max();
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (start + k) % n;
    if (tried[i]) continue;
    Child& c = *children_[i];
    if (!c.engine->Healthy()) {
      ReportDead(c);
      continue;
    }
    // Strictly less: among equals the first from `start` wins, and `start`
    // turns round.
    const uint64_t load = c.outstanding.load();
    if (load < best_load) {
      best = static_cast<int>(i);
      best_load = load;
    }
  }
  return best;
}

void MultiEngine::Route(std::shared_ptr<Call> call, ExecuteRequest request,
                        absl::Status failure) {
  const int i = Pick(call->tried);
  if (i < 0) {
    if (call->attempts > 0) retry_unavailable_.fetch_add(1);
    call->done(std::move(failure));
    return;
  }
  Child& child = *children_[i];
  call->tried[i] = true;
  ++call->attempts;
  const uint64_t cost = RequestBytes(request) + options_.request_cost_bytes;
  child.outstanding.fetch_add(cost);
  child.routed.fetch_add(1);
  if (call->attempts < options_.max_attempts) {
    request.on_device_lost = [call](ExecuteRequest returned) {
      call->returned = std::make_unique<ExecuteRequest>(std::move(returned));
    };
  } else {
    request.on_device_lost = nullptr;
  }
  child.engine->Execute(
      std::move(request),
      [this, &child, cost, call](absl::StatusOr<ExecuteResult> result) mutable {
        child.outstanding.fetch_sub(cost);
        if (!result.ok() && IsDeviceLost(result.status())) {
          if (!child.engine->Healthy()) ReportDead(child);
          if (call->returned) {
            std::unique_ptr<ExecuteRequest> again = std::move(call->returned);
            retried_.fetch_add(1);
            Route(std::move(call), std::move(*again), result.status());
            return;
          }
        }
        call->done(std::move(result));
      });
}

void MultiEngine::ReportDead(Child& child) {
  if (child.reported_dead.exchange(true)) return;
  engines_lost_.fetch_add(1);
  size_t live = 0;
  for (const auto& c : children_) live += c->engine->Healthy() ? 1 : 0;
  log_->error("engine {} ({}) is lost; {} of {} engines left", child.label,
              child.engine->device_info().name, live, children_.size());
}

void MultiEngine::Shutdown() {
  for (const auto& c : children_) c->engine->Shutdown();
}

std::vector<std::pair<std::string, uint64_t>> MultiEngine::Counters() const {
  std::vector<std::pair<std::string, uint64_t>> out = {
      {"routed", routed_.load()},
      {"retried", retried_.load()},
      {"retry_unavailable", retry_unavailable_.load()},
      {"engines_lost", engines_lost_.load()}};
  for (const auto& c : children_) {
    out.emplace_back(absl::StrCat(c->label, ".routed"), c->routed.load());
    for (auto& [name, value] : c->engine->Counters()) {
      out.emplace_back(absl::StrCat(c->label, ".", name), value);
    }
  }
  return out;
}

absl::StatusOr<std::shared_ptr<ResidentBuffer>> MultiEngine::AllocateResident(
    uint64_t bytes, absl::string_view placement_key) {
  const size_t n = children_.size();
  if (n == 0) return absl::UnavailableError("no engine to keep a resident tensor on");
  const size_t start = absl::HashOf(placement_key) % n;
  for (size_t i = 0; i < n; ++i) {
    Child& c = *children_[(start + i) % n];
    if (c.engine->Healthy()) return c.engine->AllocateResident(bytes, placement_key);
  }
  return absl::UnavailableError("every device is lost");
}

namespace {

// The child that made `buffer`, or null (a buffer of no child of ours).
Engine* OwnerOf(const ResidentBuffer* buffer, Engine* self) {
  Engine* e = buffer ? buffer->engine() : nullptr;
  return e == self ? nullptr : e;
}

}  // namespace

void MultiEngine::WriteResident(std::shared_ptr<ResidentBuffer> buffer,
                                uint64_t offset, std::string bytes,
                                StatusCallback done) {
  Engine* owner = OwnerOf(buffer.get(), this);
  if (owner == nullptr) return done(absl::InternalError("a resident buffer of no device"));
  owner->WriteResident(std::move(buffer), offset, std::move(bytes), std::move(done));
}

void MultiEngine::ReadResidentInto(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                                   absl::Span<char> into, StatusCallback done) {
  Engine* owner = OwnerOf(buffer.get(), this);
  if (owner == nullptr) return done(absl::InternalError("a resident buffer of no device"));
  owner->ReadResidentInto(std::move(buffer), offset, into, std::move(done));
}

void MultiEngine::ExecuteChain(ChainRequest request, ChainCallback done) {
  Engine* owner = nullptr;
  for (const ChainStep& step : request.steps) {
    for (const ResidentBuffer* b : {step.input.resident.get(), step.scale.resident.get(),
                                    step.bias.resident.get(), step.output.get()}) {
      if (b == nullptr) continue;
      if (owner != nullptr && b->engine() != owner) {
        return done(absl::FailedPreconditionError(
            "the chain's resident tensors live on different devices"));
      }
      owner = b->engine();
    }
  }
  if (owner == nullptr) {
    const int i = Pick(std::vector<bool>(children_.size(), false));
    if (i < 0) return done(absl::UnavailableError("every device is lost"));
    owner = children_[i]->engine.get();
  }
  owner->ExecuteChain(std::move(request), std::move(done));
}

}  // namespace dmls::sched
