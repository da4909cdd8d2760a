// Loss curves and the timeline from events: steps, epochs, live world changes, bounded memory.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/view_model/loss_series.h"
#include "engine/view_model/timeline_model.h"

using namespace ringlab;
using namespace ringlab::view_model;

namespace {
Event step_end(int rank, int64_t step, double loss) {
  Event e;
  e.kind = EventKind::StepEnd;
  e.rank = rank;
  e.step = step;
  e.epoch = 0;
  e.value = loss;
  return e;
}
Event epoch_end(int epoch, int64_t step, double mse) {
  Event e;
  e.kind = EventKind::EpochEnd;
  e.epoch = epoch;
  e.step = step;
  e.value = mse;
  return e;
}
Event span(EventKind kind, int rank, int64_t t0, int64_t t1) {
  Event e;
  e.kind = kind;
  e.rank = rank;
  e.t_begin_ns = t0;
  e.t_end_ns = t1;
  return e;
}
}  // namespace

TEST_CASE("per-rank loss and per-epoch MSE") {
  LossSeriesBuilder b;
  for (int64_t s = 0; s < 4; ++s)
    for (int r = 0; r < 2; ++r) b.consume(step_end(r, s, 1.0 / (s + 1) + r), 1, 2, "gloo");
  b.consume(epoch_end(0, 4, 0.5), 1, 2, "gloo");
  const LossSeries& s = b.series();
  REQUIRE(s.rank_loss.size() == 2);
  CHECK(s.rank_loss[0].size() == 4);
  CHECK(s.rank_loss[1][2].loss == doctest::Approx(1.0 / 3 + 1));
  REQUIRE(s.epoch_mse.size() == 1);
  CHECK(s.epoch_mse[0].step == 4);
  CHECK(s.epoch_mse[0].mse == 0.5);
  CHECK(s.changes.empty());
  REQUIRE(s.mse_curve.size() == 1);
  CHECK(s.mse_curve[0].step == 4);
  CHECK(s.extent.any);
  CHECK(s.extent.y0_positive == doctest::Approx(0.25));
  // Steps map into epochs as the step axis has them: step 2 begins halfway through the epoch of
  // steps 0-3, and its MSE, at the 4 steps done by its end, is at epoch 1.
  CHECK(s.epoch_of_step(0) == doctest::Approx(0.0));
  CHECK(s.epoch_of_step(2) == doctest::Approx(0.5));
  CHECK(s.epoch_of_step(4) == doctest::Approx(1.0));
  double x0, x1, y0, y1;
  REQUIRE(s.bounds(x0, x1, y0, y1));
  CHECK(x0 == 0);
  CHECK(x1 == 4);
  CHECK(y0 == doctest::Approx(0.25));
  CHECK(y1 == doctest::Approx(2.0));
}

// A PyTorch script that reports no whole-dataset MSE: the epochs come from its steps' own epoch
// numbers, not one epoch per step. Three epochs of four steps (0-3, 4-7, 8-11).
TEST_CASE("a joined rank's shadow step draws no loss (it read 0, down to the plot's floor)") {
  LossSeriesBuilder b;
  for (int64_t s = 0; s < 2; ++s) b.consume(step_end(0, s, 2.0), 1, 2, "gloo");
  b.consume(step_end(1, 0, 1.5), 1, 2, "gloo");
  Event joined = step_end(1, 1, 0.0);
  joined.text = "joined";
  b.consume(joined, 1, 2, "gloo");
  const LossSeries& s = b.series();
  REQUIRE(s.rank_loss.size() == 2);
  CHECK(s.rank_loss[0].size() == 2);
  REQUIRE(s.rank_loss[1].size() == 1);
  CHECK(s.rank_loss[1][0].loss == 1.5);
  CHECK(s.extent.y0 == doctest::Approx(1.5));
  CHECK(s.last_step == 1);
}

