#pragma once
// An EventStore that also queues every new event for one reader (the desktop app's frame
// loop), exactly once and in arrival order. The controller's ingest thread appends; the reader
// drains the queue between frames, so it never blocks a worker and never misses an event, even
// when the store forgets old detail.
//
// The store itself keeps at most `retain_limit` events: past that it is cleared and starts
// again. The controller keeps what it needs itself (it folds every event into the run's result
// before handing it on), and the reader's models keep what they draw with bounded memory, so a
// run of any length costs bounded memory.
#include <cstddef>
#include <mutex>
#include <vector>

#include "engine/events/event_store.h"

namespace ringlab::view_model {

class EventFeed : public EventStore {
 public:
  explicit EventFeed(size_t retain_limit = 500'000, size_t max_queued = 2'000'000);

  void emit(Event event) override;
  // Moves up to `max` queued events into `out` (appended); returns how many.
  size_t drain(std::vector<Event>& out, size_t max);
  size_t queued() const;
  void discard_queued();      // forget what the reader has not drained (a new run starts)
  size_t overflowed() const;  // events the reader lost because it fell too far behind
  size_t restarts() const;    // how often the store was cleared to stay within retain_limit

 private:
  size_t retain_limit_;
  size_t max_queued_;
  mutable std::mutex queue_mutex_;
  std::vector<Event> queue_;
  size_t head_ = 0;  // first event not yet drained
  size_t overflowed_ = 0;
  size_t restarts_ = 0;
};

}  // namespace ringlab::view_model
