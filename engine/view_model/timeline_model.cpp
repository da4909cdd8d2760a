#include "engine/view_model/timeline_model.h"

#include <algorithm>
#include <cstdint>

#include "engine/job/job_config.h"

namespace ringlab::view_model {

const char* to_string(SpanKind kind) {
  switch (kind) {
    case SpanKind::Forward: return "forward";
    case SpanKind::Backward: return "backward";
    case SpanKind::Optimizer: return "optimizer step";
    case SpanKind::Collective: return "all-reduce";
    case SpanKind::Transfer: return "chunk transfer";
    case SpanKind::GateWait: return "gate wait";
    case SpanKind::BucketReady: return "bucket ready";
    case SpanKind::Evaluation: return "evaluation";
    case SpanKind::StepVote: return "step vote";
    case SpanKind::Delay: return "injected delay";
    case SpanKind::LeftOut: return "details left out";
  }
  return "span";
}

TimelineModel::TimelineModel(size_t max_spans_per_lane)
    : max_spans_per_lane_(std::max<size_t>(max_spans_per_lane, 16)) {}

void TimelineModel::clear() {
  lanes_.clear();
  open_.clear();
  arrivals_.clear();
  world_ = 0;
  has_origin_ = false;
  has_delays_ = false;
  has_left_out_ = false;
  origin_ns_ = 0;
  latest_ns_ = 0;
  let_go_.clear();
  recent_forward_.clear();
  heard_ns_.clear();
}

int64_t TimelineModel::reported_ns(int64_t max_lag_ns) const {
  if (world_ <= 0) return latest_ns_;
  int64_t everyone = latest_ns_;
  for (int r = 0; r < world_; ++r)
    everyone = std::min(everyone, r < static_cast<int>(heard_ns_.size()) ? heard_ns_[r] : 0);
  return std::max(everyone, latest_ns_ - max_lag_ns);
}

int64_t TimelineModel::recent_steps_begin(int steps, int64_t before_ns) const {
  const size_t begun = static_cast<size_t>(
      std::lower_bound(recent_forward_.begin(), recent_forward_.end(), before_ns) - recent_forward_.begin());
  if (steps <= 0 || begun == 0) return earliest_ns();
  const size_t k = std::min<size_t>(static_cast<size_t>(steps), begun);
  return recent_forward_[begun - k];
}

size_t TimelineModel::most_spans_within(int64_t t0, int64_t t1) const {
  size_t most = 0;
  const auto by_begin = [](const TimelineSpan& s, int64_t t) { return s.t_begin_ns < t; };
  for (const auto& lane : lanes_) {
    const auto from = std::lower_bound(lane.spans.begin(), lane.spans.end(), t0, by_begin);
    const auto to = std::lower_bound(from, lane.spans.end(), t1 + 1, by_begin);
    most = std::max(most, static_cast<size_t>(to - from));
  }
  return most;
}

int64_t TimelineModel::earliest_ns() const {
  int64_t earliest = latest_ns_;
  for (const auto& lane : lanes_)
    for (const auto* list : {&lane.spans, &lane.long_spans})
      if (!list->empty()) earliest = std::min(earliest, list->front().t_begin_ns);
  return earliest;
}

void TimelineModel::add(int rank, TimelineSpan span) {
  if (rank < 0 || rank >= kMaxWorldSize) return;
  if (static_cast<int>(lanes_.size()) <= rank) lanes_.resize(rank + 1);
  Lane& lane = lanes_[rank];
  // A lane fills to its cap within seconds of a fast run: room for all of it at once, rather than
  // a growing copy after copy, each in memory new to the process (a page fault a page).
  if (lane.spans.capacity() == 0) lane.spans.reserve(max_spans_per_lane_ + 1);
  // Events arrive almost in time order (a transfer is reported when it ends), so the right
  // place is a few spans from the back: walked to from there, and the insert moves only those.
  // A search over the whole lane (megabytes of spans during a fast run) would miss the cache at
  // nearly every probe, for each of the run's 100,000 or more events a second.
  std::vector<TimelineSpan>& list = span.t_end_ns - span.t_begin_ns > kLongSpanNs ? lane.long_spans : lane.spans;
  auto it = list.end();
  for (int walked = 0; it != list.begin() && std::prev(it)->t_begin_ns > span.t_begin_ns; ++walked, --it)
    if (walked == kWalkFromBack) {
      it = std::upper_bound(list.begin(), it, span.t_begin_ns,
                            [](int64_t t, const TimelineSpan& s) { return t < s.t_begin_ns; });
      break;
    }
  list.insert(it, span);
  latest_ns_ = std::max(latest_ns_, span.t_end_ns);
  const size_t cap = &list == &lane.spans ? max_spans_per_lane_ : max_spans_per_lane_ / 16;
  if (list.size() > cap) forget_oldest(list, cap / 4);  // a quarter at once
}

void TimelineModel::forget_oldest(std::vector<TimelineSpan>& list, size_t count) {
  const auto begins_before = [&](int64_t t) {
    return static_cast<size_t>(std::lower_bound(list.begin(), list.end(), t, [](const TimelineSpan& s, int64_t v) {
                                 return s.t_begin_ns < v;
                               }) - list.begin());
  };
  // The held window's spans, [p0, p1): a span in `list` is at most kLongSpanNs long, so one that
  // reaches into the window began at most that long before it.
  const bool held = held_t1_ >= held_t0_;
  const size_t p0 = held ? begins_before(held_t0_ - kLongSpanNs) : 0;
  const size_t p1 = held ? begins_before(held_t1_ + 1) : 0;
  const bool spare = held && p0 < count && p1 > p0 && p1 - p0 <= max_spans_per_lane_ / 2 && p1 < list.size();
  if (!spare) {
    note_let_go(0, list[count].t_begin_ns);
    list.erase(list.begin(), list.begin() + static_cast<ptrdiff_t>(count));
    return;
  }
  // The oldest after the window, then everything before it.
  const size_t after = std::min(count - p0, list.size() - p1 - 1);
  note_let_go(list[p1].t_begin_ns, list[p1 + after].t_begin_ns);
  list.erase(list.begin() + static_cast<ptrdiff_t>(p1), list.begin() + static_cast<ptrdiff_t>(p1 + after));
  if (p0 > 0) {
    note_let_go(0, list[p0].t_begin_ns);
    list.erase(list.begin(), list.begin() + static_cast<ptrdiff_t>(p0));
  }
}

// Kept as few stretches as possible: overlapping or touching ones are one.
void TimelineModel::note_let_go(int64_t from, int64_t to) {
  if (to <= from) return;
  let_go_.emplace_back(from, to);
  std::sort(let_go_.begin(), let_go_.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& s : let_go_) {
    if (!merged.empty() && s.first <= merged.back().second) merged.back().second = std::max(merged.back().second, s.second);
    else merged.push_back(s);
  }
  let_go_ = std::move(merged);
}

void TimelineModel::consume(const Event& event) {
  if (!has_origin_ && event.t_begin_ns > 0) {
    origin_ns_ = event.t_begin_ns;
    has_origin_ = true;
  }
  TimelineSpan span;
  span.t_begin_ns = event.t_begin_ns - origin_ns_;
  span.t_end_ns = std::max(event.t_end_ns, event.t_begin_ns) - origin_ns_;
  span.step = event.step;
  span.collective_id = event.collective_id;
  span.bucket = event.bucket;
  span.bytes = event.bytes;
  if (has_origin_ && event.rank >= 0 && event.rank < kMaxWorldSize) {
    if (static_cast<int>(heard_ns_.size()) <= event.rank) heard_ns_.resize(event.rank + 1, kNeverHeard);
    heard_ns_[event.rank] = std::max(heard_ns_[event.rank], span.t_end_ns);
  }
  switch (event.kind) {
    case EventKind::Forward:
      span.kind = SpanKind::Forward;
      if (event.rank == 0) {
        if (recent_forward_.size() == 16) recent_forward_.erase(recent_forward_.begin());
        recent_forward_.push_back(span.t_begin_ns);
      }
      break;
    case EventKind::Backward: span.kind = SpanKind::Backward; break;
    case EventKind::OptimizerStep: span.kind = SpanKind::Optimizer; break;
    case EventKind::EpochEnd:  // a PyTorch script's reports only the moment: nothing to draw
      if (span.t_end_ns <= span.t_begin_ns) return;
      span.kind = SpanKind::Evaluation;
      break;
    case EventKind::StepVote: span.kind = SpanKind::StepVote; break;
    case EventKind::StepEnd:  // its begin and end: the step itself, drawn only where its details were left out
      if (!step_details_left_out(event)) return;
      span.kind = SpanKind::LeftOut;
      has_left_out_ = true;
      break;
    case EventKind::Straggle:
      span.kind = SpanKind::Delay;
      has_delays_ = true;
      break;
    case EventKind::GateWait:
      span.kind = SpanKind::GateWait;
      span.ring_step = event.ring_step;
      span.phase = event.phase;
      break;
    case EventKind::BucketReady:
      span.kind = SpanKind::BucketReady;
      span.t_end_ns = span.t_begin_ns;
      break;
    case EventKind::CollectiveBegin: {
      if (open_.size() > 4096) open_.erase(open_.begin());  // ends that never came (a killed rank)
      OpenCollective& open = open_[{event.rank, event.collective_id}];
      open.bucket = event.bucket;
      open.bytes = event.bytes;
      open.algorithm = event.text == "ring" ? 0 : event.text == "native" ? 1 : 2;
      open.t_begin_ns = span.t_begin_ns;
      open.step = event.step;
      note_arrival(event.collective_id, span.t_begin_ns);
      return;
    }
    case EventKind::CollectiveEnd: {
      span.kind = SpanKind::Collective;
      forget_older_open(event.rank, event.collective_id);
      auto it = open_.find({event.rank, event.collective_id});
      if (it != open_.end()) {
        if (span.bucket < 0) span.bucket = it->second.bucket;
        if (span.bytes == 0) span.bytes = it->second.bytes;
        span.algorithm = it->second.algorithm;
        open_.erase(it);
      }
      break;
    }
    case EventKind::ChunkTransfer:
      span.kind = SpanKind::Transfer;
      span.phase = event.phase;
      span.ring_step = event.ring_step;
      span.chunk = event.chunk;
      span.src = event.src;
      span.dst = event.dst;
      break;
    case EventKind::RunBegin:
      close_open_collectives(event.rank);
      if (event.rank == 0) {  // a new set of processes numbers its collectives from 0 again
        world_ = static_cast<int>(event.value);
        arrivals_.clear();
      }
      return;
    case EventKind::Error:
    case EventKind::TornDown:
    case EventKind::Fault:
    case EventKind::FlightRecord:
      // Not a span, but the moment a rank failed: the timeline reaches it, so the collectives
      // the other ranks were left waiting in show how long they waited.
      if (has_origin_) latest_ns_ = std::max(latest_ns_, span.t_end_ns);
      return;
    default:
      return;
  }
  add(event.rank, span);
}

void TimelineModel::note_arrival(int64_t collective_id, int64_t t_begin_ns) {
  // Ids only grow within a set: the oldest go, but not those of a held window, as long as it
  // shows few enough all-reduces for their hatching to be seen (a bounded walk per arrival).
  if (arrivals_.size() > 16384) {
    constexpr int kMostSpared = 512;
    auto oldest = arrivals_.begin();
    const auto in_held = [&](const Arrival& a) { return a.last_ns >= held_t0_ - kLongSpanNs && a.last_ns <= held_t1_; };
    for (int walked = 0; held_t1_ >= held_t0_ && oldest != arrivals_.end() && in_held(oldest->second); ++walked, ++oldest)
      if (walked == kMostSpared) {
        oldest = arrivals_.begin();
        break;
      }
    arrivals_.erase(oldest == arrivals_.end() ? arrivals_.begin() : oldest);
  }
  Arrival& a = arrivals_[collective_id];
  ++a.ranks;
  a.last_ns = std::max(a.last_ns, t_begin_ns);
}

int64_t TimelineModel::last_arrival_ns(int64_t collective_id) const {
  auto it = arrivals_.find(collective_id);
  if (it == arrivals_.end() || world_ <= 0 || it->second.ranks < world_) return -1;
  return it->second.last_ns;
}

// A rank's new process (a restart, a live change) will never end the old one's collectives:
// they are kept as unfinished spans up to the moment the old set failed or stopped.
int64_t TimelineModel::gate_wait_within(int rank, int64_t t0, int64_t t1) const {
  int64_t held = 0;
  for_each_visible(rank, t0, t1, [&](const TimelineSpan& s) {
    if (s.kind == SpanKind::GateWait) held += std::max<int64_t>(0, std::min(s.t_end_ns, t1) - std::max(s.t_begin_ns, t0));
  });
  return held;
}

// A rank's collectives end in the order they began. One still open when a later one ends lost
// its end (the app fell behind and dropped events): it is not a rank waiting, so it goes.
void TimelineModel::forget_older_open(int rank, int64_t collective_id) {
  for (auto it = open_.lower_bound({rank, INT64_MIN}); it != open_.end() && it->first.first == rank && it->first.second < collective_id;)
    it = open_.erase(it);
}

void TimelineModel::close_open_collectives(int rank) {
  for (auto it = open_.begin(); it != open_.end();) {
    if (it->first.first != rank) {
      ++it;
      continue;
    }
    if (it->second.t_begin_ns >= 0) {
      TimelineSpan span;
      span.kind = SpanKind::Collective;
      span.t_begin_ns = it->second.t_begin_ns;
      span.t_end_ns = std::max(latest_ns_, span.t_begin_ns);
      span.collective_id = it->first.second;
      span.bucket = it->second.bucket;
      span.bytes = it->second.bytes;
      span.algorithm = it->second.algorithm;
      span.step = it->second.step;
      span.unfinished = true;
      add(rank, span);
    }
    it = open_.erase(it);
  }
}

size_t TimelineModel::span_count(int rank) const {
  if (rank < 0 || rank >= lanes()) return 0;
  return lanes_[rank].spans.size() + lanes_[rank].long_spans.size();
}

// A short span that began up to kLongSpanNs before t0 may still reach into the window.
size_t TimelineModel::first_visible(const Lane& lane, int64_t t0) {
  auto it = std::lower_bound(lane.spans.begin(), lane.spans.end(), t0 - kLongSpanNs,
                             [](const TimelineSpan& s, int64_t t) { return s.t_begin_ns < t; });
  return static_cast<size_t>(it - lane.spans.begin());
}

// Called every frame: stops at the first span in view (a binary search, then a few steps),
// instead of visiting every span of the window.
int TimelineModel::lanes_in(int64_t t0, int64_t t1) const {
  const auto in_view = [&](const TimelineSpan& s) { return s.t_end_ns >= t0 && s.t_begin_ns <= t1; };
  for (int rank = lanes(); rank-- > 0;) {
    const Lane& lane = lanes_[rank];
    for (size_t i = first_visible(lane, t0); i < lane.spans.size() && lane.spans[i].t_begin_ns <= t1; ++i)
      if (lane.spans[i].t_end_ns >= t0) return rank + 1;
    if (std::any_of(lane.long_spans.begin(), lane.long_spans.end(), in_view)) return rank + 1;
  }
  return 0;
}

}  // namespace ringlab::view_model
