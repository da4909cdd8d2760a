// Stepping through a ring all-reduce the way a class does: gated workers that take a ring step
// only when Next lets them, a screen that catches up with what they did, Previous that goes back
// over it, and the words on screen at every position, for rings of 3, 4 and 8 ranks.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/view_model/collective_log.h"
#include "engine/view_model/ring_state.h"
#include "engine/view_model/step_through.h"

using namespace ringlab;
using namespace ringlab::view_model;

namespace {

// Workers held at the step-through gate: each release lets every rank take one ring step, and
// the events they would report reach the log. Rank r starts with (r + 1) * (i + 1).
class GatedRing {
 public:
  GatedRing(int ranks, int64_t id) : n_(ranks), id_(id), buf_(ranks) {
    for (int r = 0; r < n_; ++r) {
      for (int i = 0; i < 2 * n_; ++i) buf_[r].push_back(float((r + 1) * (i + 1)));
      Event e = event(EventKind::CollectiveBegin, r);
      e.bytes = 2 * n_ * 4;
      e.text = "ring";
      e.values = buf_[r];
      log_.consume(e, 1, n_);
    }
  }

  CollectiveLog& log() { return log_; }
  const CollectiveLog& log() const { return log_; }
  int steps_taken() const { return taken_; }

  // The next collective, begun by every rank (they then wait before its first step).
  void begin_next() {
    ++id_;
    taken_ = 0;
    for (int r = 0; r < n_; ++r) {
      for (int i = 0; i < 2 * n_; ++i) buf_[r][i] = float((r + 1) * (i + 1));
      Event e = event(EventKind::CollectiveBegin, r);
      e.bytes = 2 * n_ * 4;
      e.text = "ring";
      e.values = buf_[r];
      log_.consume(e, 1, n_);
    }
  }

  void release(int releases) {
    for (int k = 0; k < releases && taken_ < 2 * (n_ - 1); ++k) take_step();
  }

  // `count` more all-reduces, each begun and taken to its end: a run going on at full speed.
  void finish_next(int count) {
    for (int i = 0; i < count; ++i) {
      begin_next();
      release(2 * (n_ - 1));
    }
  }

 private:
  Event event(EventKind kind, int rank) const {
    Event e;
    e.kind = kind;
    e.rank = rank;
    e.collective_id = id_;
    e.bucket = 0;
    return e;
  }

  // Reduce-scatter step s: rank r receives chunk (r - s - 1) mod N from its left neighbour and
  // adds it; all-gather step s: it receives chunk (r - s) mod N and keeps it.
  void take_step() {
    const bool scatter = taken_ < n_ - 1;
    const int s = scatter ? taken_ : taken_ - (n_ - 1);
    const auto before = buf_;
    for (int r = 0; r < n_; ++r) {
      const int left = (r + n_ - 1) % n_;
      const int c = ((r - s - (scatter ? 1 : 0)) % n_ + n_) % n_;
      for (int i = 2 * c; i < 2 * c + 2; ++i) buf_[r][i] = scatter ? before[r][i] + before[left][i] : before[left][i];
      Event e = event(EventKind::ChunkTransfer, r);
      e.phase = static_cast<int8_t>(scatter ? 0 : 1);
      e.ring_step = s;
      e.chunk = c;
      e.segment = 0;
      e.src = left;
      e.dst = r;
      e.bytes = 8;
      e.values.assign(buf_[r].begin() + 2 * c, buf_[r].begin() + 2 * c + 2);
      log_.consume(e, 1, n_);
    }
    if (++taken_ == 2 * (n_ - 1))
      for (int r = 0; r < n_; ++r) log_.consume(event(EventKind::CollectiveEnd, r), 1, n_);
  }

  int n_;
  int64_t id_;
  int taken_ = 0;
  std::vector<std::vector<float>> buf_;
  CollectiveLog log_;
};

// Rank `rank` begins collective `id` (16 bytes) with `algorithm`: "ring", or "broadcast".
Event collective_begin(int rank, int64_t id, const char* algorithm) {
  Event b;
  b.kind = EventKind::CollectiveBegin;
  b.rank = rank;
  b.collective_id = id;
  b.bytes = 16;
  b.text = algorithm;
  return b;
}

// Two finished 3-rank all-reduces, #7 and #8, as a run leaves them.
GatedRing two_finished_rings() {
  GatedRing ring(3, 7);
  ring.release(4);
  ring.finish_next(1);  // #8
  return ring;
}

// Replay, on the first of them, before its first step.
StepThrough replaying_first(const GatedRing& ring) {
  StepThrough st;
  set_mode(st, RingMode::Replay);
  show_collective(st, ring.log().at(0));
  return st;
}

// A class at the projector: presses a key, then lets the animation run for a few seconds,
// while the gate's releases reach the workers.
struct Classroom {
  explicit Classroom(int ranks) : ring(ranks, 7) {
    st.mode = RingMode::Gated;
    st.playing = false;
    frames(1);
  }
  void frames(int count) {
    for (int i = 0; i < count; ++i) ring.release(advance(st, ring.log(), true, 0.1).gate_releases);
  }
  void next() {
    ring.release(step_forward(st, ring.log(), true).gate_releases);
    frames(40);
  }
  void previous() {
    step_back(st, ring.log());
    frames(40);
  }
  RingFrame frame() const {
    const CollectiveRecord* shown = shown_collective(st, ring.log());
    REQUIRE(shown != nullptr);
    return ring_frame(*shown, st.position);
  }
  GatedRing ring;
  StepThrough st;
};

}  // namespace

