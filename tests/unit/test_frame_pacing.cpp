// The app's frame pacing (engine/view_model/frame_pacing.h): when the next frame is due for each
// cause, and that a run's workers computing beside a costly frame spread the frames out.
#include <doctest/doctest.h>

#include <vector>

#include "engine/view_model/frame_pacing.h"

using ringlab::view_model::FrameCause;
using ringlab::view_model::FramePacer;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSixtieth = static_cast<int64_t>(1e9 / 60.0);

FrameCause idle() { return {}; }
FrameCause input() { return {.input = true}; }
FrameCause live_run() { return {.new_events = true, .workers_computing = true}; }

// A pacer past its settling frames, its last frame drawn at `began` for `cpu_ms`.
FramePacer settled(int64_t began, double cpu_ms) {
  FramePacer p;
  for (int i = 0; i < FramePacer::kSettleFrames + 1; ++i) p.frame_drawn(began - (10 - i) * 100 * kMs, cpu_ms, idle());
  p.frame_drawn(began, cpu_ms, idle());
  return p;
}

}  // namespace

TEST_CASE("nothing to draw: one frame every 250 ms") {
  const FramePacer p = settled(1000 * kMs, 2.0);
  CHECK(p.next_frame_ns(idle()) == 1000 * kMs + FramePacer::kIdleFrameNs);
}

TEST_CASE("input is drawn at once, busy or not, and the frames after it too") {
  FramePacer p = settled(1000 * kMs, 20.0);
  CHECK(p.next_frame_ns(input()) == 1000 * kMs + kSixtieth);
  FrameCause busy_input = live_run();
  busy_input.input = true;
  CHECK(p.next_frame_ns(busy_input) == 1000 * kMs + kSixtieth);
  p.frame_drawn(1020 * kMs, 20.0, input());
  for (int i = 0; i < FramePacer::kSettleFrames; ++i) {
    CHECK(p.next_frame_ns(idle()) == p.next_frame_ns(input()));  // settling: still 60 a second
    p.frame_drawn((1040 + 20 * i) * kMs, 20.0, idle());
  }
  CHECK(p.next_frame_ns(idle()) - (1080 * kMs) == FramePacer::kIdleFrameNs);
}

TEST_CASE("a live run beside costly frames: the frames keep to 15% of a core") {
  const FramePacer p = settled(1000 * kMs, 15.0);
  // 15 ms of CPU a frame within 15% of one core: one frame every 100 ms, not every 16.7.
  CHECK(p.next_frame_ns(live_run()) == 1000 * kMs + 100 * kMs);
  FrameCause gated = live_run();
  gated.workers_computing = false;  // held at the gate: nobody to make room for
  CHECK(p.next_frame_ns(gated) == 1000 * kMs + kSixtieth);
}

TEST_CASE("a live run beside cheap frames: 15 a second, each frame's layout and intake cost the workers") {
  const FramePacer p = settled(1000 * kMs, 2.0);
  CHECK(p.next_frame_ns(live_run()) == 1000 * kMs + static_cast<int64_t>(1e9 / 15.0));
  CHECK(FramePacer::kWorkerFramesPerSecond == 15.0);
  FrameCause no_workers = live_run();
  no_workers.workers_computing = false;  // a run on other machines, or over: 60 a second
  CHECK(p.next_frame_ns(no_workers) == 1000 * kMs + kSixtieth);
}

TEST_CASE("an animation with no run draws at 60 a second") {
  const FramePacer p = settled(1000 * kMs, 20.0);
  CHECK(p.next_frame_ns({.animating = true}) == 1000 * kMs + kSixtieth);
}

TEST_CASE("the frame cost is smoothed: one slow frame does not stall the next ones") {
  FramePacer p = settled(1000 * kMs, 4.0);
  p.frame_drawn(1100 * kMs, 200.0, idle());  // a font rebuilt, say
  CHECK(p.frame_cpu_ms() == doctest::Approx(4.0 + (200.0 - 4.0) / 8.0));
  // The 200 ms frame alone would hold the next one back 200 ms / share; smoothed, a fifth of that.
  CHECK(p.next_frame_ns(live_run()) - 1100 * kMs < 200.0 * kMs / FramePacer::kWorkerShare / 5);
}

TEST_CASE("a costly first frame (fonts, shaders) is forgotten within a few frames") {
  FramePacer p;
  p.frame_drawn(0, 300.0, idle());
  for (int i = 1; i <= 6; ++i) p.frame_drawn(i * 20 * kMs, 20.0, idle());
  CHECK(p.frame_cpu_ms() < 25.0);  // 300 -> 160 -> 90 -> 55 -> 37.5 -> 28.8 -> 24.4
  CHECK(p.next_frame_ns(live_run()) - 120 * kMs < 1.25 * 20.0 * kMs / FramePacer::kWorkerShare);
}

TEST_CASE("side panes: reused only while workers compute, never on input or while settling") {
  FramePacer p = settled(1000 * kMs, 20.0);
  CHECK(p.side_panes_reusable(live_run()));
  CHECK_FALSE(p.side_panes_reusable(idle()));  // nobody to make room for: every pane afresh
  FrameCause busy_input = live_run();
  busy_input.input = true;
  CHECK_FALSE(p.side_panes_reusable(busy_input));
  p.frame_drawn(1020 * kMs, 20.0, busy_input);
  for (int i = 0; i < FramePacer::kSettleFrames; ++i) {
    CHECK_FALSE(p.side_panes_reusable(live_run()));  // what the input changed is still laid out
    p.frame_drawn((1040 + 20 * i) * kMs, 20.0, live_run());
  }
  CHECK(p.side_panes_reusable(live_run()));
}

TEST_CASE("a side pane is drawn afresh once a second, at once when it moved or never was") {
  CHECK(FramePacer::kSidePaneNs == 1000 * kMs);
  const int64_t drawn = 1000 * kMs;
  CHECK(FramePacer::side_pane_due(1000 * kMs, 0, false));  // never drawn
  CHECK_FALSE(FramePacer::side_pane_due(drawn + 100 * kMs, drawn, false));
  CHECK_FALSE(FramePacer::side_pane_due(drawn + FramePacer::kSidePaneNs - 1, drawn, false));
  CHECK(FramePacer::side_pane_due(drawn + FramePacer::kSidePaneNs, drawn, false));
  CHECK(FramePacer::side_pane_due(drawn + 10 * kMs, drawn, true));  // moved or resized
}

TEST_CASE("one side pane is drawn afresh a frame: the longest-waiting of those due, so none waits for ever") {
  const int64_t now = 10'000 * kMs;
  // Four panes; with frames 400 ms apart only three would get a turn a second if the first due
  // in layout order went first: the fourth (the timeline) then never did.
  std::vector<int64_t> drawn = {now - 1200 * kMs, now - 1100 * kMs, now - 1900 * kMs, now - 300 * kMs};
  CHECK(FramePacer::side_pane_to_refresh(now, drawn) == 2);
  drawn[2] = now;  // drawn afresh: the next frame takes the next longest-waiting
  CHECK(FramePacer::side_pane_to_refresh(now + 400 * kMs, drawn) == 0);
  const std::vector<int64_t> fresh = {now - 100 * kMs, 0};  // never drawn: drawn anyway, not picked
  CHECK(FramePacer::side_pane_to_refresh(now, fresh) == -1);
  CHECK(FramePacer::side_pane_to_refresh(now, {}) == -1);
}
