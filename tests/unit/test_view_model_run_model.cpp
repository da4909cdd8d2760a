// The run model: generations across a live world change, progress per rank, and the event feed.
#include <doctest/doctest.h>

#include <map>

#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "engine/view_model/event_feed.h"
#include "engine/view_model/run_model.h"
#include "tests/support/run_events.h"

using namespace ringlab;
using namespace ringlab::view_model;

namespace {
Event make(EventKind kind, int rank, int64_t step, int64_t collective = -1) {
  Event e;
  e.kind = kind;
  e.rank = rank;
  e.step = step;
  e.epoch = 0;
  e.collective_id = collective;
  e.value = 0.5;
  return e;
}
}  // namespace

TEST_CASE("a live change from 4 ranks to 2 opens a new generation") {
  RunModel m;
  for (int r = 0; r < 4; ++r) m.consume(test::run_begin_event(r, 4, "gloo"));
  for (int r = 0; r < 4; ++r) {
    m.consume(make(EventKind::CollectiveBegin, r, 0, 0));
    m.consume(make(EventKind::StepEnd, r, 0));
  }
  CHECK(m.world_size() == 4);
  CHECK(m.loss().label == "4 ranks, gloo, ring, lr 0.03");
  for (int r = 0; r < 2; ++r) m.consume(test::run_begin_event(r, 2, "mpi"));
  m.consume(make(EventKind::CollectiveBegin, 0, 1, 0));
  m.consume(make(EventKind::StepEnd, 0, 1));
  CHECK(m.world_size() == 2);
  REQUIRE(m.generations().size() == 2);
  CHECK(m.current_generation()->job.backend == "mpi");
  // Collective 0 of each generation is kept apart.
  CHECK(m.collectives().size() == 2);
  CHECK(m.collectives().find({1, 0})->world_size == 4);
  CHECK(m.collectives().find({2, 0})->world_size == 2);
  REQUIRE(m.loss().changes.size() == 1);
  CHECK(m.loss().changes[0].world_size == 2);
  CHECK(m.latest_step() == 1);
}

TEST_CASE("growing the world live: the ranks it adds belong to the new generation, whichever begins first") {
  RunModel m;
  for (int r = 0; r < 4; ++r) m.consume(test::run_begin_event(r, 4, "gloo"));
  // 4 -> 8: a new rank may announce itself before the old ones restart.
  for (int r : {5, 0, 4, 1, 2, 6, 3, 7}) m.consume(test::run_begin_event(r, 8, "gloo"));
  REQUIRE(m.generations().size() == 2);
  CHECK(m.current_generation()->world_size == 8);
  for (int r = 0; r < 8; ++r) m.consume(make(EventKind::CollectiveBegin, r, 5, 2));
  REQUIRE(m.collectives().size() == 1);
  const CollectiveRecord* c = m.collectives().find({2, 2});
  REQUIRE(c != nullptr);
  CHECK(c->world_size == 8);
  for (int r = 0; r < 8; ++r) CHECK(c->ranks[r].began);
  Event shard = make(EventKind::SamplerShard, 6, 5);
  shard.indices = {1, 2, 3};
  m.consume(shard);
  CHECK(m.sampler().shards({2, 0}) != nullptr);  // rank 6's shard is the new world's
  // A restart of the same world (every rank begins again) opens a third one.
  for (int r = 0; r < 8; ++r) m.consume(test::run_begin_event(r, 8, "gloo"));
  CHECK(m.generations().size() == 3);
}

TEST_CASE("the run's step count survives a change whose new world has not trained yet, and a restart rewinds it") {
  // Paused, the class changes 4 ranks to 2, then to 4 again: each new world starts and waits at
  // the gate before its first step. The status said "4 ranks · no step yet" (every rank of the
  // newest world had begun afresh) while a shrunk world kept the old ranks' steps.
  RunModel m;
  for (int r = 0; r < 4; ++r) m.consume(test::run_begin_event(r, 4, "gloo"));
  for (int r = 0; r < 4; ++r) m.consume(make(EventKind::StepEnd, r, 41));
  for (int r = 0; r < 2; ++r) m.consume(test::run_begin_event(r, 2, "gloo"));
  CHECK(m.latest_step() == 41);
  for (int r = 0; r < 4; ++r) m.consume(test::run_begin_event(r, 4, "gloo"));
  REQUIRE(m.generations().size() == 3);
  CHECK(m.latest_step() == 41);
  m.consume(make(EventKind::StepEnd, 0, 42));
  CHECK(m.latest_step() == 42);
  // A restart from an epoch checkpoint of 40 steps in 5 epochs: steps 40 and on are done again.
  Event restart = make(EventKind::Restart, -1, 40);
  restart.epoch = 5;
  m.consume(restart);
  for (int r = 0; r < 4; ++r) m.consume(test::run_begin_event(r, 4, "gloo"));
  CHECK(m.latest_step() == 39);
  CHECK(m.latest_epoch() == 4);
}