TEST_CASE("before step 1 the screen says each rank holds its own input, not that the all-reduce is done") {
  Classroom c(4);
  CHECK(c.ring.steps_taken() == 0);
  const RingFrame f = c.frame();
  CHECK(f.position == 0);
  CHECK(f.total_steps == 0);
  CHECK(f.expected_steps == 6);
  CHECK_FALSE(f.done);
  CHECK_FALSE(f.final_checked);  // no verdict on the sum before the ring has run
  CHECK(f.on_screen == "Before ring step 1: each rank holds its own input");
  CHECK(f.banner == "Reduce-scatter, step 1 of 3");
}

TEST_CASE("gated 4-rank ring: every position from 0 to 6 and back, in words and in releases") {
  Classroom c(4);
  const std::vector<std::string> on_screen = {
      "Before ring step 1: each rank holds its own input",
      "After ring step 1 of 6 (reduce-scatter 1 of 3)",
      "After ring step 2 of 6 (reduce-scatter 2 of 3)",
      "After ring step 3 of 6 (reduce-scatter 3 of 3)",
      "After ring step 4 of 6 (all-gather 1 of 3)",
      "After ring step 5 of 6 (all-gather 2 of 3)",
      "All-reduce done: every rank holds the sum"};
  const std::vector<std::string> next = {"Reduce-scatter, step 1 of 3", "Reduce-scatter, step 2 of 3",
                                         "Reduce-scatter, step 3 of 3", "All-gather, step 1 of 3",
                                         "All-gather, step 2 of 3",     "All-gather, step 3 of 3", ""};
  for (int p = 0; p <= 6; ++p) {
    CAPTURE(p);
    const RingFrame f = c.frame();
    CHECK(f.position == p);
    CHECK(c.ring.steps_taken() == p);  // the workers took exactly the steps on screen
    CHECK(f.on_screen == on_screen[p]);
    CHECK(f.banner == next[p]);
    CHECK(f.done == (p == 6));
    if (p < 6) c.next();
  }
  CHECK(c.frame().final_checked);
  CHECK(c.frame().final_matches);
  for (int p = 5; p >= 0; --p) {  // back over what is recorded; nobody is released
    c.previous();
    CAPTURE(p);
    CHECK(c.frame().position == p);
    CHECK(c.frame().on_screen == on_screen[p]);
    CHECK(c.ring.steps_taken() == 6);
  }
}

TEST_CASE("Next x3 then Previous shows step 2; Next first catches the view up, then opens the gate") {
  Classroom c(4);
  c.next();
  c.next();
  c.next();
  CHECK(c.frame().position == 3);
  c.previous();
  CHECK(c.frame().position == 2);
  CHECK(c.frame().on_screen == "After ring step 2 of 6 (reduce-scatter 2 of 3)");
  CHECK(c.ring.steps_taken() == 3);
  c.next();  // catches up: step 3 was taken already
  CHECK(c.frame().position == 3);
  CHECK(c.ring.steps_taken() == 3);
  c.next();  // now the workers take step 4
  CHECK(c.frame().position == 4);
  CHECK(c.ring.steps_taken() == 4);
}

TEST_CASE("the links are labelled with the bytes sent up to the step on screen") {
  Classroom c(4);
  CHECK(c.frame().links_so_far.empty());
  c.next();
  c.next();
  const RingFrame f = c.frame();
  REQUIRE(f.links_so_far.size() == 4);
  for (const LinkTraffic& link : f.links_so_far) CHECK(link.bytes == 16);  // two 8-byte chunks
  for (const LinkTraffic& link : f.links) CHECK(link.bytes == 16);         // all that is recorded so far
}

