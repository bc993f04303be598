// RefCountedReactor: the lifetime every reactor of the server shares. A
// reactor lives until gRPC is done with its call (OnDone) and every engine
// callback it started has arrived, because the engine may call back after
// the client cancelled and the RPC is gone; and it finishes its call once,
// whoever comes first (the outcome, a cancellation, a failed write, a stop).
//
//   class MyReactor final : public RefCountedReactor<grpc::ServerUnaryReactor> {
//     ...  Ref() before handing `this` to the engine, Unref() in its callback;
//     void OnDone() override { Unref(); }   // gRPC's reference
//     if (MarkFinished()) Finish(status);    // only the first caller finishes
//   };
//
// Ownership: the reactor deletes itself when the last reference goes; it
// starts with `refs` of them (gRPC's, plus any its constructor hands out).
// Thread-safety: Ref, Unref and MarkFinished may be called from any thread
// (atomics); a reactor whose state needs a lock keeps its own mutex and may
// call them with it held, except the Unref that deletes it.
#ifndef DMLSERVE_SERVER_RPC_REF_COUNTED_REACTOR_H_
#define DMLSERVE_SERVER_RPC_REF_COUNTED_REACTOR_H_

#include <atomic>

namespace dmls::server {

// `Base`: a gRPC callback reactor (ServerUnaryReactor, ServerBidiReactor<...>,
// ServerReadReactor<...>, ServerWriteReactor<...>).
template <typename Base>
class RefCountedReactor : public Base {
 public:
  RefCountedReactor(const RefCountedReactor&) = delete;
  RefCountedReactor& operator=(const RefCountedReactor&) = delete;

 protected:
  explicit RefCountedReactor(int refs = 1) : refs_(refs) {}
  virtual ~RefCountedReactor() = default;

  // One more holder (an engine callback, a stop that is due).
  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Drops one; the last deletes the reactor.
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  // True for the first caller only, which then calls Finish (once).
  bool MarkFinished() { return !finished_.exchange(true, std::memory_order_acq_rel); }
  bool finished() const { return finished_.load(std::memory_order_acquire); }

 private:
  std::atomic<int> refs_;
  std::atomic<bool> finished_{false};
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_REF_COUNTED_REACTOR_H_
