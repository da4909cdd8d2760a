#include "engine/runtime/event_store.h"

#include <algorithm>

namespace ringlab {
namespace {

// Detail events are the many small ones a ring produces: one per chunk per ring step, one per
// gate wait. Everything else (steps, losses, collectives, shards, errors) is kept for the whole run.
bool is_detail(const Event& e) {
  return e.kind == EventKind::ChunkTransfer || e.kind == EventKind::GateWait;
}

}  // namespace

EventStore::EventStore(size_t max_detail_events) : max_detail_events_(max_detail_events) {}

void EventStore::emit(Event event) {
  std::lock_guard lock(mutex_);
  if (is_detail(event)) ++detail_events_;
  events_.push_back(std::move(event));
  ++version_;
  if (detail_events_ > max_detail_events_) downsample_locked();
}

// Drops the older half of the detail events in one pass, keeping the order of everything else.
// Halving (rather than dropping one event per append) makes the cost O(1) per event on average.
void EventStore::downsample_locked() {
  const size_t drop = detail_events_ - detail_events_ / 2;
  size_t dropped = 0;
  auto keep_end = std::remove_if(events_.begin(), events_.end(), [&](const Event& e) {
    if (dropped < drop && is_detail(e)) {
      ++dropped;
      return true;
    }
    return false;
  });
  events_.erase(keep_end, events_.end());
  detail_events_ -= dropped;
  dropped_detail_ += dropped;
  ++version_;
  ++generation_;
}

void EventStore::clear() {
  std::lock_guard lock(mutex_);
  events_.clear();
  detail_events_ = 0;
  dropped_detail_ = 0;
  ++version_;
  ++generation_;
}

uint64_t EventStore::version() const {
  std::lock_guard lock(mutex_);
  return version_;
}

uint64_t EventStore::generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

size_t EventStore::size() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

size_t EventStore::detail_events() const {
  std::lock_guard lock(mutex_);
  return detail_events_;
}

size_t EventStore::dropped_detail() const {
  std::lock_guard lock(mutex_);
  return dropped_detail_;
}

size_t EventStore::for_each(size_t from, const std::function<void(const Event&)>& fn) const {
  std::lock_guard lock(mutex_);
  for (size_t i = from; i < events_.size(); ++i) fn(events_[i]);
  return std::max(from, events_.size());
}

std::vector<Event> EventStore::snapshot() const {
  std::lock_guard lock(mutex_);
  return events_;
}

}  // namespace ringlab