TEST_CASE("after the last step Next moves to the next all-reduce before its first step, as Previous does back") {
  Classroom c(4);
  for (int i = 0; i < 6; ++i) c.next();
  const CollectiveKey first = c.st.selected;
  c.ring.begin_next();  // the workers reach the next all-reduce and wait before its first step
  c.next();             // the next one, before its first step: nobody released yet
  CHECK(c.st.selected.id == first.id + 1);
  CHECK(c.frame().position == 0);
  CHECK(c.frame().on_screen == "Before ring step 1: each rank holds its own input");
  CHECK(c.ring.steps_taken() == 0);
  c.next();  // now the workers take its first step
  CHECK(c.frame().position == 1);
  CHECK(c.ring.steps_taken() == 1);
  c.previous();
  CHECK(c.frame().position == 0);
  c.previous();  // from step 0 back into the all-reduce before, at its end
  CHECK(c.st.selected == first);
  CHECK(c.frame().done);
  c.next();  // and forward over the same positions: before the first step, then the step taken
  CHECK(c.st.selected.id == first.id + 1);
  CHECK(c.frame().position == 0);
  c.next();
  CHECK(c.frame().position == 1);
  CHECK(c.ring.steps_taken() == 1);  // nobody released: the screen only caught up
}

TEST_CASE("Next pressed before the next all-reduce is recorded shows it before its first step once it arrives") {
  Classroom c(4);
  for (int i = 0; i < 6; ++i) c.next();
  const CollectiveKey first = c.st.selected;
  CHECK(step_forward(c.st, c.ring.log(), true).gate_releases == 0);  // the workers come to its gate by themselves
  c.frames(5);
  CHECK(c.st.selected == first);  // nothing newer to show yet
  c.ring.begin_next();
  c.frames(40);
  CHECK(c.st.selected.id == first.id + 1);
  CHECK(c.frame().position == 0);
  CHECK(c.ring.steps_taken() == 0);
  c.next();
  CHECK(c.frame().position == 1);
  CHECK(c.ring.steps_taken() == 1);
}

TEST_CASE("quick Next presses past an all-reduce's end, before the next one is recorded, each count") {
  // A presenter's clicker pressed 80 ms apart: the last step's press, the press that moves on to
  // the next all-reduce, and two more before the workers have reported it. Those two let its
  // first two steps go once it arrives (they were lost, and 12 quick presses took 8 steps).
  Classroom c(4);
  for (int i = 0; i < 6; ++i) {
    c.ring.release(step_forward(c.st, c.ring.log(), true).gate_releases);
    c.frames(1);
  }
  const CollectiveKey first = c.st.selected;
  for (int i = 0; i < 3; ++i) {
    CHECK(step_forward(c.st, c.ring.log(), true).gate_releases == 0);  // nothing recorded to release yet
    c.frames(1);
  }
  CHECK(c.st.selected == first);
  c.ring.begin_next();
  c.frames(40);
  CHECK(c.st.selected.id == first.id + 1);
  CHECK(c.ring.steps_taken() == 2);
  CHECK(c.frame().position == 2);
  c.previous();  // and back over the same positions
  CHECK(c.frame().position == 1);
}

TEST_CASE("Next pressed before the workers' first all-reduce is recorded is not lost") {
  // F5 then Right at once: the press comes before the workers have reported anything, and in
  // the same frame as F5 it comes even before the run is started (begin_run).
  StepThrough st;
  st.mode = RingMode::Gated;
  st.playing = false;
  const CollectiveLog nothing_yet;
  CHECK(step_forward(st, nothing_yet, false).gate_releases == 0);
  begin_run(st);
  CHECK(advance(st, nothing_yet, true, 0.1).gate_releases == 0);
  GatedRing ring(4, 7);  // the workers begin their first all-reduce and wait at its gate
  const int released = advance(st, ring.log(), true, 0.1).gate_releases;
  CHECK(released == 1);
  ring.release(released);
  for (int i = 0; i < 40; ++i) ring.release(advance(st, ring.log(), true, 0.1).gate_releases);
  CHECK(ring.steps_taken() == 1);
  CHECK(st.position == 1);
}