TEST_CASE("run end, errors and ingest from a store") {
  EventStore store;
  store.emit(test::run_begin_event(0, 2, "gloo"));
  store.emit(test::run_begin_event(1, 2, "gloo"));
  Event err = make(EventKind::Error, 1, -1);
  err.text = "peer gone";
  store.emit(err);
  RunModel m;
  CHECK(m.ingest(store) == 3);
  CHECK(m.errors().back() == "rank 1: peer gone");
  err.text = "rank 1: step 3: RuntimeError: a failure on purpose";  // a script's error names its rank
  store.emit(err);
  CHECK(m.ingest(store) == 1);
  CHECK(m.errors().back() == "rank 1: step 3: RuntimeError: a failure on purpose");  // not "rank 1: rank 1:"
  CHECK_FALSE(m.run_ended());
  store.emit(make(EventKind::RunEnd, 0, -1));
  store.emit(make(EventKind::RunEnd, 1, -1));
  CHECK(m.ingest(store) == 2);
  CHECK(m.run_ended());
  CHECK(m.ingest(store) == 0);
  // A cleared store starts the model over.
  store.clear();
  store.emit(test::run_begin_event(0, 1, "gloo"));
  m.ingest(store);
  CHECK(m.world_size() == 1);
  CHECK(m.events_seen() == 1);
}

TEST_CASE("a run trained to the end only when every rank's RunEnd says done, not stopped") {
  const auto end = [](int rank, const char* how) {
    Event e = make(EventKind::RunEnd, rank, -1);
    e.text = how;
    return e;
  };
  for (const char* rank1 : {"done", "stopped"}) {
    CAPTURE(rank1);
    RunModel m;
    m.consume(test::run_begin_event(0, 2, "gloo"));
    m.consume(test::run_begin_event(1, 2, "gloo"));
    m.consume(end(0, "done"));
    CHECK_FALSE(m.trained_to_the_end());  // rank 1 has not ended yet
    m.consume(end(1, rank1));
    CHECK(m.run_ended());
    CHECK(m.trained_to_the_end() == (std::string(rank1) == "done"));
  }
}

TEST_CASE("the event feed hands every event to the reader once, in order") {
  EventFeed feed(/*max_queued=*/100000);
  std::thread writer([&] {
    for (int i = 0; i < 5000; ++i) feed.emit(make(EventKind::StepEnd, 0, i));
  });
  std::vector<Event> got;
  while (got.size() < 5000) feed.drain(got, 777);
  writer.join();
  for (int i = 0; i < 5000; ++i) REQUIRE(got[i].step == i);
  CHECK(feed.queued() == 0);
  CHECK(feed.overflowed() == 0);

  EventFeed small(/*max_queued=*/2);
  for (int i = 0; i < 3; ++i) small.emit(make(EventKind::StepEnd, 0, i));
  CHECK(small.queued() == 2);
  CHECK(small.overflowed() == 1);
  std::vector<Event> first_two;
  CHECK(small.drain(first_two, 10) == 2);
  CHECK(first_two[1].step == 1);  // the newest was the one lost
  small.emit(make(EventKind::StepEnd, 0, 3));
  CHECK(small.queued() == 1);
  small.discard_queued();  // a new run starts: the last one's losses are not its own
  CHECK(small.queued() == 0);
  CHECK(small.overflowed() == 0);
}