TEST_CASE("without an epoch's MSE, the steps' epochs place the steps in epochs") {
  LossSeriesBuilder b;
  for (int64_t s = 0; s < 12; ++s) {
    for (int rank : {0, 1}) {
      Event e = step_end(rank, s, 1.0);
      e.epoch = static_cast<int>(s / 4);
      b.consume(e, 1, 2, "gloo");
    }
  }
  const LossSeries& s = b.series();
  REQUIRE(s.epoch_mse.empty());
  CHECK(s.epoch_starts == std::vector<double>{0, 4, 8});
  CHECK(s.epoch_of_step(0) == doctest::Approx(0.0));    // where epoch 0's first step begins
  CHECK(s.epoch_of_step(3) == doctest::Approx(0.75));   // its last
  CHECK(s.epoch_of_step(4) == doctest::Approx(1.0));    // epoch 1's first: epoch 0 done
  CHECK(s.epoch_of_step(5) == doctest::Approx(1.25));
  CHECK(s.epoch_of_step(11) == doctest::Approx(2.75));  // the last epoch, as long as the one before
  CHECK(LossSeries{}.epoch_of_step(7) == 7);           // nothing says: steps
}

TEST_CASE("a live world change continues the curve and leaves a marker") {
  LossSeriesBuilder b;
  for (int64_t s = 0; s < 5; ++s) b.consume(step_end(0, s, 1.0), 1, 4, "gloo");
  // The new workers resume from the checkpoint at step 5...
  b.consume(step_end(0, 5, 0.9), 2, 2, "mpi");
  REQUIRE(b.series().changes.size() == 1);
  CHECK(b.series().changes[0].step == 4.5);
  CHECK(b.series().changes[0].world_size == 2);
  CHECK(b.series().changes[0].backend == "mpi");
  CHECK(b.series().rank_loss[0].back().step == 5);
  // ...or count from zero: the curve still continues after the last step.
  b.consume(step_end(0, 0, 0.8), 3, 1, "gloo");
  CHECK(b.series().rank_loss[0].back().step == 6);
  CHECK(b.series().changes.size() == 2);
}

TEST_CASE("decimation keeps the extremes of each bucket") {
  std::vector<LossPoint> pts;
  for (int i = 0; i < 1000; ++i) pts.push_back({double(i), i == 500 ? 100.0 : 1.0});
  const auto d = decimate(pts, 0, 1000, 10);
  CHECK(d.size() <= 22);
  bool spike = false;
  for (const auto& p : d) spike |= p.loss == 100.0;
  CHECK(spike);
  // Few points come back as they are, with a neighbour on each side of the range.
  const auto few = decimate(pts, 10, 20, 100);
  CHECK(few.front().step == 9);
  CHECK(few.back().step == 20);
  CHECK(decimate({}, 0, 1, 10).empty());
}

TEST_CASE("a dense curve becomes each column's range; a sparse one is not dense") {
  std::vector<LossPoint> pts;
  for (int i = 0; i < 1000; ++i) pts.push_back({double(i), i == 500 ? 100.0 : 1.0 + (i % 7) * 0.1});
  CHECK(dense_in(pts, 0, 1000, 10));
  CHECK_FALSE(dense_in(pts, 0, 1000, 500));  // two points a column: a line shows them
  CHECK_FALSE(dense_in({}, 0, 1, 10));
  const auto cols = column_ranges(pts, 0, 1000, 10);
  REQUIRE(cols.size() == 10);
  CHECK(cols[0].step0 == 0);
  CHECK(cols[0].step1 == 99);
  CHECK(cols[0].lo == doctest::Approx(1.0));
  CHECK(cols[0].hi == doctest::Approx(1.6));
  CHECK(cols[5].hi == 100.0);  // the spike stays
  CHECK(cols[9].step1 == 999);
  // A window inside the curve keeps a neighbour column on each side, so the band reaches the edges.
  const auto inner = column_ranges(pts, 200, 400, 4);
  CHECK(inner.front().step0 == 199);
  CHECK(inner.back().step0 == 400);
  // Columns with no finite loss are left out; a column with some keeps the finite ones.
  std::vector<LossPoint> diverged = {{0, 1}, {1, 2}, {2, NAN}, {3, INFINITY}, {4, 3}, {5, NAN}};
  const auto d = column_ranges(diverged, 0, 6, 3);
  REQUIRE(d.size() == 2);
  CHECK(d[0].lo == 1);
  CHECK(d[0].hi == 2);
  CHECK(d[1].lo == 3);  // step 4; steps 2-3 (NaN, infinity) made no column
  CHECK(d[1].hi == 3);
}