TEST_CASE("switched to step-through mid-run, the screen shows the all-reduce the workers are held in") {
  // The gate reaches the workers a few dozen fast all-reduces after the switch: the screen goes
  // with them until then, so Next steps where they are, not through every all-reduce between.
  GatedRing ring(4, 7);
  ring.release(6);
  StepThrough st;  // following live
  for (int i = 0; i < 3; ++i) {
    ring.finish_next(2);
    advance(st, ring.log(), true, 0.1);
  }
  REQUIRE(set_mode(st, RingMode::Gated).set_gated == std::optional<bool>(true));
  advance(st, ring.log(), true, 0.1);
  ring.finish_next(30);  // still running until the gate reaches them
  advance(st, ring.log(), true, 0.1);
  ring.begin_next();
  ring.release(2);       // held at ring step 2 of this one
  for (int i = 0; i < 5; ++i) CHECK(advance(st, ring.log(), true, 0.1).gate_releases == 0);
  const CollectiveRecord* shown = shown_collective(st, ring.log());
  REQUIRE(shown != nullptr);
  CHECK(shown->key.id == 7 + 6 + 30 + 1);
  CHECK(st.position == 0);
  // Next catches the screen up over the two steps they took, then lets them take the third.
  int released = 0;
  for (int press = 0; press < 3; ++press) {
    released += step_forward(st, ring.log(), true).gate_releases;
    for (int i = 0; i < 40; ++i) released += advance(st, ring.log(), true, 0.1).gate_releases;
  }
  CHECK(released == 1);
  CHECK(shown_collective(st, ring.log())->key.id == 7 + 6 + 30 + 1);  // the screen stayed with the workers
}

TEST_CASE("Play in gated mode goes on into the next all-reduce, stopping before its first step like Next") {
  Classroom c(3);
  toggle_play(c.st);
  c.st.speed = 4;
  c.frames(200);
  CHECK(c.ring.steps_taken() == 4);
  c.ring.begin_next();
  c.frames(2);  // a press shows the next all-reduce before its first step
  CHECK(c.frame().position == 0);
  CHECK(c.ring.steps_taken() == 0);
  c.frames(200);
  CHECK(c.ring.steps_taken() == 4);
  CHECK(c.frame().done);
}

TEST_CASE("rings of 3 and 8 ranks step through 2(N-1) steps each way") {
  for (int n : {3, 8}) {
    CAPTURE(n);
    Classroom c(n);
    const int steps = 2 * (n - 1);
    CHECK(c.frame().expected_steps == steps);
    for (int p = 1; p <= steps; ++p) {
      c.next();
      CHECK(c.frame().position == p);
      CHECK(c.ring.steps_taken() == p);
      if (p < steps) {
        const bool scatter = p <= n - 1;
        const int in_phase = scatter ? p : p - (n - 1);
        CHECK(c.frame().on_screen == "After ring step " + std::to_string(p) + " of " + std::to_string(steps) + " (" +
                                         (scatter ? "reduce-scatter " : "all-gather ") + std::to_string(in_phase) +
                                         " of " + std::to_string(n - 1) + ")");
      }
    }
    CHECK(c.frame().done);
    CHECK(c.frame().final_matches);
    for (int p = steps - 1; p >= 0; --p) {
      c.previous();
      CHECK(c.frame().position == p);
    }
    CHECK(c.ring.steps_taken() == steps);
  }
}

TEST_CASE("Play in gated mode paces the workers one step at a time until the all-reduce is done") {
  Classroom c(3);
  toggle_play(c.st);
  c.st.speed = 4;
  c.frames(200);  // 20 s of frames at 4 steps per second
  CHECK(c.ring.steps_taken() == 4);
  CHECK(c.frame().done);
}

TEST_CASE("Play in gated mode shows the steps at the speed it says, the packets' travel included") {
  Classroom c(3);
  c.st.speed = 1;  // one ring step a second
  toggle_play(c.st);
  int frames = 0;  // of 0.1 s each
  while (c.frame().position < 4 && frames < 200) {
    c.frames(1);
    ++frames;
  }
  // The first press a second after Play, each step's packets a second on their way, and the
  // next press as they arrive: the fourth step is on screen after about five seconds (half the
  // label's speed would take eight).
  CHECK(c.frame().position == 4);
  CHECK(frames >= 45);
  CHECK(frames <= 55);
  CHECK(c.ring.steps_taken() == 4);
}

TEST_CASE("a stopped run releases nobody: Next only catches the view up") {
  Classroom c(4);
  c.next();
  c.previous();
  CHECK(step_forward(c.st, c.ring.log(), false).gate_releases == 0);  // catch up to step 1
  CHECK(step_forward(c.st, c.ring.log(), false).gate_releases == 0);  // nothing more to show
  CHECK(c.ring.steps_taken() == 1);
}

TEST_CASE("a stopped run's half-done all-reduce: Next is offered while there is something to catch up, then not") {
  Classroom c(4);
  c.next();  // the workers take step 1 of 6
  c.previous();
  CHECK(can_step_forward(c.st, c.ring.log(), false));  // step 1 is recorded: Next shows it
  step_forward(c.st, c.ring.log(), false);
  c.frames(40);  // the packets of step 1 arrive on screen (no release: Play is off)
  CHECK(c.ring.steps_taken() == 1);
  CHECK_FALSE(can_step_forward(c.st, c.ring.log(), false));  // no rank will take step 2
  CHECK(can_step_forward(c.st, c.ring.log(), true));          // a live run would let them
  set_mode(c.st, RingMode::Replay);
  CHECK_FALSE(can_step_forward(c.st, c.ring.log(), false));  // Replay: the same end of the recording
  step_back(c.st, c.ring.log());
  CHECK(can_step_forward(c.st, c.ring.log(), false));
}

