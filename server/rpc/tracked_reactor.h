// The gRPC side of CallTracker (call_tracker.h): the status and reactor of
// a refused call, and a unary reactor for handlers that answer inline,
// which keeps its call tracked until gRPC is done with it (OnDone).
// A handler does:
//
//   CallTracker::Ticket ticket = tracker.Begin();
//   if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
//
// Ownership: both reactors delete themselves in OnDone, which runs inline
// (inline_reactions.h). The tracker must
// outlive a TrackedUnaryReactor.
#ifndef DMLSERVE_SERVER_RPC_TRACKED_REACTOR_H_
#define DMLSERVE_SERVER_RPC_TRACKED_REACTOR_H_

#include <utility>

#include "grpcpp/support/server_callback.h"
#include "grpcpp/support/status.h"
#include "server/lifecycle/call_tracker.h"
#include "server/rpc/inline_reactions.h"

namespace dmls::server {

// UNAVAILABLE, kShuttingDownMessage: what a call gets once the server's
// stop has begun (clients may retry it on another server).
inline grpc::Status ShuttingDownStatus() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, kShuttingDownMessage);
}

// A reactor of any kind (ServerUnaryReactor, ServerBidiReactor<...>, ...)
// that only answers ShuttingDownStatus: what a handler returns when
// CallTracker::Begin refused its call.
template <typename Reactor>
class RefusedReactor final : public InlineReactions<Reactor> {
 public:
  RefusedReactor() { this->Finish(ShuttingDownStatus()); }
  void OnDone() override { delete this; }
};

// For handlers that answer inline (GetCapabilities, Validate, ...): holds
// the call's Ticket until gRPC is done with the call.
class TrackedUnaryReactor final : public InlineReactions<grpc::ServerUnaryReactor> {
 public:
  explicit TrackedUnaryReactor(CallTracker::Ticket ticket) : ticket_(std::move(ticket)) {}
  void OnDone() override { delete this; }

 private:
  CallTracker::Ticket ticket_;
};

// A unary call answered inline: `answer()` (a grpc::Status) finishes a
// TrackedUnaryReactor; a call that `calls` refuses gets a RefusedReactor
// and `answer` is not called.
template <typename Answer>
grpc::ServerUnaryReactor* AnswerInline(CallTracker& calls, Answer answer) {
  CallTracker::Ticket ticket = calls.Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  auto* reactor = new TrackedUnaryReactor(std::move(ticket));
  reactor->Finish(answer());
  return reactor;
}

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_TRACKED_REACTOR_H_