TEST_CASE("a curve's reduction: the points that arrive after it are columns too, never a zigzag line") {
  // An MSE that wobbles from epoch to epoch, 10,000 points over 500 pixel columns: dense.
  std::vector<LossPoint> pts;
  auto wobble = [](int i) { return 0.006 + (i % 2 ? 0.0003 : -0.0002); };
  pts.reserve(10200);
  for (int i = 0; i < 10000; ++i) pts.push_back({double(i), wobble(i)});
  CurveReduction reduction;
  const CurveShape first = reduction.shape(pts, 0, 10000, 500);
  CHECK(first.line.empty());
  REQUIRE_FALSE(first.columns.empty());
  // 60 more, fewer than the 1% that redoes the reduction: reduced on their own.
  for (int i = 10000; i < 10060; ++i) pts.push_back({double(i), wobble(i)});
  const CurveShape later = reduction.shape(pts, 0, 10060, 500);
  // A thick line through them would turn back on itself at every point, and its joins reach
  // far above and below the curve (a spike at the live edge).
  CHECK(later.line.empty());
  CHECK(later.columns.size() > first.columns.size());
  CHECK(later.columns.back().step1 == 10059);  // the band reaches the newest point
  for (const LossRange& c : later.columns) {
    CHECK(c.lo >= 0.0058 - 1e-12);
    CHECK(c.hi <= 0.0063 + 1e-12);
  }
  // A curve that is not dense stays a line through every point, the new ones included.
  std::vector<LossPoint> sparse = {{0, 1}, {10, 2}, {20, 1.5}};
  CurveReduction line;
  CHECK(line.shape(sparse, 0, 20, 500).line.size() == 3);
  sparse.push_back({30, 1.2});
  const CurveShape grown = line.shape(sparse, 0, 30, 500);
  CHECK(grown.columns.empty());
  CHECK(grown.line.size() == 4);
}

TEST_CASE("nearest point for hover read-outs") {
  std::vector<LossPoint> pts = {{0, 1}, {10, 2}, {20, 3}};
  LossPoint p;
  REQUIRE(nearest_point(pts, 6, p));
  CHECK(p.step == 10);
  REQUIRE(nearest_point(pts, 4, p));
  CHECK(p.step == 0);
  REQUIRE(nearest_point(pts, 99, p));
  CHECK(p.step == 20);
  CHECK_FALSE(nearest_point({}, 1, p));
}