TEST_CASE("Replay: Next is offered up to the newest all-reduce's end, and on into the next one before that") {
  GatedRing ring = two_finished_rings();
  StepThrough st = replaying_first(ring);
  int presses = 0;
  while (can_step_forward(st, ring.log(), false) && presses < 20) {
    step_forward(st, ring.log(), false);
    ++presses;
  }
  CHECK(presses == 9);  // #7 at 0..4, then #8 at 0..4
  CHECK(st.selected.id == 8);
  CHECK(st.position == 4);
  CHECK(can_step_forward(StepThrough{}, ring.log(), false));  // following: Next stops it on the one shown
}

TEST_CASE("Replay on an all-reduce the log has let go: Next goes on to the oldest it still keeps") {
  GatedRing ring = two_finished_rings();
  StepThrough st = replaying_first(ring);
  const CollectiveKey first = st.selected;
  while (st.position < recorded_steps(*shown_collective(st, ring.log()))) step_forward(st, ring.log(), true);
  ring.finish_next(600);  // the run goes on: the log keeps the newest 512, #7 is let go
  REQUIRE(ring.log().find(first) == nullptr);
  REQUIRE(shown_collective(st, ring.log()) != nullptr);  // still on screen, at its end
  CHECK(can_step_forward(st, ring.log(), true));  // was greyed out
  step_forward(st, ring.log(), true);
  CHECK(st.selected == ring.log().at(0).key);  // the oldest kept, before its first step
  CHECK(st.position == 0);
}

TEST_CASE("switching modes asks for the gate to be switched, and only when it changes") {
  StepThrough st;
  CHECK_FALSE(set_mode(st, RingMode::Replay).set_gated.has_value());
  const StepRequest on = set_mode(st, RingMode::Gated);
  REQUIRE(on.set_gated.has_value());
  CHECK(*on.set_gated);
  CHECK_FALSE(st.playing);
  const StepRequest off = set_mode(st, RingMode::Follow);
  REQUIRE(off.set_gated.has_value());
  CHECK_FALSE(*off.set_gated);
  CHECK(st.playing);
}

TEST_CASE("a finished ring traced without chunks has nothing to step through") {
  CollectiveLog log;
  for (int r = 0; r < 2; ++r) {
    const Event b = collective_begin(r, 1, "ring");
    log.consume(b, 1, 2);
    Event e = b;
    e.kind = EventKind::CollectiveEnd;
    log.consume(e, 1, 2);
  }
  CHECK(expected_steps(log.at(0)) == 0);
  CHECK(ring_frame(log.at(0), 0).done);
}

TEST_CASE("a run that fails mid all-reduce is shown in that all-reduce, at the last step its ranks took") {
  GatedRing ring(4, 7);
  ring.release(6);  // all-reduce #7 finishes
  StepThrough st;   // following live
  advance(st, ring.log(), true, 0.1);
  REQUIRE(shown_collective(st, ring.log()) != nullptr);
  CHECK(shown_collective(st, ring.log())->key.id == 7);

  ring.begin_next();  // #8: two ring steps, then a rank dies
  ring.release(2);
  for (int i = 0; i < 5; ++i) advance(st, ring.log(), false, 0.1);
  CHECK(shown_collective(st, ring.log())->key.id == 7);  // following: the newest finished one

  show_failed_collective(st, ring.log());
  const CollectiveRecord* shown = shown_collective(st, ring.log());
  REQUIRE(shown != nullptr);
  CHECK(shown->key.id == 8);
  CHECK(st.position == 2);
  const RingFrame f = ring_frame(*shown, st.position);
  CHECK_FALSE(f.done);
  CHECK(f.on_screen == "After ring step 2 of 6 (reduce-scatter 2 of 3)");

  // Stepping back through it works from there; a replay is not pulled back to the failure.
  step_back(st, ring.log());
  CHECK(st.position == 1);
  show_failed_collective(st, ring.log());
  CHECK(st.position == 1);
}

