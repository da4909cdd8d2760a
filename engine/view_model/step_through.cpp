#include "engine/view_model/step_through.h"

#include <algorithm>

#include "engine/view_model/ring_state.h"

namespace ringlab::view_model {
namespace {

// All-reduces that go around the ring (the backend's own all-reduce and the initial broadcast
// have no steps to show).
bool is_ring(const CollectiveRecord& r) { return r.algorithm == "ring" || r.algorithm == "demo"; }

long index_of(const CollectiveLog& log, const CollectiveKey& key) {
  for (size_t i = log.size(); i-- > 0;)
    if (log.at(i).key == key) return static_cast<long>(i);
  return -1;
}

// The newest ring all-reduce with something to show: the one the workers are in.
const CollectiveRecord* newest_ring(const CollectiveLog& log) {
  for (size_t i = log.size(); i-- > 0;)
    if (is_ring(log.at(i)) && (log.at(i).world_size > 1 || !log.at(i).transfers.empty())) return &log.at(i);
  return nullptr;
}

bool has_ring_steps(const CollectiveRecord& r) { return is_ring(r) && expected_steps(r) > 0; }

// The ring all-reduce just after (direction +1) or before (-1) `key`, or null.
const CollectiveRecord* neighbour_ring(const CollectiveLog& log, const CollectiveKey& key, int direction) {
  long here = index_of(log, key);
  // Replay on an all-reduce the log has since let go (it keeps the newest): Next goes on to the
  // oldest it still holds. It was greyed out, the slider at its left end saying "older than kept".
  if (here < 0 && direction > 0 && log.size() > 0 && key < log.at(0).key) here = -1;
  else if (here < 0) return nullptr;
  for (long i = here + direction; i >= 0 && i < static_cast<long>(log.size()); i += direction)
    if (has_ring_steps(log.at(static_cast<size_t>(i)))) return &log.at(static_cast<size_t>(i));
  return nullptr;
}

void select(StepThrough& st, const CollectiveRecord& r, int position = 0) {
  st.has_selection = true;
  st.selected = r.key;
  if (!st.kept || st.kept->key != r.key) st.kept = std::make_shared<const CollectiveRecord>(r);
  st.position = st.target = position;
  st.progress = 0;
  st.hold_s = 0;
}

// Moves the packets along towards `available` steps; a step completes when they arrive. A view
// that is ahead (Previous was pressed) jumps back at once.
void animate(StepThrough& st, int available, double dt_s) {
  if (st.position >= available) {
    st.position = std::max(0, std::min(st.position, available));
    st.progress = 0;
    return;
  }
  st.progress += dt_s * st.speed;
  while (st.progress >= 1.0 && st.position < available) {
    st.progress -= 1.0;
    ++st.position;
  }
  if (st.position >= available) st.progress = 0;
}

// Play pressed on an all-reduce shown to its end shows it again from its first step.
void start_over_if_done(StepThrough& st, int total) {
  if (st.from_start && st.position >= total) {
    st.position = st.target = 0;
    st.progress = 0;
    st.hold_s = 0;
  }
  st.from_start = false;
}

StepRequest advance_follow(StepThrough& st, const CollectiveLog& log, const CollectiveRecord* shown, bool running,
                           double dt_s) {
  const long latest = log.latest_complete_ring();
  if (st.fixed_position >= 0) {  // --ring-step: always the newest finished one, held at that step
    if (latest >= 0 && (!shown || log.at(latest).key != shown->key)) select(st, log.at(latest));
    st.position = st.target = st.fixed_position;
    st.progress = 0;
    return {};
  }
  if (!shown) {
    if (latest >= 0) {
      select(st, log.at(latest));
    } else if (!running) {
      // Stopped (or paused) before any all-reduce finished: the one the ranks were in, as far as
      // it went, not "waiting for the first ring all-reduce" of a run that is over.
      if (const CollectiveRecord* last = newest_ring(log)) select(st, *last, recorded_steps(*last));
    }
    return {};
  }
  // After a live change of world, show the new set of workers at once.
  if (latest >= 0 && log.at(latest).key.generation > shown->key.generation) {
    select(st, log.at(latest));
    return {};
  }
  // The hold at the end of a run was the view's own: the next run (Start again, a live change)
  // is followed from its first all-reduce on. A Pause the user pressed stays.
  if (st.held_at_end && running) {
    st.held_at_end = false;
    st.playing = true;
  }
  if (!st.playing) return {};
  const int total = recorded_steps(*shown);
  start_over_if_done(st, total);
  // Following live, one all-reduce takes at most about 4 s however many ranks there are.
  StepThrough paced = st;
  paced.speed = std::max(st.speed, total / 4.0);
  animate(paced, total, dt_s);
  st.position = st.target = paced.position;
  st.progress = paced.progress;
  if (st.position < total) return {};
  st.hold_s += dt_s;
  if (st.hold_s < std::max(1.2, 1.0 / st.speed)) return {};
  // The newest one, once there is a newer one: the same again would show an all-reduce already
  // seen done as if it were happening (after Resume, the workers' next one is still on its way).
  // Once the run is over its last all-reduce stays on screen, done, and the view holds (Play
  // shows it again): looping it for ever would keep the window drawing with nothing new to show.
  if (latest >= 0 && log.at(latest).key != shown->key) {
    select(st, log.at(latest));
  } else if (!running) {
    st.playing = false;
    st.held_at_end = true;
  }
  return {};
}

StepRequest advance_gated(StepThrough& st, const CollectiveLog& log, const CollectiveRecord* shown, bool running,
                          double dt_s) {
  if (st.to_workers) {
    const CollectiveRecord* newest = newest_ring(log);
    if (newest && (!shown || newest->key != shown->key)) {
      select(st, *newest, 0);
      shown = newest;
    }
  }
  if (!shown || st.follow_next) {
    // The all-reduce the workers are in, or the one Next moved on to before it was recorded:
    // before its first step, which the next press lets the workers take.
    const CollectiveRecord* next = shown ? neighbour_ring(log, shown->key, +1) : newest_ring(log);
    if (!next) return {};
    select(st, *next, 0);
    st.follow_next = false;
    shown = next;
    // Presses made before anything was recorded count now, as if made at this all-reduce.
    StepRequest early;
    for (; st.early_presses > 0; --st.early_presses) early.gate_releases += step_forward(st, log, running).gate_releases;
    if (early.gate_releases > 0) return early;
  }
  const int shown_steps = std::min(st.target, recorded_steps(*shown));
  animate(st, shown_steps, dt_s);
  // Play presses Next once every 1/speed seconds, once the screen has caught up with the last
  // press: it shows the recorded steps, then paces the real workers. With a fixed position
  // (--ring-step) it plays until the all-reduce on screen reaches it. The interval counts from
  // the last press, the packets' travel on screen included: counted from their arrival, each
  // step took two intervals and Play ran at half its label.
  st.since_release_s += dt_s;
  const bool wanted = st.fixed_position >= 0 ? st.position < st.fixed_position : st.playing;
  if (!wanted || st.position < shown_steps) return {};
  // An all-reduce done on screen stays an interval, counted from when its last packets arrived
  // (the presses' interval ends as they do): at 8 steps a second it was never seen done.
  const bool done = st.fixed_position < 0 && st.target >= expected_steps(*shown);
  st.hold_s = done ? st.hold_s + dt_s : 0;
  if ((done ? st.hold_s : st.since_release_s) < 1.0 / st.speed) return {};
  StepRequest request = step_forward(st, log, running);
  // Play moved on to the next all-reduce: its first step's packets leave at once, under "before
  // ring step 1" (a press of its own would hold that picture a whole interval with nothing
  // moving: six steps took seven).
  if (done && st.has_selection && st.target == 0 && !st.follow_next)
    request.gate_releases += step_forward(st, log, running).gate_releases;
  return request;
}

StepRequest advance_replay(StepThrough& st, const CollectiveLog& log, const CollectiveRecord* shown, double dt_s) {
  if (!shown) {
    const long latest = log.latest_complete_ring();
    if (latest >= 0) select(st, log.at(latest));
    st.playing = false;
    return {};
  }
  if (!st.playing) return {};
  const int total = recorded_steps(*shown);
  start_over_if_done(st, total);
  animate(st, total, dt_s);
  st.target = st.position;
  if (st.position < total) return {};
  // Play goes on through the recording, as Next does: a moment on the finished all-reduce, then
  // the next one from its first step; the newest one's end stops it.
  const CollectiveRecord* next = neighbour_ring(log, shown->key, +1);
  if (!next) {
    st.playing = false;
    return {};
  }
  st.hold_s += dt_s;
  if (st.hold_s >= std::max(0.8, 1.0 / st.speed)) select(st, *next);
  return {};
}

}  // namespace

namespace {

// Whether `a` holds more of the same all-reduce than `b`: `b` a copy taken before its last steps
// (Replay chosen mid-way through it scrubs a copy of the log taken then).
bool holds_more(const CollectiveRecord& a, const CollectiveRecord& b) {
  return a.transfers.size() > b.transfers.size() || (a.complete() && !b.complete());
}

}  // namespace

const CollectiveRecord* shown_collective(const StepThrough& st, const CollectiveLog& log) {
  if (!st.has_selection) return nullptr;
  const bool kept = st.kept && st.kept->key == st.selected;
  const CollectiveRecord* in_log = log.find(st.selected);
  if (in_log && !(kept && holds_more(*st.kept, *in_log))) return in_log;
  return kept ? st.kept.get() : nullptr;
}

void keep_newest(StepThrough& st, const CollectiveLog& log) {
  const CollectiveRecord* live = st.has_selection ? log.find(st.selected) : nullptr;
  if (!live) return;
  if (!st.kept || st.kept->key != live->key || holds_more(*live, *st.kept))
    st.kept = std::make_shared<const CollectiveRecord>(*live);
}

std::vector<size_t> steppable_collectives(const CollectiveLog& log) {
  std::vector<size_t> found;
  for (size_t i = 0; i < log.size(); ++i)
    if (has_ring_steps(log.at(i))) found.push_back(i);
  return found;
}

bool left_behind_by_one_rank(const StepThrough& st, const CollectiveRecord& shown, int live_generation, int live_world) {
  return st.mode == RingMode::Follow && live_world == 1 && shown.key.generation < live_generation;
}

int recorded_steps(const CollectiveRecord& record) { return static_cast<int>(ring_schedule(record).steps.size()); }

int expected_steps(const CollectiveRecord& record) { return expected_ring_steps(record); }

void show_failed_collective(StepThrough& st, const CollectiveLog& log) {
  if (st.mode != RingMode::Follow || st.fixed_position >= 0) return;
  const CollectiveRecord* failed_in = newest_ring(log);
  if (!failed_in) return;
  const int taken = recorded_steps(*failed_in);
  if (!st.has_selection || st.selected != failed_in->key) select(st, *failed_in, taken);
  st.position = st.target = taken;
  st.progress = 0;
}

StepRequest advance(StepThrough& st, const CollectiveLog& log, bool running, double dt_s) {
  keep_newest(st, log);
  const CollectiveRecord* shown = shown_collective(st, log);
  if (!shown) st.has_selection = false;
  switch (st.mode) {
    case RingMode::Follow: return advance_follow(st, log, shown, running, dt_s);
    case RingMode::Gated: return advance_gated(st, log, shown, running, dt_s);
    case RingMode::Replay: return advance_replay(st, log, shown, dt_s);
  }
  return {};
}

StepRequest step_forward(StepThrough& st, const CollectiveLog& log, bool running) {
  const CollectiveRecord* shown = shown_collective(st, log);
  if (st.mode == RingMode::Follow) {
    st.mode = RingMode::Replay;
    st.playing = false;
  }
  st.progress = 0;
  if (st.mode == RingMode::Replay) {  // the same positions Previous goes back over, on into the next all-reduce
    st.playing = false;
    if (!shown) return {};
    const CollectiveRecord* next = neighbour_ring(log, shown->key, +1);
    if (st.position >= expected_steps(*shown) && next) select(st, *next);
    else st.position = st.target = std::min(st.position + 1, recorded_steps(*shown));
    return {};
  }
  // Gated: first catch the screen up with what the workers did, then let them take a step.
  // Each press moves the screen one position, the same ones Previous goes back over: after an
  // all-reduce's last step comes the next one before its first step ("each rank holds its own
  // input"), whether or not the workers have taken that step already.
  st.since_release_s = 0;
  st.to_workers = false;
  // Not recorded yet: the workers report the all-reduce they wait in before its first step. Each
  // press counts once they do, also those after a press that moved on to it (a clicker's quick
  // presses past an all-reduce's end were lost: 12 took 8 steps).
  if (!shown || st.follow_next) {
    ++st.early_presses;
    return {};
  }
  if (st.target < recorded_steps(*shown)) {
    st.position = st.target++;  // the packets of the step being shown move from here
    return {};
  }
  if (st.target >= expected_steps(*shown)) {  // finished on screen: on to the next all-reduce
    if (const CollectiveRecord* next = neighbour_ring(log, shown->key, +1)) select(st, *next);
    else st.follow_next = true;  // not recorded yet: shown when it is
    return {};
  }
  if (!running) return {};
  ++st.target;
  return {1, std::nullopt};
}

bool can_step_forward(const StepThrough& st, const CollectiveLog& log, bool running) {
  if (st.mode == RingMode::Follow) return true;  // Next stops following: the screen holds this all-reduce
  const CollectiveRecord* shown = shown_collective(st, log);
  if (!shown) return st.mode == RingMode::Gated;  // an early press, taken at the next run's first all-reduce
  const bool next_recorded = neighbour_ring(log, shown->key, +1) != nullptr;
  if (st.mode == RingMode::Replay)
    return st.position < recorded_steps(*shown) || (st.position >= expected_steps(*shown) && next_recorded);
  if (st.target < recorded_steps(*shown)) return true;
  if (st.target >= expected_steps(*shown)) return next_recorded || running;
  return running;
}

void step_back(StepThrough& st, const CollectiveLog& log) {
  if (st.mode == RingMode::Follow) st.mode = RingMode::Replay;
  st.playing = false;
  st.progress = 0;
  st.follow_next = false;
  st.to_workers = false;
  st.early_presses = 0;
  // One step before the last one asked for (quick presses count even while the packets of
  // the last are still moving), or into the all-reduce before, at its end.
  const CollectiveRecord* shown = shown_collective(st, log);
  const int asked = st.mode == RingMode::Gated ? std::min(st.target, shown ? recorded_steps(*shown) : 0) : st.position;
  if (asked == 0 && shown) {
    if (const CollectiveRecord* before = neighbour_ring(log, shown->key, -1)) {
      select(st, *before, recorded_steps(*before));
      return;
    }
  }
  st.position = st.target = std::max(0, asked - 1);
}

void begin_run(StepThrough& st) {
  st.has_selection = false;
  st.kept.reset();
  st.follow_next = false;
  st.to_workers = false;
  st.position = st.target = 0;
  st.progress = 0;
  st.hold_s = 0;
  if (st.held_at_end) st.playing = true;
  st.held_at_end = false;
}

void toggle_play(StepThrough& st) {
  st.to_workers = false;
  st.playing = !st.playing;
  st.held_at_end = false;
  st.from_start = st.playing;
}

bool animating(const StepThrough& st, const CollectiveLog& log) {
  const CollectiveRecord* shown = shown_collective(st, log);
  if (!shown || st.fixed_position >= 0) return false;
  // Gated: the packets of the steps released and recorded are still on their way, or Play is
  // about to press Next. Otherwise the screen waits for the workers or the class.
  if (st.mode == RingMode::Gated) return st.playing || st.position < std::min(st.target, recorded_steps(*shown));
  return st.playing;
}

StepRequest set_mode(StepThrough& st, RingMode mode) {
  if (st.mode == mode) return {};
  const bool was_gated = st.mode == RingMode::Gated;
  st.mode = mode;
  st.fixed_position = -1;
  st.follow_next = false;
  st.to_workers = false;
  st.early_presses = 0;
  StepRequest request;
  if (mode == RingMode::Gated) {
    // Held there by the class, not by a followed run's end: the next Start waits at the gate.
    st.playing = false;
    st.held_at_end = false;
    st.has_selection = false;  // show the all-reduce the workers are in
    st.to_workers = true;
    request.set_gated = true;
  } else if (was_gated) {
    request.set_gated = false;
  }
  if (mode == RingMode::Follow) {
    st.playing = true;
    st.has_selection = false;
  }
  if (mode == RingMode::Replay) {
    st.playing = false;
    st.held_at_end = false;
    // From Follow the all-reduce on screen is usually the newest, often done: Replay begins it
    // again, so that Next and Play walk through it rather than stand greyed at the recording's end.
    // From Gated the class stays at the step it stepped to.
    if (!was_gated) {
      st.position = st.target = 0;
      st.progress = 0;
    }
  }
  return request;
}

void show_position(StepThrough& st, int position) {
  st.to_workers = false;
  if (st.mode == RingMode::Follow) st.mode = RingMode::Replay;
  st.position = st.target = std::max(position, 0);
  st.progress = 0;
  st.playing = false;
}

void show_collective(StepThrough& st, const CollectiveRecord& record) {
  st.to_workers = false;
  select(st, record);
}

}  // namespace ringlab::view_model