TEST_CASE("timeline lanes hold spans in time order relative to the first event") {
  TimelineModel t;
  t.consume(span(EventKind::Forward, 0, 1000, 2000));
  t.consume(span(EventKind::Backward, 0, 2000, 5000));
  Event begin = span(EventKind::CollectiveBegin, 0, 3000, 3000);
  begin.collective_id = 1;
  begin.bucket = 0;
  begin.bytes = 196;
  begin.text = "ring";
  t.consume(begin);
  Event transfer = span(EventKind::ChunkTransfer, 0, 3100, 3400);
  transfer.collective_id = 1;
  transfer.src = 1;
  transfer.dst = 0;
  transfer.chunk = 1;
  t.consume(transfer);
  Event end = span(EventKind::CollectiveEnd, 0, 3000, 4000);
  end.collective_id = 1;
  t.consume(end);
  t.consume(span(EventKind::OptimizerStep, 0, 5000, 5500));
  t.consume(span(EventKind::Forward, 1, 1200, 2100));

  CHECK(t.origin_ns() == 1000);
  CHECK(t.lanes() == 2);
  CHECK(t.span_count(0) == 5);  // CollectiveBegin is folded into the collective's span
  CHECK(t.latest_ns() == 4500);

  std::vector<TimelineSpan> seen;
  // Relative times: backward 1000..4000, collective 2000..3000, transfer 2100..2400.
  t.for_each_visible(0, 2500, 2600, [&](const TimelineSpan& s) { seen.push_back(s); });
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].kind == SpanKind::Backward);
  CHECK(seen[1].kind == SpanKind::Collective);
  CHECK(seen[1].bucket == 0);
  CHECK(seen[1].bytes == 196);
  seen.clear();
  t.for_each_visible(0, 4100, 4200, [&](const TimelineSpan& s) { seen.push_back(s); });
  REQUIRE(seen.size() == 1);  // backward ended before the window
  CHECK(seen[0].kind == SpanKind::Optimizer);
}

TEST_CASE("timeline: the pauses between steps are named: rank 0's evaluation, the ranks' step vote") {
  TimelineModel t;
  t.consume(span(EventKind::Forward, 0, 1000, 2000));
  Event evaluation = span(EventKind::EpochEnd, 0, 3000, 3500);  // the MSE's computation
  evaluation.epoch = 0;
  t.consume(evaluation);
  Event script_epoch_end = span(EventKind::EpochEnd, 1, 3600, 3600);  // a PyTorch script reports the moment only
  script_epoch_end.epoch = 0;
  t.consume(script_epoch_end);
  Event vote = span(EventKind::StepVote, 1, 4000, 4200);
  vote.step = 2;
  t.consume(vote);
  std::vector<TimelineSpan> rank0, rank1;
  t.for_each_visible(0, 0, 10000, [&](const TimelineSpan& s) { rank0.push_back(s); });
  t.for_each_visible(1, 0, 10000, [&](const TimelineSpan& s) { rank1.push_back(s); });
  REQUIRE(rank0.size() == 2);
  CHECK(rank0[1].kind == SpanKind::Evaluation);
  CHECK(rank0[1].t_begin_ns == 2000);  // relative to the first event (1000)
  CHECK(rank0[1].t_end_ns == 2500);
  REQUIRE(rank1.size() == 1);  // the script's epoch end is no span
  CHECK(rank1[0].kind == SpanKind::StepVote);
  CHECK(rank1[0].step == 2);
  CHECK(rank1[0].t_end_ns - rank1[0].t_begin_ns == 200);
}

// The Straggler lab's sleep is a span of its own on the straggler's lane: the others' long waits
// in the step's all-reduce have a visible cause.
TEST_CASE("timeline: a delay fault's sleep is the straggler's span, and the legend knows of it") {
  TimelineModel t;
  t.consume(span(EventKind::Forward, 0, 1000, 2000));
  CHECK_FALSE(t.has_delays());
  Event sleep = span(EventKind::Straggle, 1, 1000, 21000);
  sleep.step = 0;
  sleep.value = 0.02;
  t.consume(sleep);
  CHECK(t.has_delays());
  std::vector<TimelineSpan> rank1;
  t.for_each_visible(1, 0, 100000, [&](const TimelineSpan& s) { rank1.push_back(s); });
  REQUIRE(rank1.size() == 1);
  CHECK(rank1[0].kind == SpanKind::Delay);
  CHECK(rank1[0].t_end_ns - rank1[0].t_begin_ns == 20000);
  t.clear();
  CHECK_FALSE(t.has_delays());
}

