#include "engine/net/hello_gate.h"

#include <sys/socket.h>

namespace ringlab::net {

HelloGate::Pass::Pass(HelloGate& gate, int fd) : gate_(&gate) {
  std::lock_guard lock(gate.mutex_);
  if (gate.waiting_.size() >= gate.capacity_) {
    // Shutting the socket down (not closing it: its own thread still owns the descriptor)
    // makes that thread's pending read see end-of-file, so it ends as if the peer had left.
    ::shutdown(gate.waiting_.front().fd, SHUT_RDWR);
    gate.cut_.insert(gate.waiting_.front().id);
    ++gate.cut_offs_;
    gate.waiting_.pop_front();
  }
  id_ = gate.next_id_++;
  gate.waiting_.push_back({id_, fd});
}

HelloGate::Pass::~Pass() {
  release();
  std::lock_guard lock(gate_->mutex_);
  gate_->cut_.erase(id_);
}

bool HelloGate::Pass::release() {
  std::lock_guard lock(gate_->mutex_);
  for (auto it = gate_->waiting_.begin(); it != gate_->waiting_.end(); ++it) {
    if (it->id == id_) {
      gate_->waiting_.erase(it);
      return true;
    }
  }
  return !gate_->cut_.count(id_);  // released before, or cut off
}

bool HelloGate::Pass::cut_off() const {
  std::lock_guard lock(gate_->mutex_);
  return gate_->cut_.count(id_) > 0;
}

std::string HelloGate::summary() const {
  std::lock_guard lock(mutex_);
  if (cut_offs_ == 0) return "";
  return std::to_string(cut_offs_) + " connection(s) cut off before their hello: " + std::to_string(capacity_) +
         " newer ones were waiting for theirs";
}

}  // namespace ringlab::net