// A fast run on MPI outpaces the window: past the first level the feed takes the details of one
// step in 2, the same steps from every rank, so each all-reduce it keeps is whole.
TEST_CASE("a reader behind gets whole steps, fewer of them, and every step's count and loss") {
  EventFeed feed(/*max_queued=*/1000, /*thin_above=*/12);
  // One event at a time, or a rank's step at once, as the event server hands on what one read of
  // its connection brought (emit_all): the same events kept.
  bool at_once = false;
  SUBCASE("one by one") { at_once = false; }
  SUBCASE("a rank's step at once") { at_once = true; }
  const auto one_step = [&](int64_t step) {
    for (int r = 0; r < 2; ++r) {
      std::vector<Event> read = {make(EventKind::StepBegin, r, step), make(EventKind::Forward, r, step),
                                 make(EventKind::CollectiveBegin, r, step, step),
                                 make(EventKind::ChunkTransfer, r, step, step),
                                 make(EventKind::CollectiveEnd, r, step, step), make(EventKind::StepEnd, r, step)};
      if (at_once) {
        feed.emit_all(read);
        CHECK(read.empty());
      } else {
        for (Event& e : read) feed.emit(std::move(e));
      }
    }
  };
  one_step(0);  // 12 queued, all of step 0: from here on a step's details are thinned
  CHECK(feed.queued() == 12);
  CHECK(feed.thinning() == 2);
  for (int64_t step = 1; step < 4; ++step) one_step(step);
  CHECK(feed.thinning() == 4);  // 12 + 4 + 12 + 4 queued: past 12, then past 24
  std::vector<Event> got;
  feed.drain(got, 1000);
  std::map<int64_t, int> details, ends;
  for (const Event& e : got) (EventFeed::is_step_detail(e) ? details : ends)[e.step] += e.kind == EventKind::StepEnd || EventFeed::is_step_detail(e);
  CHECK(details == std::map<int64_t, int>{{0, 8}, {2, 8}});  // step 1 (one in 2) and 3 (one in 4) left out, whole
  CHECK(ends == std::map<int64_t, int>{{0, 2}, {1, 2}, {2, 2}, {3, 2}});  // every rank's every StepEnd
  // The ends of the steps left out say so, for the Timeline to draw them as steps that ran unseen.
  std::map<int64_t, int> marked;
  for (const Event& e : got)
    if (e.kind == EventKind::StepEnd) marked[e.step] += ringlab::step_details_left_out(e);
  CHECK(marked == std::map<int64_t, int>{{0, 0}, {1, 2}, {2, 0}, {3, 2}});
  CHECK(feed.thinned() == 16);
  CHECK(feed.overflowed() == 0);
  CHECK(feed.thinning() == 1);  // the reader has caught up: said in the past tense from here
  one_step(5);  // every detail again
  CHECK(feed.queued() == 12);
  one_step(7);  // behind again: step 7 left out ...
  CHECK(feed.queued() == 16);
  feed.keep_every_step(true);  // ... but not while the class steps through at the gate
  one_step(9);
  CHECK(feed.queued() == 28);
  feed.keep_every_step(false);
  one_step(11);
  CHECK(feed.queued() == 32);
  feed.emit(make(EventKind::Error, 1, 12));  // after an error every step is whole, for the Failure lab
  one_step(13);
  CHECK(feed.queued() == 45);
  CHECK(feed.thinning() == 1);
  Event demo = make(EventKind::ChunkTransfer, 0, -1, 0);  // the [1, 2, 3] demo, before any step
  CHECK_FALSE(EventFeed::is_step_detail(demo));
  CHECK_FALSE(EventFeed::is_step_detail(make(EventKind::SamplerShard, 0, 5)));
  feed.discard_queued();
  CHECK(feed.thinned() == 0);
}

