// The controls pane of the app's main window, drawn without a window and driven as a person drives
// it: the mouse over the pane, the wheel, a choice made. Dear ImGui's own record of the pane (its
// scroll) says where the fields were on screen.
#include <doctest/doctest.h>

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/clock.h"
#include "engine/view_model/failure_lab.h"
#include "engine/view_model/run_model.h"
#include "tests/support/headless_imgui.h"
#include "tests/support/run_events.h"
#include "viz/app_state.h"
#include "viz/fonts.h"
#include "viz/layout_audit.h"
#include "viz/views.h"

using namespace ringlab;

namespace {

struct MainWindow {
  MainWindow() {
    viz::load_fonts(18.0f);
    ImGui::GetIO().Fonts->Build();
  }
  test::HeadlessImGui imgui{ImVec2(1280, 720)};
  view_model::RunModel model;
  viz::AppState state;

  // A 4-rank run on gloo trains, its all-reduces #0 to #(done - 1) finished, and the ring follows
  // it: the newest done is on screen.
  void follow_four_ranks(int64_t done) {
    for (int r = 0; r < 4; ++r) model.consume(test::run_begin_event(r, 4, "gloo"));
    test::ring_allreduces(model, 4, 0, done);
    state.run.phase = viz::RunPhase::Running;
    viz::AdvanceStepThrough(model, state);
    REQUIRE(viz::ShownCollective(model, state) != nullptr);
  }

  // A run trains, and Reset is asked about (Ctrl+R): its question drawn once.
  void ask_reset_while_running() {
    state.run.phase = viz::RunPhase::Running;
    viz::RequestReset(state);
    frame(ImVec2(900, 400));
  }

  void frame(ImVec2 mouse, float wheel = 0) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = mouse;
    io.MouseWheel = wheel;
    ImGui::NewFrame();
    viz::DrawMainWindow(model, state);
    ImGui::Render();
  }
};

const ImGuiWindow& controls_pane() {
  for (const ImGuiWindow* w : ImGui::GetCurrentContext()->Windows)
    if (std::string_view(w->Name).find("/controls_") != std::string_view::npos) return *w;
  FAIL("no controls pane drawn");
  throw;
}

}  // namespace

TEST_CASE("scrolled to its end, the controls pane does not slide under the pointer when the lab's fault is taken off") {
  MainWindow app;
  app.state.lab.settings.fault = view_model::LabFault::Kill;  // armed: the lab opens, with its rank, step and timeout rows
  const ImVec2 in_pane(120, 300), elsewhere(900, 400);
  app.frame(elsewhere);
  app.frame(elsewhere);
  for (int i = 0; i < 60; ++i) app.frame(in_pane, -5);  // the wheel, down to the pane's end
  app.frame(in_pane);
  const float end = controls_pane().Scroll.y;
  REQUIRE(end > 0);  // at 1280x720 the pane scrolls (else this test proves nothing)
  REQUIRE(end == doctest::Approx(controls_pane().ScrollMax.y));

  app.state.lab.settings.fault = view_model::LabFault::None;  // "No fault" picked: the lab's rows go
  for (int i = 0; i < 3; ++i) app.frame(in_pane);
  CHECK(controls_pane().Scroll.y == doctest::Approx(end));  // the fields above stay where they were

  // Once the pointer leaves the pane, its blank end goes and the pane settles.
  for (int i = 0; i < 3; ++i) app.frame(elsewhere);
  CHECK(controls_pane().Scroll.y < end);
}

TEST_CASE("another scenario opens the controls pane at its title, not where the last one was scrolled to") {
  MainWindow app;
  app.state.scenario.name = "first";
  const ImVec2 in_pane(120, 300);
  for (int i = 0; i < 60; ++i) app.frame(in_pane, -5);
  app.frame(in_pane);
  REQUIRE(controls_pane().Scroll.y > 0);
  app.state.scenario.name = "second";
  app.frame(in_pane);
  app.frame(in_pane);
  CHECK(controls_pane().Scroll.y == 0);
}

