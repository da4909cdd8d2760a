#include "engine/events/event_store.h"

#include <algorithm>

namespace ringlab {
namespace {

// 8192 events of ~180 bytes: about 1.4 MiB per chunk.
constexpr size_t kChunkEvents = 8192;

// Detail events are the many small ones a ring produces: one per chunk per ring step, one per
// gate wait. Everything else (steps, losses, collectives, shards, errors) is kept for the whole run.
bool is_detail(const Event& e) {
  return e.kind == EventKind::ChunkTransfer || e.kind == EventKind::GateWait;
}

}  // namespace

EventStore::EventStore(size_t max_detail_events) : max_detail_events_(max_detail_events) {}

Event& EventStore::at_locked(size_t index) { return chunks_[index / kChunkEvents][index % kChunkEvents]; }

const Event& EventStore::at_locked(size_t index) const {
  return chunks_[index / kChunkEvents][index % kChunkEvents];
}

void EventStore::emit(Event event) {
  std::lock_guard lock(mutex_);
  if (is_detail(event)) ++detail_events_;
  if (size_ % kChunkEvents == 0 && size_ / kChunkEvents == chunks_.size()) {
    chunks_.emplace_back();
    chunks_.back().reserve(kChunkEvents);
  }
  chunks_[size_ / kChunkEvents].push_back(std::move(event));
  ++size_;
  ++version_;
  if (detail_events_ > max_detail_events_) downsample_locked();
}

// Drops the older half of the detail events in one pass, keeping the order of everything else.
// Halving (rather than dropping one event per append) makes the cost O(1) per event on average.
void EventStore::downsample_locked() {
  const size_t drop = detail_events_ - detail_events_ / 2;
  size_t dropped = 0;
  size_t kept = 0;
  for (size_t i = 0; i < size_; ++i) {
    Event& e = at_locked(i);
    if (dropped < drop && is_detail(e)) {
      ++dropped;
      continue;
    }
    if (kept != i) at_locked(kept) = std::move(e);
    ++kept;
  }
  truncate_locked(kept);
  detail_events_ -= dropped;
  dropped_detail_ += dropped;
  ++version_;
  ++generation_;
}

void EventStore::truncate_locked(size_t size) {
  const size_t chunks = (size + kChunkEvents - 1) / kChunkEvents;
  chunks_.resize(chunks);
  if (size % kChunkEvents != 0) chunks_.back().resize(size % kChunkEvents);
  size_ = size;
}

void EventStore::clear() {
  std::lock_guard lock(mutex_);
  chunks_.clear();
  size_ = 0;
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
  return size_;
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
  for (size_t i = from; i < size_; ++i) fn(at_locked(i));
  return std::max(from, size_);
}

std::vector<Event> EventStore::snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<Event> all;
  all.reserve(size_);
  for (const auto& chunk : chunks_) all.insert(all.end(), chunk.begin(), chunk.end());
  return all;
}

}  // namespace ringlab
