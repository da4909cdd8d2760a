#pragma once
// One lane per rank of what each process did and when: forward, backward, bucket ready, each
// bucket's all-reduce with its chunk transfers, the optimizer step, waits at the step-through
// gate. Times are relative to the first event of the run. Each lane keeps its most recent
// spans only, so a long run costs bounded memory.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/events/event.h"

namespace ringlab::view_model {

// Evaluation: rank 0's whole-dataset MSE at an epoch's end. StepVote: the ranks' vote between
// steps (stop, hold at the gate), ringlab's own collective, drawn so the pause it makes is named.
// LeftOut: a whole step whose details the app's feed left out to keep up with a fast run (see
// step_details_left_out): it ran, but none of its spans came.
enum class SpanKind : uint8_t { Forward, Backward, Optimizer, Collective, Transfer, GateWait, BucketReady, Evaluation, StepVote, Delay, LeftOut };

const char* to_string(SpanKind kind);

struct TimelineSpan {
  int64_t t_begin_ns = 0;  // relative to the run's origin
  int64_t t_end_ns = 0;    // == t_begin_ns for instants (bucket ready)
  int64_t step = -1;
  int64_t collective_id = -1;
  int64_t bytes = 0;
  int32_t bucket = -1;
  int32_t ring_step = -1;
  int32_t chunk = -1;
  int32_t src = -1;
  int32_t dst = -1;
  SpanKind kind = SpanKind::Forward;
  int8_t phase = -1;
  int8_t algorithm = 0;  // collectives: 0 ring, 1 native, 2 other
  bool unfinished = false;  // a collective that never ended (its rank or a peer failed)
};

class TimelineModel {
 public:
  explicit TimelineModel(size_t max_spans_per_lane = 60000);

  void consume(const Event& event);
  void clear();
  bool has_delays() const { return has_delays_; }  // a rank slept for a delay fault (the Straggler lab)
  bool has_left_out() const { return has_left_out_; }  // some step's details were left out (a fast run)

  int lanes() const { return static_cast<int>(lanes_.size()); }
  // Lanes a window [t0, t1] (relative ns) needs: up to the highest rank with a span in it. After
  // the world shrinks, the ranks that are gone keep their rows only while their spans are in view.
  int lanes_in(int64_t t0, int64_t t1) const;
  size_t span_count(int rank) const;
  int64_t origin_ns() const { return origin_ns_; }
  int64_t latest_ns() const { return latest_ns_; }   // latest end (or error, fault), relative
  // Up to when every rank of the current set has been heard from (relative ns): each rank sends
  // its events every few milliseconds, so near latest_ns() the ranks heard from last look idle
  // or stuck in a collective that they have in fact long finished. A rank silent for longer than
  // `max_lag_ns` is not waited for (it is stuck, or gone): then latest_ns() - max_lag_ns.
  int64_t reported_ns(int64_t max_lag_ns) const;
  // The end of `rank`'s latest event (relative ns), kNeverHeard if none has come from it.
  static constexpr int64_t kNeverHeard = INT64_MIN;
  int64_t heard_ns(int rank) const {
    return rank >= 0 && rank < static_cast<int>(heard_ns_.size()) ? heard_ns_[rank] : kNeverHeard;
  }
  int64_t earliest_ns() const;                       // earliest span still kept, relative
  // Stretches (relative ns, [first, second), in time order) where some rank's spans were let go
  // to bound memory: a window there shows part of what ran, or nothing. Empty while all is kept.
  const std::vector<std::pair<int64_t, int64_t>>& let_go() const { return let_go_; }
  size_t max_spans_per_lane() const { return max_spans_per_lane_; }
  // The most spans any one lane holds that begin in [t0, t1] (relative ns): whether a window is
  // small enough for hold_window to spare it.
  size_t most_spans_within(int64_t t0, int64_t t1) const;
  // A window the view holds still (its Follow unticked), relative ns; t1 < t0 for none. Letting
  // go of old spans then spares the ones in it, while they take at most half a lane's room: the
  // spans before it go first, then the oldest after it, so what the class is looking at stays.
  void hold_window(int64_t t0, int64_t t1) {
    held_t0_ = t0;
    held_t1_ = t1;
  }
  // Where the `steps`-th most recent forward pass of the lowest rank began (relative ns), for
  // a window that shows the last few steps; earliest_ns() when fewer were seen.
  int64_t recent_steps_begin(int steps, int64_t before_ns = INT64_MAX) const;  // forward passes begun before before_ns