namespace {

// Rank 0 ended steps every 0.5 ms up to `ago_s` seconds before now (the workers' clock is this
// machine's steady clock).
void steps_ended(view_model::RunModel& model, double ago_s) {
  model.consume(test::run_begin_event(0, 1, "gloo"));
  const int64_t last = now_ns() - static_cast<int64_t>(ago_s * 1e9);
  for (int step = 0; step < 100; ++step) {
    Event e;
    e.kind = EventKind::StepEnd;
    e.rank = 0;
    e.step = step;
    e.t_end_ns = last - (99 - step) * 500'000;
    e.value = 0.5;
    model.consume(e);
  }
}

}  // namespace

TEST_CASE("the status says no step has ended for seconds only once the app has read every event that came") {
  MainWindow app;
  app.state.run.phase = viz::RunPhase::Running;
  steps_ended(app.model, 5.0);
  REQUIRE(app.model.live_us_per_step() == doctest::Approx(500).epsilon(0.01));
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.pace == "no step for 5 s (before that ≈ 500 µs per step)");  // a stall: nothing more came

  // The same newest step while thousands of the workers' events wait to be read: the app is
  // behind, not the workers.
  app.state.run.events_queued = 3000;
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.pace == "≈ 500 µs per step (the last second)");
}

// A script whose rank 1 slept before training: rank 0's first step waited 25 s in its all-reduce,
// the other fifteen took 1 ms. The status said "1,563,438 µs per step", the mean of no step.
TEST_CASE("after a run with one step far slower than the rest, the status names it beside the others' pace") {
  MainWindow app;
  app.model.consume(test::run_begin_event(0, 2, "gloo"));
  for (int step = 0; step < 16; ++step) {
    Event e;
    e.kind = EventKind::StepEnd;
    e.rank = 0;
    e.step = step;
    e.t_begin_ns = 1'000'000'000 + step * 30'000'000'000LL;
    e.t_end_ns = e.t_begin_ns + (step == 0 ? 25'000'000'000 : 1'000'000);
    e.value = 0.5;
    app.model.consume(e);
  }
  app.state.run.phase = viz::RunPhase::Finished;
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.pace == "1,000 µs per step, but step 0 took 25.00 s (mean 1,563,438 µs)");
}

// The same script while it hangs: rank 0 has begun its first all-reduce, rank 1 sleeps. The ring's
// line said "Waiting for the first ring all-reduce", as if no rank had come to one.
TEST_CASE("before its first all-reduce ends, the ring says which ranks it waits for") {
  MainWindow app;
  for (int r = 0; r < 3; ++r) app.model.consume(test::run_begin_event(r, 3, "gloo"));
  app.state.run.phase = viz::RunPhase::Running;
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.ring_banner == "Waiting for the first ring all-reduce");
  Event begin;
  begin.kind = EventKind::CollectiveBegin;
  begin.rank = 0;
  begin.step = 0;
  begin.collective_id = 2;
  begin.bucket = 0;
  begin.bytes = 10948;
  begin.text = "native";
  begin.t_begin_ns = begin.t_end_ns = 1'000'000'000;
  app.model.consume(begin);
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.ring_banner == "All-reduce #2 (step 0, bucket 0) waits for ranks 1, 2");
  begin.rank = 2;
  app.model.consume(begin);
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.ring_banner == "All-reduce #2 (step 0, bucket 0) waits for rank 1");
}

// A newcomer chose the Straggler with a PyTorch script loaded and pressed Start: the script trained
// as if nothing was chosen (ringlab's workers inject the lab's faults), under the lab's lesson of
// a straggler. Nor does ringlab's gate hold a script: Pause read "paused" while it trained on.
TEST_CASE("with a PyTorch script, the lab injects nothing and the menu bar names no fault; without, it names the armed one") {
  MainWindow app;
  const std::string script = "/tmp/train.py";
  script.copy(app.state.torch.path.data(), script.size());
  app.state.torch.use = true;
  app.state.job.world_size = 4;
  app.state.lab.settings.fault = view_model::LabFault::Delay;
  app.state.lab.settings.rank = 1;
  app.frame(ImVec2(900, 400));
  CHECK(app.state.job.faults.empty());
  CHECK(app.state.said.menu_bar.find("fault") == std::string::npos);
  CHECK(viz::ScriptRun(app.state));
  // The engine's run again: the lab's fault goes with the next Start, and the menu bar says so.
  app.state.torch.use = false;
  app.frame(ImVec2(900, 400));
  app.frame(ImVec2(900, 400));
  CHECK(app.state.job.faults == std::vector<std::string>{"delay:1:20"});
  CHECK(app.state.said.menu_bar == "4 ranks, gloo, ring, lr 0.03 · fault: Straggler (delay every step), rank 1");
}

