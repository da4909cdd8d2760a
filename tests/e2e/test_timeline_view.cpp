// The Timeline view driven as a person drives it, without a window: Dear ImGui's input is set by
// hand (the mouse over the plot, the wheel, a drag, a double-click) and the view's own state says
// what window of time it drew. A finished 2-rank run of two steps, made of events.
#include <doctest/doctest.h>

#include <imgui.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/clock.h"
#include "engine/view_model/run_model.h"
#include "tests/support/headless_imgui.h"
#include "tests/support/run_events.h"
#include "viz/app_state.h"
#include "viz/fonts.h"
#include "viz/views.h"

using namespace ringlab;

namespace {

constexpr float kPaneX = 10, kPaneY = 10, kPaneW = 900, kPaneH = 300;

Event span(EventKind kind, int rank, int64_t step, int64_t t0_us, int64_t t1_us) {
  Event e;
  e.kind = kind;
  e.rank = rank;
  e.step = step;
  e.t_begin_ns = t0_us * 1000;
  e.t_end_ns = t1_us * 1000;
  return e;
}

Event collective(EventKind kind, int rank, int64_t step, int64_t t0_us, int64_t t1_us) {
  Event e = span(kind, rank, step, t0_us, t1_us);
  e.collective_id = step;
  e.bucket = 0;
  e.bytes = 400;
  e.text = "ring";
  return e;
}

// Two steps of 1 ms each per rank: forward, backward with its bucket's all-reduce inside, optimizer
// step. Rank 1 is 0.1 ms behind rank 0, so rank 0 waits for it in each all-reduce.
view_model::RunModel finished_run() {
  view_model::RunModel model;
  for (int r = 0; r < 2; ++r) model.consume(test::run_begin_event(r, 2, "gloo"));
  for (int64_t s = 0; s < 2; ++s)
    for (int r = 0; r < 2; ++r) {
      const int64_t t = 1000 + s * 1000 + r * 100;
      model.consume(span(EventKind::StepBegin, r, s, t, t));
      model.consume(span(EventKind::Forward, r, s, t, t + 300));
      model.consume(span(EventKind::Backward, r, s, t + 300, t + 800));
      model.consume(collective(EventKind::CollectiveBegin, r, s, t + 500 - r * 100, t + 500 - r * 100));
      model.consume(collective(EventKind::CollectiveEnd, r, s, t + 500 - r * 100, t + 700));
      model.consume(span(EventKind::OptimizerStep, r, s, t + 800, t + 900));
      model.consume(span(EventKind::StepEnd, r, s, t, t + 900));
    }
  return model;
}

struct TimelinePane {
  TimelinePane() {
    viz::load_fonts(18.0f);  // the app's fonts (ImGui's own where the font packages are missing)
    ImGui::GetIO().Fonts->Build();
    state.run.phase = viz::RunPhase::Finished;
  }
  test::HeadlessImGui imgui{ImVec2(1000, 400)};

  // One frame with the mouse at (x, y) in the pane; `input` sets the rest of the frame's input.
  template <class Input>
  void frame(float x, float y, Input input) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = ImVec2(kPaneX + x, kPaneY + y);
    io.MouseWheel = 0;
    input(io);  // the left button stays as the last frame left it
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(kPaneX, kPaneY));
    ImGui::SetNextWindowSize(ImVec2(kPaneW, kPaneH));
    ImGui::Begin("timeline", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoScrollbar);
    viz::DrawTimelineView(model, state);
    ImGui::End();
    ImGui::Render();
  }
  void frame(float x = -100, float y = -100) {
    frame(x, y, [](ImGuiIO&) {});
  }

  view_model::RunModel model = finished_run();
  viz::AppState state;
};

}  // namespace

