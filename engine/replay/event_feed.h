#pragma once
// An EventStore that also queues every new event for one reader (the desktop app's frame
// loop), exactly once and in arrival order. The controller's ingest thread appends; the reader
// drains the queue between frames, so it never blocks a worker and never misses an event, even
// when the store forgets old detail. `retain = false` keeps nothing in the store itself: the
// app's models hold what they draw, with bounded memory, however long the run.
#include <cstddef>
#include <mutex>
#include <vector>

#include "engine/runtime/event_store.h"

namespace ringlab::replay {

class EventFeed : public EventStore {
 public:
  explicit EventFeed(bool retain, size_t max_detail_events = 200'000, size_t max_queued = 2'000'000);

  void emit(Event event) override;
  // Moves up to `max` queued events into `out` (appended); returns how many.
  size_t drain(std::vector<Event>& out, size_t max);
  size_t queued() const;
  void discard_queued();  // forget what the reader has not drained (a new run starts)
  size_t overflowed() const;  // events dropped because the reader fell too far behind

 private:
  bool retain_;
  size_t max_queued_;
  mutable std::mutex queue_mutex_;
  std::vector<Event> queue_;
  size_t head_ = 0;  // first event not yet drained
  size_t overflowed_ = 0;
};

}  // namespace ringlab::replay