// Stepped through, then changed from 4 ranks to 2 and let go: the figure is the new world's steps
// (the workers count theirs afresh), and the status said so of no world.
TEST_CASE("after a live change, the ungated step time names the world it counts") {
  MainWindow app;
  for (int r = 0; r < 4; ++r) app.model.consume(test::run_begin_event(r, 4, "gloo"));
  for (int r = 0; r < 2; ++r) app.model.consume(test::run_begin_event(r, 2, "gloo"));
  for (int step = 0; step < 44; ++step) {
    Event e;
    e.kind = EventKind::StepEnd;
    e.rank = 0;
    e.step = 100 + step;
    e.t_begin_ns = 1'000'000'000 + step * 1'000'000LL;
    e.t_end_ns = e.t_begin_ns + 153'000;
    app.model.consume(e);
  }
  REQUIRE(app.model.generations().size() == 2);
  app.state.run.phase = viz::RunPhase::Finished;
  app.state.run.stepped = true;
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.pace == "153 µs per step over the last world's 44 steps the gate did not hold (2 ranks)");
}

// Mid-run, rank 1 stalls: ranks 0, 2 and 3 wait in the next all-reduce. The ring said "All-reduce
// done: every rank holds the sum" of the last one for as long as it lasted.
TEST_CASE("a run gone quiet: under the last all-reduce done, the ring names the one they wait in") {
  MainWindow app;
  app.follow_four_ranks(5);
  for (int r : {0, 2, 3}) app.model.consume(test::collective_event(EventKind::CollectiveBegin, r, 5, 32));
  app.state.run.timeline_heard_at_ns = now_ns();  // reporting: nothing to say
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.ring_gate.find("waits for") == std::string::npos);
  app.state.run.timeline_heard_at_ns = now_ns() - 20'000'000'000;
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.ring_gate == "Nothing reported for 20 s: All-reduce #5 (step 5, bucket 0) waits for rank 1");
}

// Space held the ring in the last run, and the hold stays into the next: the whole new run showed
// one all-reduce, and only the button's "Play" said why.
TEST_CASE("following a run with the ring held, the ring says it is held and how to go on") {
  MainWindow app;
  app.follow_four_ranks(3);
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.ring_gate.rfind("Held", 0) == std::string::npos);
  viz::TogglePlay(app.state);
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.ring_gate == "Held: the ring stays on this all-reduce while the workers train on; Space (or Play) goes on");
}

TEST_CASE("a step that ended a moment ago gives the last second's pace") {
  MainWindow app;
  app.state.run.phase = viz::RunPhase::Running;
  steps_ended(app.model, 0.0);
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.pace == "≈ 500 µs per step (the last second)");
}

TEST_CASE("a run whose ranks end no step says so after a few seconds, not before") {
  MainWindow app;
  app.state.run.phase = viz::RunPhase::Running;
  app.model.consume(test::run_begin_event(0, 2, "gloo"));
  app.state.run.elapsed_s = 1.0;  // just started: nothing to say yet
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.pace == "");
  app.state.run.elapsed_s = 12.4;  // a hang before the first step ended, or a script still importing
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.pace == "no step reported yet, 12 s after Start");
  app.state.run.phase = viz::RunPhase::Paused;  // held by Pause: the quiet is the person's
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.pace == "");
}

TEST_CASE("Ctrl+Q while Reset is asked: the Quit question replaces it, on screen alone") {
  MainWindow app;
  app.ask_reset_while_running();
  CHECK(app.state.said.reset_meanwhile == "Until you answer, the run goes on.");
  viz::RequestQuit(app.state);  // asked, not quit: the first Ctrl+Q of this question
  CHECK_FALSE(app.state.requests.quit);
  for (int i = 0; i < 3; ++i) app.frame(ImVec2(900, 400));
  // Both asked at once, each question's window took the screen from the other every frame.
  CHECK_FALSE(app.state.pending_reset);
  CHECK(app.state.pending_quit);
  CHECK(app.state.said.reset_meanwhile.empty());
  CHECK(app.state.said.quit_meanwhile == "Until you answer, the run goes on. Ctrl+Q again quits.");
  viz::RequestQuit(app.state);
  CHECK(app.state.requests.quit);
}

