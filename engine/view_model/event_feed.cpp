#include "engine/view_model/event_feed.h"

#include <algorithm>
#include <iterator>

namespace ringlab::view_model {

namespace {
constexpr int kMostThinning = 1024;
}  // namespace

EventFeed::EventFeed(size_t max_queued, size_t thin_above)
    : max_queued_(std::max<size_t>(max_queued, 1)), thin_above_(std::max<size_t>(thin_above, 1)) {}

bool EventFeed::is_step_detail(const Event& event) {
  switch (event.kind) {
    case EventKind::Forward:
    case EventKind::Backward:
    case EventKind::BucketReady:
    case EventKind::CollectiveBegin:
    case EventKind::CollectiveEnd:
    case EventKind::ChunkTransfer:
    case EventKind::OptimizerStep:
    case EventKind::StepVote:
      return event.step >= 0;  // the [1, 2, 3] demo all-reduce comes before any step
    default:
      return false;
  }
}

// One step in 2 from `thin_above_` queued events, one in 4 from twice that, ...: a backlog that
// keeps growing at one rate halves what comes in next.
int EventFeed::thinning_for(size_t backlog) const {
  int every = 1;
  for (size_t level = thin_above_; backlog >= level && every < kMostThinning; level *= 2) every *= 2;
  return every;
}

// Every detail event passes here, hundreds of thousands a second on the server's threads: a slot
// per step in a fixed ring, where a step 4,096 later (far more than the ranks' batches lie apart)
// takes the slot over.
bool EventFeed::keeps_details_of(int64_t step, int every) {
  StepDecision& slot = step_kept_[static_cast<size_t>(step) % step_kept_.size()];
  if (slot.step != step) slot = {step, step % every == 0};
  return slot.kept;
}

bool EventFeed::details_left_out(int64_t step) const {
  const StepDecision& slot = step_kept_[static_cast<size_t>(step) % step_kept_.size()];
  return slot.step == step && !slot.kept;
}

void EventFeed::forget_step_decisions() { step_kept_.fill({}); }

void EventFeed::keep_every_step(bool keep) {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  keep_every_step_ = keep;
}

void EventFeed::emit(Event event) {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  take_locked(std::move(event));
}

void EventFeed::emit_all(std::vector<Event>& events) {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  for (Event& e : events) take_locked(std::move(e));
  events.clear();
}

void EventFeed::take_locked(Event&& event) {
  const size_t backlog = queue_.size() - head_;
  if (backlog >= max_queued_) {
    ++overflowed_;
    return;
  }
  // A restart from a checkpoint, or a new world, numbers its steps again: decided afresh.
  if (event.kind == EventKind::Restart || event.kind == EventKind::WorldChange) forget_step_decisions();
  // Once something has gone wrong, or the run is stopping, every step that comes is kept whole:
  // the Ring and the Failure lab show the all-reduce the failure is in, not an older one.
  if (ends_thinning(event.kind)) failing_ = true;
  const int every = keep_every_step_ || failing_ ? 1 : thinning_for(backlog);
  if (is_step_detail(event) && !keeps_details_of(event.step, every)) {
    ++thinned_;
    return;
  }
  if (event.kind == EventKind::StepEnd && event.step >= 0 && details_left_out(event.step)) event.code = kStepDetailsLeftOut;
  queue_.push_back(std::move(event));
}

bool EventFeed::ends_thinning(EventKind kind) {
  switch (kind) {
    case EventKind::Error:
    case EventKind::Fault:
    case EventKind::FlightRecord:
    case EventKind::TornDown:
    case EventKind::RunStopped:
    case EventKind::CollectiveMismatch:
      return true;
    default:
      return false;
  }
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
  thinned_ = 0;
  failing_ = false;
  forget_step_decisions();
}

size_t EventFeed::overflowed() const {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return overflowed_;
}

size_t EventFeed::thinned() const {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return thinned_;
}

int EventFeed::thinning() const {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return keep_every_step_ || failing_ ? 1 : thinning_for(queue_.size() - head_);
}

}  // namespace ringlab::view_model