// A fast run's feed leaves some steps' details out: without a mark, the lane showed an idle gap
// where the step ran, which reads as the ranks waiting.
TEST_CASE("timeline: a step whose details were left out is drawn as such, not as an idle gap") {
  TimelineModel t;
  t.consume(span(EventKind::Forward, 0, 1000, 2000));
  Event kept = span(EventKind::StepEnd, 0, 1000, 3000);
  kept.step = 0;
  t.consume(kept);  // a step whose spans came: its end adds nothing
  CHECK_FALSE(t.has_left_out());
  Event left_out = span(EventKind::StepEnd, 0, 3000, 5000);
  left_out.step = 1;
  left_out.code = ringlab::kStepDetailsLeftOut;
  t.consume(left_out);
  CHECK(t.has_left_out());
  std::vector<TimelineSpan> rank0;
  t.for_each_visible(0, 0, 100000, [&](const TimelineSpan& s) { rank0.push_back(s); });
  REQUIRE(rank0.size() == 2);
  CHECK(rank0[0].kind == SpanKind::Forward);
  CHECK(rank0[1].kind == SpanKind::LeftOut);
  CHECK(rank0[1].step == 1);
  CHECK(rank0[1].t_end_ns - rank0[1].t_begin_ns == 2000);
  t.clear();
  CHECK_FALSE(t.has_left_out());
}