TEST_CASE("stepping through with Play off, a question says the workers stay held at the gate") {
  MainWindow app;
  app.state.step.mode = view_model::RingMode::Gated;
  app.state.step.playing = false;
  app.ask_reset_while_running();
  CHECK(app.state.said.reset_meanwhile == "Until you answer, the workers stay held at the step-through gate.");
  app.state.step.playing = true;  // Play lets them through meanwhile
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.reset_meanwhile == "Until you answer, the run goes on.");
}

TEST_CASE("F5 behind an open question starts nothing; Ctrl+Q still asks its own in its place") {
  MainWindow app;
  app.ask_reset_while_running();
  app.state.run.phase = viz::RunPhase::Stopped;  // Shift+F5 meanwhile: "The run has ended meanwhile"
  viz::QueueKeyPress(GLFW_KEY_F5, 0, false);
  viz::QueueKeyPress(GLFW_KEY_SPACE, 0, false);
  viz::HandleShortcuts(app.model, app.state);
  // A run started behind it, and the open question's Reset then threw that run away.
  CHECK_FALSE(app.state.requests.start);
  CHECK(app.state.pending_reset);
  app.state.run.phase = viz::RunPhase::Running;
  viz::QueueKeyPress(GLFW_KEY_Q, GLFW_MOD_CONTROL, false);
  viz::HandleShortcuts(app.model, app.state);
  CHECK(app.state.pending_quit);
  CHECK_FALSE(app.state.pending_reset);
}

TEST_CASE("after a restart the ring numbers its all-reduces since the restart, not since a change of world") {
  MainWindow app;
  app.state.run.phase = viz::RunPhase::Running;
  for (int r = 0; r < 4; ++r) app.model.consume(test::run_begin_event(r, 4, "gloo"));
  test::ring_allreduces(app.model, 4, 1, 5);
  for (int r = 0; r < 4; ++r) app.model.consume(test::run_begin_event(r, 4, "gloo"));  // --max-restarts: the same world again
  test::ring_allreduces(app.model, 4, 1, 3);
  app.state.frame_dt_s = 0.1;
  for (int i = 0; i < 3; ++i) {
    viz::AdvanceStepThrough(app.model, app.state);  // following: the newest all-reduce on screen
    app.frame(ImVec2(900, 400));
  }
  CHECK(app.state.said.ring_number == "all-reduce #2 since the restart");
}

TEST_CASE("Replay during a live run offers the all-reduces its copy holds whole, not one the workers were still in") {
  MainWindow app;
  app.state.run.phase = viz::RunPhase::Running;
  for (int r = 0; r < 4; ++r) app.model.consume(test::run_begin_event(r, 4, "gloo"));
  test::ring_allreduces(app.model, 4, 1, 5);  // #1 to #4, finished
  for (int r = 0; r < 4; ++r)  // #5 begun by every rank, no ring step taken yet
    app.model.consume(test::collective_event(EventKind::CollectiveBegin, r, 5, 2 * 4 * 4));
  app.state.frame_dt_s = 0.1;
  viz::SetRingMode(app.model, app.state, viz::RingMode::Replay);
  for (int i = 0; i < 2; ++i) {
    viz::AdvanceStepThrough(app.model, app.state);
    app.frame(ImVec2(900, 400));
  }
  // Chosen at "5 of 5", #5 showed no step and Next was greyed: the end of the copy.
  CHECK(app.state.said.replay_slot == "4 of 4");
}

