#include "engine/d3d12/chain_ticket.h"

namespace dmls::d3d12 {

std::optional<ChainTicket::Chain> ChainTicket::Place::Wait() {
  MutexLock lock(&mu_);
  while (state_ == State::kWaiting) cv_.Wait(&mu_);
  return std::exchange(chain_, std::nullopt);
}

ChainTicket::~ChainTicket() {
  {
    MutexLock lock(&place_->mu_);
    if (place_->state_ != Place::State::kWaiting) return;
    place_->state_ = Place::State::kDropped;
  }
  place_->cv_.SignalAll();
}

void ChainTicket::Run(ChainRequest request, ChainCallback done) {
  {
    MutexLock lock(&place_->mu_);
    place_->chain_ = Chain{std::move(request), std::move(done)};
    place_->state_ = Place::State::kRun;
  }
  place_->cv_.SignalAll();
}

}  // namespace dmls::d3d12
