#pragma once
// The events of a run, queued for one reader (the desktop app's frame loop), exactly once and in
// arrival order. The controller's ingest threads append; the reader drains the queue between
// frames, so it never blocks a worker and never misses an event.
//
// Nothing else is kept: the controller folds every event into the run's result before handing
// it on, and the reader's models keep what they draw with bounded memory. (The feed used to keep
// a second copy of every event in an EventStore that nothing read: a copy, an allocation and
// fresh pages per event on the app's ingest threads, beside a live run's workers.) A reader that
// falls more than `max_queued` events behind loses the newest ones, and overflowed() says how
// many.
#include <cstddef>
#include <mutex>
#include <vector>

#include "engine/events/event.h"

namespace ringlab::view_model {

class EventFeed : public EventSink {
 public:
  explicit EventFeed(size_t max_queued = 2'000'000);

  void emit(Event event) override;
  // Moves up to `max` queued events into `out` (appended); returns how many.
  size_t drain(std::vector<Event>& out, size_t max);
  size_t queued() const;
  void discard_queued();      // forget what the reader has not drained, and lost (a new run starts)
  size_t overflowed() const;  // events the reader lost because it fell too far behind

 private:
  size_t max_queued_;
  mutable std::mutex queue_mutex_;
  std::vector<Event> queue_;
  size_t head_ = 0;  // first event not yet drained
  size_t overflowed_ = 0;
};

}  // namespace ringlab::view_model
