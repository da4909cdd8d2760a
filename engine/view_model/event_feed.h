#pragma once
// The events of a run, queued for one reader (the desktop app's frame loop), exactly once and in
// arrival order. The controller's ingest threads append; the reader drains the queue between
// frames, so it never blocks a worker and never misses an event.
//
// Nothing else is kept: the controller folds every event into the run's result before handing
// it on, and the reader's models keep what they draw with bounded memory. (The feed used to keep
// a second copy of every event in an EventStore that nothing read: a copy, an allocation and
// fresh pages per event on the app's ingest threads, beside a live run's workers.)
//
// A reader that falls behind (a fast run on MPI sends hundreds of thousands of events a second,
// more than a window on a CPU renderer takes in) first gets the details of fewer steps: past
// `thin_above` queued events, the spans and collectives of only one step in 2, past twice that
// one in 4, and so on. Every rank keeps the same steps (step % K == 0), so the views still get
// whole all-reduces, each with every rank's chunks, instead of pieces of many, and they stay near
// the run instead of seconds behind it. The end of a step left out is marked so
// (kStepDetailsLeftOut): the Timeline shows the step as left out, not as idle. A step's begin and end (its count, loss and epoch),
// shards, epoch ends, errors and flight records are never thinned, and from the first error,
// fault or stop on, nor is anything else (the Failure lab places ranks by their collectives). A reader that still falls `max_queued` events behind loses the newest ones, and
// overflowed() says how many.
#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "engine/events/event.h"

namespace ringlab::view_model {

class EventFeed : public EventSink {
 public:
  explicit EventFeed(size_t max_queued = 2'000'000, size_t thin_above = 100'000);

  void emit(Event event) override;
  void emit_all(std::vector<Event>& events) override;
  // Moves up to `max` queued events into `out` (appended); returns how many.
  size_t drain(std::vector<Event>& out, size_t max);
  size_t queued() const;
  void discard_queued();      // forget what the reader has not drained, and lost (a new run starts)
  size_t overflowed() const;  // events the reader lost because it fell too far behind
  size_t thinned() const;     // events of steps' details left out while the reader was behind
  int thinning() const;       // now: 1, every step's details go through; K, only those of one step in K
  // While set (the workers stepped through at the gate), every step is kept whole: the all-reduce
  // the class steps through must not be one left out.
  void keep_every_step(bool keep);
  // Spans and collectives of one step, which the feed may thin: not what counts steps and
  // epochs, draws the loss and the shards, or says what failed.
  static bool is_step_detail(const Event& event);

 private:
  void take_locked(Event&& event);
  int thinning_for(size_t backlog) const;
  bool keeps_details_of(int64_t step, int every);
  bool details_left_out(int64_t step) const;  // decided already, and left out
  void forget_step_decisions();
  static bool ends_thinning(EventKind kind);

  size_t max_queued_;
  size_t thin_above_;
  size_t thinned_ = 0;
  bool keep_every_step_ = false;
  bool failing_ = false;  // an error, a fault or a stop came: no more thinning this run
  // Whether each recent step's details are kept, decided when the first rank's arrive: the
  // others' come in batches of their own, later, and a step is kept or left out whole.
  struct StepDecision {
    int64_t step = -1;
    bool kept = true;
  };
  std::array<StepDecision, 4096> step_kept_{};
  mutable std::mutex queue_mutex_;
  std::vector<Event> queue_;
  size_t head_ = 0;  // first event not yet drained
  size_t overflowed_ = 0;
};

}  // namespace ringlab::view_model
