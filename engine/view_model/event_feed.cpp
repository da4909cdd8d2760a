#include "engine/view_model/event_feed.h"

#include <algorithm>
#include <iterator>

namespace ringlab::view_model {

EventFeed::EventFeed(size_t max_queued) : max_queued_(std::max<size_t>(max_queued, 1)) {}

void EventFeed::emit(Event event) {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  if (queue_.size() - head_ >= max_queued_) {
    ++overflowed_;
    return;
  }
  queue_.push_back(std::move(event));
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
  overflowed_ = 0;  // what the last run lost is not the next one's
}

size_t EventFeed::overflowed() const {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return overflowed_;
}

}  // namespace ringlab::view_model