TEST_CASE("following a finished run, the timeline shows all of it, ending just after its last event") {
  TimelinePane pane;
  for (int i = 0; i < 3; ++i) pane.frame();
  const viz::TimelineViewState& v = pane.state.timeline;
  CHECK(v.follow);
  // The first event was at 1.0 ms and the last ended at 3.0 ms (rank 1's second optimizer step):
  // the run spans 2.0 ms, shown with 5% to spare and a little room after its end for "run ended".
  CHECK(v.drawn_window_ms == doctest::Approx(2.0 * 1.05));
  CHECK(v.drawn_end_ms > 2.0);
  CHECK(v.drawn_end_ms < 2.0 + 0.25 * v.drawn_window_ms + 1e-9);
  // Per rank, per step: forward, backward, the all-reduce and the optimizer step.
  CHECK(v.spans_shown == 2 * 2 * 4);
}

TEST_CASE("the wheel zooms about the mouse, a drag pans, a double-click follows again") {
  TimelinePane pane;
  for (int i = 0; i < 3; ++i) pane.frame();
  const viz::TimelineViewState& v = pane.state.timeline;
  const double window = v.drawn_window_ms, end = v.drawn_end_ms;
  // The mouse over the plot, about a third of the way across it (the rank labels' column and the
  // pane's padding come first), below the legend's line and the axis.
  const float mx = kPaneW * 0.35f, my = kPaneH * 0.6f;
  pane.frame(mx, my);
  CHECK(v.drawn_end_ms == doctest::Approx(end));
  pane.frame(mx, my, [](ImGuiIO& io) { io.MouseWheel = 1; });
  const double zoom_end = v.drawn_end_ms, zoom_window = v.drawn_window_ms;
  CHECK(zoom_window == doctest::Approx(window * 0.8));
  CHECK_FALSE(v.follow);  // zoomed in left of the end, the view no longer reaches the run's end
  // The time under the mouse stayed put: at the same fraction f of the window before and after,
  // end - window + f * window is the same time. Solved for f, it is where the mouse is.
  const double f = (zoom_end - zoom_window - (end - window)) / (window - zoom_window);
  CHECK(f > 0.2);
  CHECK(f < 0.4);
  // A drag 100 px to the right shows earlier time: the end moves back by 100 px of time, about
  // an eighth of the plot's width here.
  pane.frame(mx, my, [](ImGuiIO& io) { io.MouseDown[0] = true; });
  pane.frame(mx + 50, my);
  pane.frame(mx + 100, my);
  pane.frame(mx + 100, my, [](ImGuiIO& io) { io.MouseDown[0] = false; });
  CHECK_FALSE(v.follow);
  CHECK(v.drawn_window_ms == doctest::Approx(zoom_window));
  const double moved = (zoom_end - v.drawn_end_ms) / zoom_window;
  CHECK(moved > 0.1);
  CHECK(moved < 0.14);
  // A double-click: following the run again, all of it in view.
  for (int click = 0; click < 2; ++click) {
    pane.frame(mx, my, [](ImGuiIO& io) { io.MouseDown[0] = true; });
    pane.frame(mx, my, [](ImGuiIO& io) { io.MouseDown[0] = false; });
  }
  pane.frame();
  CHECK(v.follow);
  CHECK(v.drawn_window_ms == doctest::Approx(window));
  CHECK(v.drawn_end_ms == doctest::Approx(end));
}

// A fast run's feed leaves the details of some steps out (EventFeed), and marks their ends: the
// lane shows such a step as one that ran unseen, and the mouse over it says so, where it used to
// be an empty gap that read as the ranks idle.
TEST_CASE("a step whose details were left out says so under the mouse, not an idle gap") {
  TimelinePane pane;
  for (int r = 0; r < 2; ++r) {
    Event end = span(EventKind::StepEnd, r, 2, 3000 + r * 100, 3900 + r * 100);
    end.code = kStepDetailsLeftOut;
    pane.model.consume(end);
  }
  std::string read_out;
  for (float y = 0; y < kPaneH && read_out.find("details left out") != 0; y += 4)
    for (float x = 0; x < kPaneW && read_out.find("details left out") != 0; x += 4) {
      pane.frame(x, y);
      read_out = pane.state.timeline.span_read_out;
    }
  CHECK(read_out.rfind("details left out · rank ", 0) == 0);
  CHECK(read_out.find("training step 2") != std::string::npos);
  CHECK(read_out.find("not idle time") != std::string::npos);
  INFO(read_out);
  CHECK(read_out.find("900.0 µs, from 2.00 ms") != std::string::npos);  // the step's own length, begin to end
  // The kept steps read as before.
  pane.frame(-100, -100);
  CHECK(pane.state.timeline.span_read_out.empty());
}

