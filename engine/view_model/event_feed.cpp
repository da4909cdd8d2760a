#include "engine/view_model/event_feed.h"

#include <algorithm>
#include <iterator>

namespace ringlab::view_model {

EventFeed::EventFeed(size_t retain_limit, size_t max_queued)
    : EventStore(std::max<size_t>(retain_limit / 2, 1)),
      retain_limit_(std::max<size_t>(retain_limit, 1)),
      max_queued_(std::max<size_t>(max_queued, 1)) {}

void EventFeed::emit(Event event) {
  bool restart = false;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    if (queue_.size() - head_ >= max_queued_) {
      ++overflowed_;
    } else {
      queue_.push_back(event);
    }
  }
  EventStore::emit(std::move(event));
  if (size() > retain_limit_) {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    ++restarts_;
    restart = true;
  }
  if (restart) clear();
}

size_t EventFeed::drain(std::vector<Event>& out, size_t max) {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  const size_t n = std::min(max, queue_.size() - head_);
  std::move(queue_.begin() + head_, queue_.begin() + head_ + n, std::back_inserter(out));
  head_ += n;
  if (head_ == queue_.size()) {
    queue_.clear();
    head_ = 0;
  } else if (head_ > 65536 && head_ * 2 > queue_.size()) {  // compact once half is consumed
    queue_.erase(queue_.begin(), queue_.begin() + head_);
    head_ = 0;
  }
  return n;
}

size_t EventFeed::queued() const {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return queue_.size() - head_;
}

void EventFeed::discard_queued() {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  queue_.clear();
  head_ = 0;
}

size_t EventFeed::overflowed() const {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return overflowed_;
}

size_t EventFeed::restarts() const {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return restarts_;
}

}  // namespace ringlab::view_model