// The window draws frames only while the view changes by itself (view_model::animating): after
// a run its last all-reduce plays to its end and holds there, instead of looping for ever.
TEST_CASE("following a run that is over: the last all-reduce plays to its end, holds, and Play shows it again") {
  GatedRing ring(4, 7);
  ring.release(6);  // all-reduce #7, the run's last, finishes
  StepThrough st;   // following live
  advance(st, ring.log(), true, 0.1);
  REQUIRE(shown_collective(st, ring.log()) != nullptr);
  CHECK(animating(st, ring.log()));
  for (int i = 0; i < 200; ++i) advance(st, ring.log(), false, 0.1);  // 20 s after the run ended
  CHECK(st.position == 6);
  CHECK_FALSE(st.playing);
  CHECK_FALSE(animating(st, ring.log()));
  CHECK(ring_frame(*shown_collective(st, ring.log()), st.position).done);

  toggle_play(st);  // Play: from the first step again
  CHECK(animating(st, ring.log()));
  advance(st, ring.log(), false, 0.1);
  CHECK(st.position == 0);
  for (int i = 0; i < 200; ++i) advance(st, ring.log(), false, 0.1);
  CHECK(st.position == 6);
  CHECK_FALSE(animating(st, ring.log()));
}

// Following a 7-all-reduce run to its end: 20 s after it, the view holds its last all-reduce.
StepThrough followed_to_the_end(const GatedRing& ring) {
  StepThrough st;
  for (int i = 0; i < 200; ++i) advance(st, ring.log(), false, 0.1);
  return st;
}

TEST_CASE("the next run is followed again after a run ended and held its last all-reduce") {
  GatedRing ring(4, 7);
  ring.release(6);
  StepThrough st = followed_to_the_end(ring);
  REQUIRE_FALSE(st.playing);
  ring.finish_next(1);  // Start again: a new all-reduce, running
  for (int i = 0; i < 30; ++i) advance(st, ring.log(), true, 0.1);
  CHECK(st.playing);
  CHECK(animating(st, ring.log()));
  CHECK(shown_collective(st, ring.log())->key.id == 8);  // the new run's, not the old one's
  CHECK(st.position < 6);                                 // and it moves through its steps
}

TEST_CASE("a run followed to its end, then Step-through (gated) and Start: the new run waits at the gate") {
  GatedRing ring(4, 7);
  ring.release(6);
  StepThrough st = followed_to_the_end(ring);
  REQUIRE(st.held_at_end);
  set_mode(st, RingMode::Gated);
  begin_run(st);  // Start
  CHECK_FALSE(st.playing);  // it played the new run at the chosen speed, gate or no gate
  CHECK_FALSE(st.held_at_end);
}

TEST_CASE("following a fast run: the all-reduce on screen plays through its steps after the log forgets it") {
  GatedRing ring(4, 7);
  ring.release(6);
  StepThrough st;
  advance(st, ring.log(), true, 0.1);
  REQUIRE(shown_collective(st, ring.log()) != nullptr);
  const CollectiveKey first = st.selected;
  for (int frame = 0; frame < 4; ++frame) {
    ring.finish_next(600);  // between two frames, more all-reduces than the log keeps (512)
    advance(st, ring.log(), true, 0.5);
  }
  CHECK(ring.log().find(first) == nullptr);  // forgotten by the log
  CHECK(st.selected == first);               // yet still on screen,
  CHECK(st.position >= 2);                   // moving through its steps
  for (int i = 0; i < 60; ++i) advance(st, ring.log(), true, 0.1);
  CHECK(st.selected != first);  // and once played, the newest is picked up
  CHECK(shown_collective(st, ring.log()) != nullptr);
}

TEST_CASE("a run over before any frame saw it running is still followed to the end of its last all-reduce") {
  GatedRing first(4, 7);
  first.release(6);
  StepThrough st;
  for (int i = 0; i < 200; ++i) advance(st, first.log(), false, 0.1);  // the first run ended: held
  REQUIRE_FALSE(st.playing);
  begin_run(st);  // Start again: the new run's events all arrive at once, and it is over
  GatedRing second(4, 7);  // the same keys as the first run's
  second.release(6);
  for (int i = 0; i < 200; ++i) advance(st, second.log(), false, 0.1);
  REQUIRE(shown_collective(st, second.log()) != nullptr);
  CHECK(st.position == 6);
  CHECK(ring_frame(*shown_collective(st, second.log()), st.position).done);
}

TEST_CASE("a Pause the user pressed stays through the start of the next run") {
  StepThrough st;
  toggle_play(st);  // Pause
  begin_run(st);
  CHECK_FALSE(st.playing);
}

namespace {
// Following a run whose all-reduce #7 is on screen, then Pause.
StepThrough paused_on_first(const GatedRing& ring) {
  StepThrough st;
  advance(st, ring.log(), true, 0.1);
  toggle_play(st);
  return st;
}
}  // namespace

TEST_CASE("a paused all-reduce stays on screen however many all-reduces the run does meanwhile") {
  GatedRing ring(4, 7);
  ring.release(6);
  StepThrough st = paused_on_first(ring);
  const CollectiveKey held = st.selected;
  for (int i = 0; i < 600; ++i) {
    ring.finish_next(1);
    advance(st, ring.log(), true, 0.05);
  }
  CHECK(st.selected == held);
  CHECK(shown_collective(st, ring.log()) != nullptr);
}