TEST_CASE("timeline memory is bounded per lane, and says what it let go") {
  TimelineModel t(100);
  t.consume(span(EventKind::Forward, 1, 1, 6));  // rank 1 keeps all it did
  for (int i = 0; i < 99; ++i) t.consume(span(EventKind::Forward, 0, 1 + i * 10, 1 + i * 10 + 5));
  CHECK(t.let_go().empty());  // nothing let go yet
  for (int i = 99; i < 1000; ++i) t.consume(span(EventKind::Forward, 0, 1 + i * 10, 1 + i * 10 + 5));
  CHECK(t.span_count(0) <= 100);
  CHECK(t.earliest_ns() == 0);  // rank 1's first span
  // Rank 0 let its oldest go: before its oldest kept span the picture is incomplete.
  std::vector<int64_t> kept;
  t.for_each_visible(0, 0, INT64_MAX, [&](const TimelineSpan& s) { kept.push_back(s.t_begin_ns); });
  REQUIRE_FALSE(kept.empty());
  REQUIRE(t.let_go().size() == 1);
  CHECK(t.let_go()[0] == std::pair<int64_t, int64_t>{0, kept.front()});
  CHECK(kept.front() == 9000);  // the newest 100 of 1,000 spans, 10 ns apart
  t.clear();
  CHECK(t.let_go().empty());
  for (int i = 0; i < 1000; ++i) t.consume(span(EventKind::Forward, 0, 1 + i * 10, 1 + i * 10 + 5));
  // Long waits at the gate are kept apart and still found.
  t.consume(span(EventKind::GateWait, 0, 5, 5 + 2'000'000'000));
  size_t n = t.for_each_visible(0, 1'000'000'000, 1'000'000'001, [](const TimelineSpan& s) {
    CHECK(s.kind == SpanKind::GateWait);
  });
  CHECK(n == 1);
}

TEST_CASE("timeline: a window held still keeps its spans while newer ones push the others out") {
  // A 1 ms span every 100 ms (spans are short next to the 50 ms a span may reach back).
  constexpr int64_t kMs = 1'000'000;
  auto at = [&](int i) { return span(EventKind::Forward, 0, 1 + i * 100 * kMs, 1 + i * 100 * kMs + kMs); };
  TimelineModel t(100);
  for (int i = 0; i < 60; ++i) t.consume(at(i));  // relative time = i * 100 ms
  // The class looks at spans 40-45 and holds the view there.
  const int64_t from = 4000 * kMs, to = 4501 * kMs;
  t.hold_window(from, to);
  for (int i = 60; i < 2000; ++i) t.consume(at(i));
  CHECK(t.span_count(0) <= 100);
  CHECK(t.for_each_visible(0, from, to, [](const TimelineSpan&) {}) == 6);  // all six still there
  // What went: everything before the window, and a stretch after it up to the newest kept.
  REQUIRE(t.let_go().size() == 2);
  CHECK(t.let_go()[0] == std::pair<int64_t, int64_t>{0, from});
  CHECK(t.let_go()[1].first == 4600 * kMs);
  std::vector<int64_t> newest;
  t.for_each_visible(0, to + 1, INT64_MAX, [&](const TimelineSpan& s) { newest.push_back(s.t_begin_ns); });
  REQUIRE_FALSE(newest.empty());
  CHECK(t.let_go()[1].second == newest.front());
  CHECK(newest.back() == 1999 * 100 * kMs);
  // Let go of the window, and it goes like any other.
  t.hold_window(0, -1);
  for (int i = 2000; i < 2200; ++i) t.consume(at(i));
  CHECK(t.for_each_visible(0, from, to, [](const TimelineSpan&) {}) == 0);
  CHECK(t.let_go().size() == 1);  // one stretch from the start again
}

TEST_CASE("timeline: a held window keeps when its collectives' last rank arrived") {
  constexpr int64_t kMs = 1'000'000;
  TimelineModel t;
  auto begin_of = [&](int64_t id, int rank) {
    Event e = span(EventKind::CollectiveBegin, rank, 1 + id * kMs, 1 + id * kMs);
    e.collective_id = id;
    return e;
  };
  Event run_begin = span(EventKind::RunBegin, 0, 1, 1);  // a world of one rank
  run_begin.value = 1;
  t.consume(run_begin);
  t.hold_window(100 * kMs, 110 * kMs);  // collectives 100-110
  for (int64_t id = 0; id < 20000; ++id) t.consume(begin_of(id, 0));
  // The straggler's hatching needs the arrivals of the collectives on screen: they are kept...
  CHECK(t.last_arrival_ns(105) >= 0);
  // ...while the oldest others went, to bound memory.
  CHECK(t.last_arrival_ns(20) < 0);
  CHECK(t.last_arrival_ns(19999) >= 0);
  // A window held over the whole run shows too many to hatch: the oldest go all the same, and
  // memory stays bounded.
  t.hold_window(0, INT64_MAX / 2);
  for (int64_t id = 20000; id < 60000; ++id) t.consume(begin_of(id, 0));
  CHECK(t.last_arrival_ns(30000) < 0);
  CHECK(t.last_arrival_ns(59999) >= 0);
}

TEST_CASE("after the world shrinks, the ranks that are gone keep their rows only while their spans are in view") {
  TimelineModel t;
  for (int rank = 0; rank < 8; ++rank) t.consume(span(EventKind::Forward, rank, 1000, 2000));  // 8 ranks
  for (int rank = 0; rank < 4; ++rank) t.consume(span(EventKind::Forward, rank, 9000, 10000));  // then 4
  CHECK(t.lanes() == 8);
  CHECK(t.lanes_in(0, 3000) == 8);
  CHECK(t.lanes_in(7000, 11000) == 4);   // relative to the first event, at 1000
  CHECK(t.lanes_in(0, 11000) == 8);      // a window over both shows both
  CHECK(t.lanes_in(50000, 60000) == 0);  // nothing in view
}

TEST_CASE("timeline: a live window ends where every rank of the set has been heard from") {
  TimelineModel t;
  Event run_begin = span(EventKind::RunBegin, 0, 1000, 1000);
  run_begin.value = 2;  // two ranks
  t.consume(run_begin);
  for (int step = 0; step < 5; ++step)  // rank 0's events are here up to 1000 + 5 * 1000
    t.consume(span(EventKind::Forward, 0, 1000 + step * 1000, 1500 + step * 1000));
  t.consume(span(EventKind::Forward, 1, 1000, 1500));  // rank 1's have reached only its first step
  CHECK(t.latest_ns() == 4500);
  CHECK(t.reported_ns(1'000'000) == 500);  // rank 1 heard up to 1500, relative 500
  CHECK(t.reported_ns(1000) == 3500);      // silent for longer than 1000 ns: not waited for
  // The window's last three forward passes of rank 0 begun before that edge: only its first one.
  CHECK(t.recent_steps_begin(3, 500) == 0);
  CHECK(t.recent_steps_begin(3) == 2000);
  t.consume(span(EventKind::Backward, 1, 4000, 5500));  // rank 1 catches up
  CHECK(t.reported_ns(1'000'000) == 4500);
}

TEST_CASE("timeline: the time a backward pass was held at the gate is told apart from its compute") {
  TimelineModel t;
  t.consume(span(EventKind::Forward, 0, 1000, 2000));
  // A short wait, then a minute-long one, both inside one backward pass (its bucket's all-reduce
  // runs there): the gate's events arrive first, the backward's when it ends.
  t.consume(span(EventKind::GateWait, 0, 2500, 3000));
  t.consume(span(EventKind::GateWait, 0, 4000, 60'000'004'000));
  t.consume(span(EventKind::Backward, 0, 2000, 60'000'005'000));
  t.consume(span(EventKind::GateWait, 1, 2500, 3000));  // another rank's: not this one's
  // Relative to the first event (1000): backward 1000..60,000,004,000, held 500 + 60,000,000,000.
  CHECK(t.gate_wait_within(0, 1000, 60'000'004'000) == 60'000'000'500);
  CHECK(t.gate_wait_within(0, 0, 1000) == 0);              // the forward pass: never held
  CHECK(t.gate_wait_within(0, 1700, 1800) == 100);         // a window inside the first wait
  CHECK(t.gate_wait_within(1, 1000, 60'000'004'000) == 500);
}

TEST_CASE("timeline: a collective whose end was dropped is not shown as a rank still waiting in it") {
  TimelineModel t;
  Event begin = span(EventKind::CollectiveBegin, 0, 1000, 1000);
  begin.collective_id = 5;
  t.consume(begin);  // its CollectiveEnd never arrives: the app fell behind and dropped it
  begin.collective_id = 6;
  begin.t_begin_ns = begin.t_end_ns = 2000;
  t.consume(begin);
  int open = 0;
  t.for_each_open_collective(0, [&](const TimelineSpan&) { ++open; });
  CHECK(open == 2);  // until a later one ends, either may still be running
  Event end = span(EventKind::CollectiveEnd, 0, 2000, 3000);
  end.collective_id = 6;
  t.consume(end);
  open = 0;
  t.for_each_open_collective(0, [&](const TimelineSpan&) { ++open; });
  CHECK(open == 0);  // #6 ended, so #5, begun before it on the same rank, has too
}

TEST_CASE("timeline: a span that arrives late finds its place, near the back or far from it") {
  TimelineModel t(1000);
  const int64_t origin = 1'000'000;  // times below are from the first span's begin
  for (int i = 0; i <= 100; ++i) t.consume(span(EventKind::Forward, 0, origin + i * 10, origin + i * 10 + 5));
  t.consume(span(EventKind::Backward, 0, origin + 985, origin + 990));  // two spans back: walked to
  t.consume(span(EventKind::Backward, 0, origin + 15, origin + 20));    // 99 back: past the walk, searched
  t.consume(span(EventKind::Backward, 0, origin + 1000, origin + 1003));  // the last one's begin: after it
  std::vector<std::pair<int64_t, SpanKind>> seen;
  t.for_each_visible(0, 0, INT64_MAX, [&](const TimelineSpan& s) { seen.emplace_back(s.t_begin_ns, s.kind); });
  REQUIRE(seen.size() == 104);
  for (size_t i = 1; i < seen.size(); ++i) CHECK(seen[i - 1].first <= seen[i].first);
  CHECK(seen[2] == std::pair<int64_t, SpanKind>{15, SpanKind::Backward});
  CHECK(seen[100] == std::pair<int64_t, SpanKind>{985, SpanKind::Backward});
  CHECK(seen[102] == std::pair<int64_t, SpanKind>{1000, SpanKind::Forward});
  CHECK(seen[103] == std::pair<int64_t, SpanKind>{1000, SpanKind::Backward});
}
