#include "engine/dist/hello_gate.h"

#include <sys/socket.h>

namespace ringlab::net {

HelloGate::Pass::Pass(HelloGate& gate, int fd) : gate_(&gate) {
  std::lock_guard lock(gate.mutex_);
  if (gate.waiting_.size() >= gate.capacity_) {
    // Shutting the socket down (not closing it: its own thread still owns the descriptor)
    // makes that thread's pending read see end-of-file, so it ends as if the peer had left.
    ::shutdown(gate.waiting_.front().fd, SHUT_RDWR);
    gate.waiting_.pop_front();
  }
  id_ = gate.next_id_++;
  gate.waiting_.push_back({id_, fd});
}

bool HelloGate::Pass::cut_off() const {
  if (!gate_) return false;
  std::lock_guard lock(gate_->mutex_);
  for (const Waiting& w : gate_->waiting_)
    if (w.id == id_) return false;
  return true;
}

std::string HelloGate::Pass::cut_off_reason() const {
  return "cut off before its hello: " + std::to_string(gate_ ? gate_->capacity_ : 0) +
         " newer connections were waiting for theirs";
}

void HelloGate::Pass::release() {
  if (!gate_) return;
  std::lock_guard lock(gate_->mutex_);
  // Not found when a newer connection has cut this one off already.
  for (auto it = gate_->waiting_.begin(); it != gate_->waiting_.end(); ++it) {
    if (it->id == id_) {
      gate_->waiting_.erase(it);
      break;
    }
  }
  gate_ = nullptr;
}

}  // namespace ringlab::net