TEST_CASE("an all-reduce left open says why: waiting for a peer, held at the gate, or paused") {
  TimelinePane pane;
  // Step 2 begins: rank 0 enters its all-reduce, rank 1 has not yet.
  pane.model.consume(span(EventKind::StepBegin, 0, 2, 3000, 3000));
  pane.model.consume(collective(EventKind::CollectiveBegin, 0, 2, 3100, 3100));
  pane.state.run.phase = viz::RunPhase::Running;
  pane.frame();
  CHECK(pane.state.timeline.open_label == "waiting");
  pane.state.step.mode = view_model::RingMode::Gated;
  pane.frame();
  CHECK(pane.state.timeline.open_label == "at the gate");
  // Pause closes the same gate, in any mode: the bar says the run is paused, not waiting for a peer.
  pane.state.step.mode = view_model::RingMode::Follow;
  pane.state.run.phase = viz::RunPhase::Paused;
  pane.frame();
  CHECK(pane.state.timeline.open_label == "paused");
  // Stop pressed while paused ends the ranks held there: still "paused", not a wait for a peer.
  pane.state.run.phase = viz::RunPhase::Stopped;
  pane.state.run.paused_at_stop = true;
  pane.frame();
  CHECK(pane.state.timeline.open_label == "paused");
  // Its bar, hatched in the gate's grey, says under the mouse what it is and for how long (rank 1's
  // forward pass, later, brings it into the view from the right edge; the run over, the view
  // stays still as the mouse sweeps it).
  pane.model.consume(span(EventKind::Forward, 1, 2, 3200, 3700));
  std::string read_out;
  for (float y = 0; y < kPaneH && read_out.empty(); y += 4)
    for (float x = 0; x < kPaneW && read_out.empty(); x += 4) {
      pane.frame(x, y);
      read_out = pane.state.timeline.open_read_out;
    }
  CHECK(read_out.rfind("paused: held at the gate in all-reduce #2 · rank 0 · ", 0) == 0);
  pane.state.run.paused_at_stop = false;
  pane.frame();
  CHECK(pane.state.timeline.open_label == "waiting");
  pane.state.run.phase = viz::RunPhase::Paused;
  pane.model.consume(collective(EventKind::CollectiveEnd, 0, 2, 3100, 3300));
  pane.frame();
  CHECK(pane.state.timeline.open_label.empty());
}

