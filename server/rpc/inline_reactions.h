// InlineReactions<Base>: a gRPC server reactor (Base: grpc::ServerUnaryReactor,
// grpc::ServerBidiReactor<...>, ...) whose reactions gRPC runs on the
// thread that gets there -- a poller, or ours inside Finish -- instead of
// handing each to its executor. That hand-off is one thread hop per call
// (a futex wake and a context switch on a busy server) which a bare
// server's DefaultReactor does not pay: at 1 KiB it was about a fifth of
// the CPU engine's server samples.
//
// Only for reactors whose reactions are short, never block, and take no
// lock that a caller of Finish may hold, because they may now run inside
// that Finish: the unary Execute, ModelInfer, inline and refused reactors
// qualify (OnCancel sets a flag and finishes; OnDone ends a ticket and
// drops a reference). The stream reactors, whose reactions lock and start
// reads and writes, stay on the executor.
//
// InternalInlineable is gRPC's own switch (grpcpp/support/server_callback.h)
// and not part of its API; ServiceTest.CancellationsRacingAnswersEndEveryCallOnce
// covers the races it opens.
#ifndef DMLSERVE_SERVER_RPC_INLINE_REACTIONS_H_
#define DMLSERVE_SERVER_RPC_INLINE_REACTIONS_H_

namespace dmls::server {

template <typename Base>
class InlineReactions : public Base {
 public:
  bool InternalInlineable() override { return true; }
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_INLINE_REACTIONS_H_
