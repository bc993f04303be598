#include "engine/d3d12/chain_ticket.h"

namespace dmls::d3d12 {

void ChainTicket::Place::Reach() {
  std::optional<Chain> chain;
  {
    MutexLock lock(&mu_);
    if (state_ == State::kDone) return;  // dropped before the worker came
    if (!chain_) {
      state_ = State::kReached;
      while (state_ != State::kDone) cv_.Wait(&mu_);
      return;
    }
    chain = std::exchange(chain_, std::nullopt);
    state_ = State::kDone;
  }
  record_(std::move(chain->request), std::move(chain->done));
}

ChainTicket::~ChainTicket() {
  if (run_) return;
  {
    MutexLock lock(&place_->mu_);
    place_->state_ = Place::State::kDone;
  }
  place_->cv_.SignalAll();
}

void ChainTicket::Run(ChainRequest request, ChainCallback done) {
  run_ = true;
  {
    MutexLock lock(&place_->mu_);
    if (place_->state_ != Place::State::kReached) {
      place_->chain_ = Place::Chain{std::move(request), std::move(done)};
      return;
    }
  }
  // The worker waits at the place: record on this thread, then let it go.
  place_->record_(std::move(request), std::move(done));
  {
    MutexLock lock(&place_->mu_);
    place_->state_ = Place::State::kDone;
  }
  place_->cv_.SignalAll();
}

}  // namespace dmls::d3d12