TEST_CASE("the live step time: rank 0's last second of steps, afresh for a new set of workers") {
  using ringlab::view_model::StepRate;
  StepRate rate;
  CHECK(rate.us_per_step() == 0.0);
  rate.add(1'000'000, 0);
  CHECK(rate.us_per_step() == 0.0);  // one step: no time between two yet
  for (int64_t s = 1; s <= 3000; ++s) rate.add(1'000'000 + s * 500'000, s);  // 500 µs a step for 1.5 s
  CHECK(rate.us_per_step() == doctest::Approx(500.0));
  // The window moves on: a slower second replaces the faster one.
  const int64_t t0 = 1'000'000 + 3000 * 500'000;
  for (int64_t s = 1; s <= 1100; ++s) rate.add(t0 + s * 1'000'000, 3000 + s);
  CHECK(rate.us_per_step() == doctest::Approx(1000.0));
  // A pause of 5 s: not averaged in; the pace after it is measured afresh.
  const int64_t t1 = t0 + 1100 * 1'000'000 + 5'000'000'000;
  rate.add(t1, 4101);
  CHECK(rate.us_per_step() == 0.0);
  rate.add(t1 + 600'000, 4102);
  CHECK(rate.us_per_step() == doctest::Approx(600.0));
  // A slow job's steps (300 ms each) are its pace, not stalls.
  StepRate slow;
  for (int64_t s = 0; s < 5; ++s) slow.add(s * 300'000'000, s);
  CHECK(slow.us_per_step() == doctest::Approx(300'000.0));
  // Steps counted again from a checkpoint (a live change): the measure starts over.
  rate.add(t1 + 2'000'000'000, 10);
  CHECK(rate.us_per_step() == 0.0);
  rate.add(t1 + 2'000'200'000, 11);
  CHECK(rate.us_per_step() == doctest::Approx(200.0));
}

TEST_CASE("the run model's live step time is rank 0's, of the newest set of workers") {
  RunModel m;
  for (int r = 0; r < 2; ++r) m.consume(test::run_begin_event(r, 2, "gloo"));
  for (int64_t s = 0; s < 10; ++s)
    for (int r = 0; r < 2; ++r) {
      m.consume(make(EventKind::StepBegin, r, s));
      Event e = make(EventKind::StepEnd, r, s);
      e.t_end_ns = s * (r == 0 ? 400'000 : 900'000);  // rank 1's clock says other things
      e.t_begin_ns = e.t_end_ns - (r == 0 ? 350'000 : 800'000);
      m.consume(e);
    }
  CHECK(m.live_us_per_step() == doctest::Approx(400.0));
  // Until the workers say, rank 0's steps timed from begin to end (between them: the evaluation).
  CHECK(m.us_per_step() == doctest::Approx(350.0));
  Event end = make(EventKind::RunEnd, 0, 10);
  end.value = 351.5;  // the workers' exact figure replaces it
  m.consume(end);
  CHECK(m.us_per_step() == doctest::Approx(351.5));
  m.consume(test::run_begin_event(0, 1, "gloo"));  // a live change: the old set's pace says nothing now
  CHECK(m.live_us_per_step() == 0.0);
  CHECK(m.us_per_step() == 0.0);
}

// Stop pressed while paused ends the workers at once, held at the gate: their RunEnd, with their
// step time, never comes. The status's figure is then rank 0's steps timed from their events, the
// pause (a gate wait inside the step it held) left out as the workers leave it out.
TEST_CASE("a run's step time leaves the waits at the gate out, as the workers' own does") {
  RunModel m;
  for (int r = 0; r < 2; ++r) m.consume(test::run_begin_event(r, 2, "gloo"));
  Event before = make(EventKind::GateWait, 0, -1);  // the demo all-reduce's, before the first step
  before.t_begin_ns = 0;
  before.t_end_ns = 9'000'000'000;
  m.consume(before);
  for (int64_t s = 0; s < 4; ++s) {
    const int64_t t0 = 10'000'000'000 + s * 1'000'000'000;
    Event begin = make(EventKind::StepBegin, 0, s);
    begin.t_begin_ns = begin.t_end_ns = t0;
    m.consume(begin);
    int64_t held = 0;
    if (s == 2) {  // paused here for 700 ms
      Event wait = make(EventKind::GateWait, 0, s);
      wait.t_begin_ns = t0 + 100'000;
      wait.t_end_ns = wait.t_begin_ns + 700'000'000;
      held = 700'000'000;
      m.consume(wait);
    }
    Event e = make(EventKind::StepEnd, 0, s);
    e.t_begin_ns = t0;
    e.t_end_ns = t0 + 500'000 + held;
    m.consume(e);
  }
  CHECK(m.us_per_step() == doctest::Approx(500.0));
  CHECK(m.ungated_steps() == 3);  // step 2 was held
  CHECK(m.ungated_us_per_step() == doctest::Approx(500.0));
  // The pause is no slow step: with it left out the steps are alike, and the mean says it all.
  CHECK_FALSE(m.others_us_per_step().has_value());
}

// A script whose rank 1 slept 25 s before training: rank 0's first step waited all that time in
// its first all-reduce, and the mean of 16 steps (1.56 s) describes none of them. The slowest step
// is named, with the mean of the others.
namespace {
// Rank 0's sixteen steps of 2 ranks, one after another, step `slow` taking `slow_ns`, the others 1 ms.
RunModel sixteen_steps(int64_t slow, int64_t slow_ns) {
  RunModel m;
  for (int r = 0; r < 2; ++r) m.consume(test::run_begin_event(r, 2, "gloo"));
  int64_t t0 = 1'000'000'000;
  for (int64_t s = 0; s < 16; ++s) {
    Event begin = make(EventKind::StepBegin, 0, s);
    begin.t_begin_ns = begin.t_end_ns = t0;
    m.consume(begin);
    Event e = make(EventKind::StepEnd, 0, s);
    e.t_begin_ns = t0;
    e.t_end_ns = t0 + (s == slow ? slow_ns : 1'000'000);
    m.consume(e);
    t0 = e.t_end_ns + 1000;
  }
  return m;
}
}  // namespace

TEST_CASE("one step far slower than the rest is named, with the others' mean") {
  const RunModel m = sixteen_steps(0, 25'000'000'000);
  CHECK(m.slowest_step().step == 0);
  CHECK(m.slowest_step().ns == 25'000'000'000);
  REQUIRE(m.others_us_per_step().has_value());
  CHECK(*m.others_us_per_step() == doctest::Approx(1000.0));
  // Steps that differ by less than that read right from their mean: a step twice as slow as the
  // others among sixteen moves the mean by 6%.
  const RunModel alike = sixteen_steps(5, 2'000'000);
  CHECK(alike.slowest_step().step == 5);
  CHECK_FALSE(alike.others_us_per_step().has_value());
}

// Stepped through for a few all-reduces, then trained at full speed: a held step's time keeps the
// ranks' waits for each other to see each release (its own wait taken out, 20 ms more here), so the
// figure a stepped-through run shows is its steps the gate never held.
TEST_CASE("the steps the gate never held are timed apart from the held ones") {
  RunModel m;
  for (int r = 0; r < 2; ++r) m.consume(test::run_begin_event(r, 2, "gloo"));
  int64_t t0 = 1'000'000'000;
  for (int64_t s = 0; s < 10; ++s) {
    Event begin = make(EventKind::StepBegin, 0, s);
    begin.t_begin_ns = begin.t_end_ns = t0;
    m.consume(begin);
    const bool held = s < 2;  // the first two steps stepped through
    if (held) {
      Event wait = make(EventKind::GateWait, 0, s);
      wait.t_begin_ns = t0 + 100'000;
      wait.t_end_ns = wait.t_begin_ns + 2'000'000'000;
      m.consume(wait);
    }
    Event e = make(EventKind::StepEnd, 0, s);
    e.t_begin_ns = t0;
    e.t_end_ns = t0 + 300'000 + (held ? 2'000'000'000 + 20'000'000 : 0);
    m.consume(e);
    t0 = e.t_end_ns + 1000;
  }
  CHECK(m.ungated_steps() == 8);
  CHECK(m.ungated_us_per_step() == doctest::Approx(300.0));
  CHECK(m.us_per_step() == doctest::Approx((10 * 300.0 + 2 * 20'000.0) / 10));  // the held steps' waits for peers stay in
}

// A restart after a failure: the failed attempt's errors stay to read, marked as the generation
// they came from (the controls draw them as what the run recovered from, not in red as now).
TEST_CASE("errors are marked with the generation they came from") {
  RunModel m;
  for (int r = 0; r < 2; ++r) m.consume(test::run_begin_event(r, 2, "gloo"));
  Event error = make(EventKind::Error, 1, 5);
  error.text = "ring_allreduce: step 5: Connection closed by peer";
  m.consume(error);
  REQUIRE(m.errors().size() == 1);
  CHECK(m.errors_generation() == m.current_generation()->index);
  for (int r = 0; r < 2; ++r) m.consume(test::run_begin_event(r, 2, "gloo"));  // restarted
  CHECK(m.errors().size() == 1);
  CHECK(m.errors_generation() < m.current_generation()->index);
}

TEST_CASE("a collective keeps each rank's input and each transfer's values; the event keeps its own") {
  RunModel m;
  for (int r = 0; r < 2; ++r) {
    Event begin = make(EventKind::CollectiveBegin, r, 0, 7);
    begin.values = {1.0f + r, 2.0f, 3.0f};
    begin.bytes = 12;
    Event chunk = make(EventKind::ChunkTransfer, r, 0, 7);
    chunk.values = {10.0f * (r + 1)};
    chunk.src = 1 - r;
    chunk.dst = r;
    m.consume(begin);
    m.consume(chunk);
    CHECK(begin.values.size() == 3);  // a const event keeps what it carries
  }
  REQUIRE(m.collectives().size() == 1);
  const ringlab::view_model::CollectiveRecord* rec = &m.collectives().at(0);
  CHECK(rec->key.id == 7);
  REQUIRE(rec->ranks.size() == 2);
  CHECK(rec->ranks[1].input == std::vector<float>{2.0f, 2.0f, 3.0f});
  REQUIRE(rec->transfers.size() == 2);
  CHECK(rec->transfers[1].values == std::vector<float>{20.0f});
}