TEST_CASE("a Pause the user pressed stays paused when the run goes on") {
  GatedRing ring(4, 7);
  ring.release(6);
  StepThrough st = paused_on_first(ring);
  const int position = st.position;
  for (int i = 0; i < 50; ++i) advance(st, ring.log(), true, 0.1);
  CHECK_FALSE(st.playing);
  CHECK(st.position == position);
}

TEST_CASE("while the run goes on, following loops the newest all-reduce") {
  GatedRing ring(4, 7);
  ring.release(6);
  StepThrough st;
  for (int i = 0; i < 200; ++i) advance(st, ring.log(), true, 0.1);
  CHECK(st.playing);
  CHECK(animating(st, ring.log()));
}

TEST_CASE("at the gate, with the released steps shown and Play off, nothing moves by itself") {
  Classroom c(4);
  c.next();  // one step released, taken, and animated
  CHECK(c.st.position == 1);
  CHECK_FALSE(animating(c.st, c.ring.log()));
  toggle_play(c.st);  // Play in gated mode presses Next by itself
  CHECK(animating(c.st, c.ring.log()));
}

// Play in Replay plays on, as Next goes on: through #7, a moment on its end, through #8, and
// stops at the end of the newest (it stopped at the end of the first, leaving Next to go on).
TEST_CASE("Replay: Play goes on into the next all-reduce and stops at the newest one's end") {
  GatedRing ring = two_finished_rings();
  StepThrough st = replaying_first(ring);
  st.speed = 4;
  toggle_play(st);
  std::vector<int64_t> seen;
  for (int frame = 0; frame < 200 && st.playing; ++frame) {
    advance(st, ring.log(), false, 0.05);
    if (seen.empty() || seen.back() != st.selected.id) seen.push_back(st.selected.id);
  }
  CHECK(seen == std::vector<int64_t>{7, 8});
  CHECK_FALSE(st.playing);
  CHECK(st.selected.id == 8);
  CHECK(st.position == recorded_steps(*shown_collective(st, ring.log())));
}

TEST_CASE("Replay: Right goes through every position and on into the next all-reduce, Left back over the same") {
  GatedRing ring = two_finished_rings();
  StepThrough st = replaying_first(ring);
  std::vector<std::pair<int64_t, int>> forward;
  for (int press = 0; press < 10; ++press) {
    forward.emplace_back(st.selected.id, st.position);
    step_forward(st, ring.log(), true);
  }
  const std::vector<std::pair<int64_t, int>> want = {{7, 0}, {7, 1}, {7, 2}, {7, 3}, {7, 4},
                                                     {8, 0}, {8, 1}, {8, 2}, {8, 3}, {8, 4}};
  CHECK(forward == want);
  CHECK(st.selected.id == 8);  // the newest, at its end: Right has nowhere further to go
  CHECK(st.position == 4);
  std::vector<std::pair<int64_t, int>> back;
  for (int press = 0; press < 10; ++press) {
    back.emplace_back(st.selected.id, st.position);
    step_back(st, ring.log());
  }
  CHECK(back == std::vector<std::pair<int64_t, int>>(want.rbegin(), want.rend()));
}

// A finished run, followed to its end: the newest all-reduce stands done on screen. Choosing
// Replay begins it again, Next offered, rather than at the recording's end with Next greyed.
TEST_CASE("Replay chosen after following a finished run begins the all-reduce on screen") {
  GatedRing ring = two_finished_rings();
  StepThrough st;
  for (int i = 0; i < 200; ++i) advance(st, ring.log(), false, 0.1);
  const CollectiveRecord* shown = shown_collective(st, ring.log());
  REQUIRE(shown != nullptr);
  CHECK(shown->key.id == 8);
  CHECK(st.position == recorded_steps(*shown));
  set_mode(st, RingMode::Replay);
  CHECK(shown_collective(st, ring.log())->key.id == 8);
  CHECK(st.position == 0);
  CHECK(can_step_forward(st, ring.log(), false));
  step_forward(st, ring.log(), false);
  CHECK(st.position == 1);
}

TEST_CASE("Replay scrubs the ring all-reduces only: the initial broadcast has no ring steps") {
  GatedRing ring(2, 7);
  ring.release(2);
  for (int r = 0; r < 2; ++r) ring.log().consume(collective_begin(r, 50, "broadcast"), 1, 2);  // between the two
  ring.finish_next(1);
  const std::vector<size_t> rings = steppable_collectives(ring.log());
  REQUIRE(ring.log().size() == 3);
  CHECK(rings == std::vector<size_t>{0, 2});
  StepThrough st;
  set_mode(st, RingMode::Replay);
  show_collective(st, ring.log().at(0));
  show_position(st, 2);
  step_forward(st, ring.log(), true);  // past the end: over the broadcast, into the next ring
  CHECK(st.selected.id == 8);
  CHECK(st.position == 0);
}