  // Calls fn(span) for every span of `rank` that overlaps [t0, t1] (relative ns), short spans
  // in time order first, then the long ones (gate waits); returns how many it visited.
  template <class Fn>
  size_t for_each_visible(int rank, int64_t t0, int64_t t1, Fn&& fn) const {
    if (rank < 0 || rank >= lanes()) return 0;
    const Lane& lane = lanes_[rank];
    size_t visited = 0;
    for (size_t i = first_visible(lane, t0); i < lane.spans.size() && lane.spans[i].t_begin_ns <= t1; ++i)
      if (lane.spans[i].t_end_ns >= t0) fn(lane.spans[i]), ++visited;
    for (const TimelineSpan& s : lane.long_spans)
      if (s.t_end_ns >= t0 && s.t_begin_ns <= t1) fn(s), ++visited;
    return visited;
  }

  // How long `rank` was held at the step-through gate within [t0, t1] (relative ns): a backward
  // pass or an all-reduce that the gate held for a minute is a minute long, nearly all of it waiting.
  int64_t gate_wait_within(int rank, int64_t t0, int64_t t1) const;

  // When the last rank began collective `id` (relative ns), once every rank of the current set
  // has begun it; -1 before. Until then the earlier ranks could only wait: with a straggler, the
  // part of each collective before this moment is the others' waiting for it.
  int64_t last_arrival_ns(int64_t collective_id) const;

  // Calls fn(span) for every collective of `rank` that began and has not ended (yet, or ever:
  // its rank waits in it, or its peer died), as a span from its begin to latest_ns().
  template <class Fn>
  void for_each_open_collective(int rank, Fn&& fn) const {
    for (const auto& [key, open] : open_) {
      if (key.first != rank || open.t_begin_ns < 0) continue;
      TimelineSpan s;
      s.kind = SpanKind::Collective;
      s.t_begin_ns = open.t_begin_ns;
      s.t_end_ns = std::max(latest_ns_, open.t_begin_ns);
      s.collective_id = key.second;
      s.bucket = open.bucket;
      s.bytes = open.bytes;
      s.algorithm = open.algorithm;
      s.step = open.step;
      s.unfinished = true;
      fn(s);
    }
  }

 private:
  // Spans up to kLongSpanNs long live in `spans`, sorted by begin, so a window is found by
  // binary search; the few longer ones (a class pausing at the gate) are kept apart.
  static constexpr int64_t kLongSpanNs = 50'000'000;
  static constexpr int kWalkFromBack = 16;  // spans passed from the back before searching (add)
  struct Lane {
    std::vector<TimelineSpan> spans;
    std::vector<TimelineSpan> long_spans;
  };
  static size_t first_visible(const Lane& lane, int64_t t0);
  void forget_oldest(std::vector<TimelineSpan>& list, size_t count);
  void note_let_go(int64_t from, int64_t to);
  struct OpenCollective {
    int32_t bucket = -1;
    int64_t bytes = 0;
    int8_t algorithm = 0;
    int64_t t_begin_ns = -1;  // relative
    int64_t step = -1;
  };
  void add(int rank, TimelineSpan span);
  void close_open_collectives(int rank);
  void forget_older_open(int rank, int64_t collective_id);

  struct Arrival {
    int ranks = 0;
    int64_t last_ns = -1;
  };
  void note_arrival(int64_t collective_id, int64_t t_begin_ns);

  size_t max_spans_per_lane_;
  int world_ = 0;                       // ranks in the current set (from RunBegin)
  std::map<int64_t, Arrival> arrivals_;  // collective id -> how many ranks began it, the last when
  std::vector<Lane> lanes_;
  std::map<std::pair<int, int64_t>, OpenCollective> open_;  // (rank, collective id)
  int64_t origin_ns_ = 0;
  bool has_origin_ = false;
  bool has_delays_ = false;
  bool has_left_out_ = false;
  int64_t latest_ns_ = 0;
  std::vector<std::pair<int64_t, int64_t>> let_go_;
  int64_t held_t0_ = 0, held_t1_ = -1;
  std::vector<int64_t> recent_forward_;  // begins of rank 0's last forward passes, oldest first
  std::vector<int64_t> heard_ns_;        // per rank: the latest time any of its events reached (kNeverHeard: none yet)
};

}  // namespace ringlab::view_model