// Stepped through, Previous back into an older all-reduce, then a live change from 4 ranks to 2:
// the note under the ring called the one on screen "the last one before the change"; once the
// new world had taken a ring step it said "moved on to all-reduce #1", a number the old world had
// used long before.
TEST_CASE("a live change after Previous: the ring says which all-reduce of the old world is on screen, and numbers the new one since the change") {
  MainWindow app;
  app.state.run.phase = viz::RunPhase::Running;
  for (int r = 0; r < 4; ++r) app.model.consume(test::run_begin_event(r, 4, "gloo"));
  test::ring_allreduces(app.model, 4, 1, 6);  // #1 to #5
  viz::SetRingMode(app.model, app.state, viz::RingMode::Gated);
  app.state.frame_dt_s = 0.1;
  viz::AdvanceStepThrough(app.model, app.state);
  for (int i = 0; i <= 2 * 3; ++i) viz::StepBack(app.model, app.state);
  app.frame(ImVec2(900, 400));
  REQUIRE(app.state.said.ring_number == "all-reduce #4");
  // How many presses the rest is: #4's six steps from its start, then one fewer after a Next.
  CHECK(app.state.said.ring_gate ==
        "The workers have moved on to all-reduce #5: Next shows the rest of this one first (6 more steps)");
  viz::StepForward(app.model, app.state);
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.ring_gate ==
        "The workers have moved on to all-reduce #5: Next shows the rest of this one first (5 more steps)");
  for (int r = 0; r < 2; ++r) app.model.consume(test::run_begin_event(r, 2, "gloo"));
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.ring_gate ==
        "The world now running (2 ranks) has no all-reduce yet: shown, all-reduce #4 of the 4 ranks before the change (their "
        "last: #5); 5 more steps");
  test::ring_allreduces(app.model, 2, 1, 2);
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.ring_number == "all-reduce #4");
  CHECK(app.state.said.ring_gate ==
        "The workers have moved on to all-reduce #1 since the change to 2 ranks: Next shows the rest of this one first (5 more "
        "steps)");
}

// The engine's bucket fields showed 0 for PyTorch's default, where a script's run showed the
// same default as 25600: one value, one way of writing it.
TEST_CASE("the bucket fields show PyTorch's defaults as their values, as a script's run does") {
  MainWindow app;
  app.frame(ImVec2(900, 400));
  REQUIRE(app.state.said.job_fields.contains("bucket_cap"));
  CHECK(app.state.said.job_fields.at("bucket_cap") == 25600);
  CHECK(app.state.said.job_fields.at("first_bucket") == 1024);
  app.state.job.bucket_cap_kb = 4;
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.job_fields.at("bucket_cap") == 4);
  CHECK(app.state.said.job_fields.at("first_bucket") == 1024);
}

// Two live changes, 4 ranks -> 2 -> 3, with Previous back into the 4-rank world's #2 before the
// second: the note called it "the last all-reduce before the change", which was the 2-rank world's.
TEST_CASE("after two live changes, an all-reduce of the first world on screen is named as an earlier world's") {
  MainWindow app;
  app.state.run.phase = viz::RunPhase::Running;
  for (int r = 0; r < 4; ++r) app.model.consume(test::run_begin_event(r, 4, "gloo"));
  test::ring_allreduces(app.model, 4, 1, 3);  // #1, #2
  for (int r = 0; r < 2; ++r) app.model.consume(test::run_begin_event(r, 2, "gloo"));
  test::ring_allreduces(app.model, 2, 1, 2);  // the 2-rank world's #1
  viz::SetRingMode(app.model, app.state, viz::RingMode::Gated);
  app.state.frame_dt_s = 0.1;
  viz::AdvanceStepThrough(app.model, app.state);
  for (int i = 0; i < 12 && app.state.said.ring_number != "all-reduce #2"; ++i) {  // back into the 4-rank #2
    viz::StepBack(app.model, app.state);
    app.frame(ImVec2(900, 400));
  }
  REQUIRE(app.state.said.ring_number == "all-reduce #2");
  for (int r = 0; r < 3; ++r) app.model.consume(test::run_begin_event(r, 3, "gloo"));
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.ring_gate == "The world now running (3 ranks) has no all-reduce yet: shown, all-reduce #2 of an "
                                    "earlier world (4 ranks), before the change before this one");
}

// Paused while the ring played a fast run's all-reduce slowly: it said "Paused: the workers wait
// at the gate before their next ring step" under an all-reduce thousands of steps old.
TEST_CASE("paused while following, an all-reduce played behind the workers is said to be one") {
  MainWindow app;
  app.follow_four_ranks(5);  // #4, of training step 4, on screen
  Event step;
  step.kind = EventKind::StepEnd;
  step.rank = 0;
  step.step = 2766;
  step.t_begin_ns = 1'000'000'000;
  step.t_end_ns = step.t_begin_ns + 400'000;
  app.model.consume(step);
  app.state.run.phase = viz::RunPhase::Paused;
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.ring_gate == "Paused at training step 2,766: the workers wait at the gate before their next ring step; "
                                    "shown, an all-reduce of step 4 that was being played slowly. Resume lets them go");
}

