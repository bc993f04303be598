#include "engine/core/engine.h"

#include <memory>
#include <string>
#include <utility>

#include "engine/core/host_resident.h"

namespace dmls {
absl::StatusOr<std::shared_ptr<ResidentBuffer>> Engine::AllocateResident(
    uint64_t bytes, absl::string_view /*placement_key*/) {
  absl::StatusOr<std::shared_ptr<HostResidentBuffer>> b =
      HostResidentBuffer::Create(this, bytes, device_info().name);
  if (!b.ok()) return b.status();
  return std::shared_ptr<ResidentBuffer>(std::move(*b));
}

namespace {

HostResidentBuffer* HostBufferOf(Engine* engine, ResidentBuffer* buffer) {
  auto* host = dynamic_cast<HostResidentBuffer*>(buffer);
  return host != nullptr && host->engine() == engine ? host : nullptr;
}

}  // namespace

void Engine::WriteResident(std::shared_ptr<ResidentBuffer> buffer,
                           uint64_t offset, std::string bytes,
                           StatusCallback done) {
  HostResidentBuffer* host = HostBufferOf(this, buffer.get());
  if (host == nullptr) {
    return done(absl::InternalError("a resident tensor of another engine reached this one"));
  }
  done(host->Write(offset, bytes));
}

void Engine::ReadResident(std::shared_ptr<ResidentBuffer> buffer,
                          uint64_t offset, uint64_t length,
                          BytesCallback done) {
  if (buffer == nullptr) return done(absl::InternalError("no resident buffer to read"));
  // Checked before the string is made, so that a bad range allocates
  // nothing (ReadResidentInto checks it again for its other callers).
  if (absl::Status s = CheckResidentRange(buffer->size(), offset, length); !s.ok()) {
    return done(s);
  }
  auto out = std::make_unique<std::string>(length, '\0');
  const absl::Span<char> into(out->data(), out->size());
  ReadResidentInto(std::move(buffer), offset, into,
                   [out = std::move(out), done = std::move(done)](absl::Status s) mutable {
                     if (!s.ok()) return done(s);
                     done(std::move(*out));
                   });
}

void Engine::ReadResidentInto(std::shared_ptr<ResidentBuffer> buffer,
                              uint64_t offset, absl::Span<char> into,
                              StatusCallback done) {
  HostResidentBuffer* host = HostBufferOf(this, buffer.get());
  if (host == nullptr) {
    return done(absl::InternalError("a resident tensor of another engine reached this one"));
  }
  done(host->ReadInto(offset, into));
}

void Engine::ExecuteChain(ChainRequest request, ChainCallback done) {
  RunChainOnHost(
      this,
      [this](ExecuteRequest step, ExecuteCallback step_done) {
        Execute(std::move(step), std::move(step_done));
      },
      std::move(request), std::move(done));
}

}  // namespace dmls