TEST_CASE("following a live change to one rank lets the last world's all-reduce go; Replay keeps it") {
  GatedRing ring(4, 7);  // generation 1, four ranks
  ring.release(6);
  StepThrough st;
  advance(st, ring.log(), true, 0.1);
  const CollectiveRecord* shown = shown_collective(st, ring.log());
  REQUIRE(shown != nullptr);
  CHECK(left_behind_by_one_rank(st, *shown, 2, 1));        // the workers are one rank now
  CHECK_FALSE(left_behind_by_one_rank(st, *shown, 2, 2));  // two ranks: their own all-reduces will replace it
  CHECK_FALSE(left_behind_by_one_rank(st, *shown, 1, 1));  // the same world
  set_mode(st, RingMode::Replay);
  CHECK_FALSE(left_behind_by_one_rank(st, *shown, 2, 1));  // scrubbing the old world's all-reduces is what Replay is for
}

// Replay chosen half-way through an all-reduce scrubs a copy of the log taken then, and lets the
// workers go: they take its last steps in the run's own log. The screen shows it whole (it said
// "the run ended here: no rank took step 3" of a run that went on), and once the run's log has
// let it go (it keeps the newest few hundred), the copy kept of it is still the whole one.
TEST_CASE("Replay chosen mid-all-reduce shows it whole once the workers have finished it") {
  Classroom c(3);
  c.next();
  c.next();  // the workers took steps 1 and 2 of 4
  const CollectiveLog copy = c.ring.log();  // Replay's copy, taken now
  set_mode(c.st, RingMode::Replay);
  c.ring.release(2);  // let go: they finish the all-reduce
  keep_newest(c.st, c.ring.log());
  const CollectiveRecord* shown = shown_collective(c.st, copy);
  REQUIRE(shown != nullptr);
  CHECK(recorded_steps(*shown) == 4);
  CHECK(shown->complete());
  CHECK(c.st.position == 2);  // the class stays at the step it stepped to
  // The run goes on until its log has let this all-reduce go: the kept copy is the whole one.
  c.ring.finish_next(600);
  REQUIRE(c.ring.log().find(c.st.selected) == nullptr);
  keep_newest(c.st, c.ring.log());
  shown = shown_collective(c.st, c.ring.log());
  REQUIRE(shown != nullptr);
  CHECK(recorded_steps(*shown) == 4);
  CHECK(shown->complete());
}

// Following live, an all-reduce shown to its end stays done until a newer one is recorded: after
// Resume the workers' next one is still on its way, and showing the same one again from its first
// step played an all-reduce already seen done as if it were happening.
TEST_CASE("following live, the all-reduce shown done is not played again while the next is on its way") {
  GatedRing ring(3, 7);
  ring.release(4);  // #7, finished
  StepThrough st;  // following
  for (int i = 0; i < 100; ++i) advance(st, ring.log(), true, 0.1);  // 10 s: shown to its end, and held
  REQUIRE(shown_collective(st, ring.log()) != nullptr);
  CHECK(st.selected.id == 7);
  CHECK(st.position == 4);
  ring.finish_next(1);  // #8 arrives
  for (int i = 0; i < 3; ++i) advance(st, ring.log(), true, 0.1);
  CHECK(st.selected.id == 8);
}

// Play at 2 steps a second through the end of one all-reduce into the next: the finished one is
// seen done for an interval, and the next one's first step leaves with the press that shows it
// (a press of its own held "before ring step 1" a whole interval with nothing moving).
TEST_CASE("gated Play shows an all-reduce done for an interval, then goes on into the next one's first step") {
  Classroom c(3);
  c.st.speed = 2;  // an interval of 5 frames
  toggle_play(c.st);
  int frames = 0;
  while (!c.frame().done && frames < 100) {
    c.frames(1);
    ++frames;
  }
  REQUIRE(c.frame().done);
  c.ring.begin_next();  // the workers begin the next all-reduce and wait at its gate
  int done_frames = 0;
  while (c.st.selected.id == 7 && done_frames < 100) {
    c.frames(1);
    ++done_frames;
  }
  CHECK(done_frames >= 4);  // about an interval on the finished one
  CHECK(done_frames <= 6);
  CHECK(c.st.selected.id == 8);
  CHECK(c.ring.steps_taken() == 1);  // its first step let go at once
  c.frames(5);  // an interval later its packets have arrived
  CHECK(c.frame().position == 1);
}
