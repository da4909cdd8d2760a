#pragma once
// A run's events as the workers reported them, in arrival order, safe to append from the
// controller's ingest threads while views and exporters read (the app's feed, `ringlab run
// --trace`).
// Memory is bounded: detail events (ChunkTransfer, GateWait) are capped at `max_detail_events`;
// past the cap the older half of them is dropped at once (every other kind stays, so the
// collectives' CollectiveBegin/End remain), so a long run keeps its whole loss curve and the
// recent collectives in full detail.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "engine/events/event.h"

namespace ringlab {

class EventStore : public EventSink {
 public:
  explicit EventStore(size_t max_detail_events = 2'000'000);

  void emit(Event event) override;  // append (thread-safe)
  void clear();

  // A monotonically increasing counter bumped on every append or clear; views use it to
  // notice new data without copying.
  uint64_t version() const;
  // Bumped whenever stored events move to other indices (clear, down-sampling): a view that
  // reads incrementally with for_each(from) starts again from 0 when this changes.
  uint64_t generation() const;
  size_t size() const;
  size_t detail_events() const;   // detail events held now
  size_t dropped_detail() const;  // detail events discarded by down-sampling

  // Calls fn(event) for each stored event with index >= from, under the lock; returns the index
  // one past the last event visited. Keep fn short: the ingest thread waits meanwhile.
  size_t for_each(size_t from, const std::function<void(const Event&)>& fn) const;
  std::vector<Event> snapshot() const;  // a copy of everything

 private:
  void downsample_locked();
  Event& at_locked(size_t index);
  const Event& at_locked(size_t index) const;
  void truncate_locked(size_t size);

  mutable std::mutex mutex_;
  // Events in fixed-size chunks rather than one vector: appending never moves what is already
  // stored (a growing vector of millions of events would copy them all at every doubling).
  std::vector<std::vector<Event>> chunks_;
  size_t size_ = 0;
  size_t max_detail_events_;
  size_t detail_events_ = 0;
  size_t dropped_detail_ = 0;
  uint64_t version_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace ringlab