// A live run none of whose ranks reports anything (a PyTorch script's rank asleep before its
// first step: its peer waits in its all-reduce, and a script says the all-reduce only once it
// ends): after a second of quiet the window goes on with the clock, the open all-reduce grows with
// it, and each lane says what its rank was last seen doing, and for how long.
TEST_CASE("a live run gone quiet: the window follows the clock and each rank says where it stands") {
  TimelinePane pane;
  pane.model.consume(span(EventKind::StepBegin, 0, 2, 3000, 3000));
  pane.model.consume(span(EventKind::Forward, 0, 2, 3000, 3300));
  pane.model.consume(collective(EventKind::CollectiveBegin, 0, 2, 3400, 3400));
  pane.state.run.phase = viz::RunPhase::Running;
  // Heard from a moment ago: a run that reports, not one gone quiet.
  pane.state.run.timeline_heard_at_ns = now_ns();
  pane.frame();
  CHECK(pane.state.timeline.drawn_end_ms < 3.5);
  CHECK(pane.state.timeline.lane_notes == std::vector<std::string>{"", ""});
  // Nothing for 5 s: the window ends 5 s after the newest span's end (rank 0's forward pass, at
  // 2.3 ms on the run's clock), give or take the frame's own time.
  pane.state.run.timeline_heard_at_ns = now_ns() - 5'000'000'000;
  pane.frame();
  CHECK(pane.state.timeline.drawn_end_ms > 2.3 + 5000);
  CHECK(pane.state.timeline.drawn_end_ms < 2.3 + 5000 + 1000);
  REQUIRE(pane.state.timeline.lane_notes.size() == 2);
  CHECK(pane.state.timeline.lane_notes[0].rfind("in all-reduce #2 for 5.", 0) == 0);
  // Rank 1 last ended its step 1 at 2.0 ms on the run's clock, 0.3 ms before rank 0's newest span.
  CHECK(pane.state.timeline.lane_notes[1].rfind("silent for 5.", 0) == 0);
  CHECK(pane.state.timeline.open_label == "waiting");
  // The class's gate holds them as quiet: that is the teacher's pace, not a hang, and says nothing.
  pane.state.step.mode = view_model::RingMode::Gated;
  pane.state.gated = true;
  pane.frame();
  CHECK(pane.state.timeline.lane_notes == std::vector<std::string>{"", ""});
  CHECK(pane.state.timeline.drawn_end_ms > 2.3 + 5000);  // still with the clock, as it was
  // Stopped in the hang: its account stays, up to the Stop (Ctrl-C's "where each rank was" too).
  pane.state.step.mode = view_model::RingMode::Follow;
  pane.state.gated = false;
  pane.state.run.phase = viz::RunPhase::Stopped;
  pane.state.run.hung_for_ns_at_stop = 5'000'000'000;
  pane.state.run.hung_until_rel_ns = 2'300'000 + 5'000'000'000;
  pane.frame();
  CHECK(pane.state.timeline.drawn_end_ms > 2.3 + 5000);
  REQUIRE(pane.state.timeline.lane_notes.size() == 2);
  CHECK(pane.state.timeline.lane_notes[0] == "in all-reduce #2 for 5.00 s");
  CHECK(pane.state.timeline.lane_notes[1] == "silent for 5.00 s");
  // The teardown the Stop asked for reports after it: the hang's account is still the Stop's.
  Event torn = span(EventKind::TornDown, 0, 2, 1000 + 5'100'000, 1000 + 5'100'000);
  pane.model.consume(torn);
  pane.frame();
  REQUIRE(pane.state.timeline.lane_notes.size() == 2);
  CHECK(pane.state.timeline.lane_notes[0] == "in all-reduce #2 for 5.00 s");
  CHECK(pane.state.timeline.lane_notes[1] == "silent for 5.00 s");
  // Once it has ended otherwise, the run's time stops at its last event (the teardown's, 5.1 s),
  // with the little room after it that a finished run's end mark gets, and no hang's notes.
  pane.state.run.hung_for_ns_at_stop = pane.state.run.hung_until_rel_ns = 0;
  pane.state.run.phase = viz::RunPhase::Failed;
  pane.frame();
  CHECK(pane.state.timeline.drawn_end_ms >= 5100.0 - 1e-6);
  CHECK(pane.state.timeline.drawn_end_ms < 5100.0 * 1.3);
  CHECK(pane.state.timeline.lane_notes == std::vector<std::string>{"", ""});
}

// Replay: the timeline goes to the all-reduce the ring is set to and marks its time, so the
// class finds it among the others; leaving Replay, it follows the run again as it did before.
TEST_CASE("Replay takes the timeline to the replayed all-reduce, and Follow back when it ends") {
  TimelinePane pane;
  pane.frame();
  REQUIRE(pane.state.timeline.follow);
  REQUIRE(pane.model.collectives().size() == 2);
  view_model::set_mode(pane.state.step, view_model::RingMode::Replay);
  view_model::show_collective(pane.state.step, pane.model.collectives().at(0));  // step 0's, from 1.5 to 1.7 ms
  pane.frame();
  const viz::TimelineViewState& v = pane.state.timeline;
  CHECK(v.replay_marked);
  CHECK_FALSE(v.follow);
  CHECK(v.drawn_end_ms - v.drawn_window_ms < 1.4);  // the all-reduce in view, with some time before it
  CHECK(v.drawn_end_ms > 1.7);
  CHECK(v.drawn_end_ms < 3.0);  // not the run's end (2.9 ms and after), where following showed it
  view_model::set_mode(pane.state.step, view_model::RingMode::Follow);
  pane.frame();
  CHECK_FALSE(v.replay_marked);
  CHECK(v.follow);
}