// At 1.5x text, World size 1 while paused was refused below the controls pane's fold: the slider
// snapped back to 4 and nothing on screen said why. The pane now scrolls the refusal into view.
TEST_CASE("a refusal said under the controls is scrolled into view when the pane cut it off") {
  MainWindow app;
  viz::load_fonts(27.0f);  // text 1.5x in a 1280x720 window
  ImGui::GetIO().Fonts->Build();
  app.state.run.phase = viz::RunPhase::Paused;
  app.state.run.message = "One rank has no ring steps to hold at the gate: paused, it would train on. Resume first, or "
                          "choose 2 ranks or more.";
  app.frame(ImVec2(900, 400));
  app.frame(ImVec2(900, 400));
  REQUIRE(controls_pane().Scroll.y == 0);  // said, but not asked to be shown: the pane stays where it is
  app.state.run.reveal_message = true;
  app.frame(ImVec2(900, 400));
  app.frame(ImVec2(900, 400));
  CHECK(controls_pane().Scroll.y > 0);
  CHECK_FALSE(app.state.run.reveal_message);
}

// The scenario's two nodes of 2 ranks, and the World size moved after a run: 8 ranks keep two
// nodes of 4; 5 go on one node, and the pane says why (the nodes went without a word before).
TEST_CASE("another world size keeps the scenario's nodes where it splits evenly, and says so where it does not") {
  MainWindow app;
  app.state.scenario.job.world_size = 4;
  app.state.scenario.job.ranks_per_node = {2, 2};
  app.state.job = app.state.scenario.job;
  app.state.run.phase = viz::RunPhase::Finished;  // the world's note shows once a run has been
  const auto lines_after = [&](int world) {
    viz::SetWorldSize(app.state, world);
    app.frame(ImVec2(900, 400));
    app.frame(ImVec2(900, 400));
    return viz::AuditLayout(ImGui::GetDrawData()).texts;
  };
  const auto has = [](const std::vector<std::string>& lines, std::string_view start) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(start, 0) == 0; });
  };
  std::vector<std::string> lines = lines_after(8);
  CHECK(app.state.job.ranks_per_node == std::vector<int>{4, 4});
  CHECK(has(lines, "2 nodes of 4 ranks"));
  lines = lines_after(5);
  CHECK(app.state.job.ranks_per_node.empty());
  CHECK(has(lines, "On one node"));
  lines = lines_after(4);
  CHECK(app.state.job.ranks_per_node == std::vector<int>{2, 2});
  CHECK_FALSE(has(lines, "On one node"));
  CHECK(has(lines, "2 nodes of 2 ranks"));  // at the scenario's own world too: the rows under it stay put
}

// The World size tip is long: shown at once it covered the value a drag had just set, and the
// "Set here" line under it. It waits for the pointer to rest half a second on the slider, and
// not within two seconds of a change.
TEST_CASE("the World size tip waits for the pointer to rest, and not right after a change") {
  MainWindow app;
  const auto tip_shown = [&] {
    const viz::LayoutAudit a = viz::AuditLayout(ImGui::GetDrawData());
    return std::any_of(a.texts.begin(), a.texts.end(), [](const std::string& t) { return t.rfind("How many worker", 0) == 0; });
  };
  const ImVec2 away(900, 400);
  app.frame(away);
  app.frame(away);
  const ImVec2 on_slider((app.state.world_slider.x0 + app.state.world_slider.x1) / 2, app.state.world_slider.y);
  int frames_to_tip = 0;
  for (; frames_to_tip < 120 && (app.frame(on_slider), !tip_shown()); ++frames_to_tip) {
  }
  CHECK(frames_to_tip >= 25);  // half a second at 60 frames a second, not the first frame
  CHECK(frames_to_tip < 60);
  // A click on + changes the world: the tip stays away two seconds, the pointer resting on the slider.
  const ImVec2 plus(app.state.world_slider.plus_x, app.state.world_slider.y);
  ImGuiIO& io = ImGui::GetIO();
  const int before = app.state.job.world_size;
  app.frame(plus);
  io.MouseDown[0] = true;
  app.frame(plus);
  io.MouseDown[0] = false;
  app.frame(plus);
  CHECK(app.state.job.world_size == before + 1);
  int quiet = 0;
  for (; quiet < 240 && (app.frame(on_slider), !tip_shown()); ++quiet) {
  }
  CHECK(quiet >= 100);  // about two seconds since the click
  CHECK(quiet < 240);
}
