// The controls pane of the app's main window, drawn without a window and driven as a person drives
// it: the mouse over the pane, the wheel, a choice made. Dear ImGui's own record of the pane (its
// scroll) says where the fields were on screen.
#include <doctest/doctest.h>

#include <imgui.h>
#include <imgui_internal.h>

#include <string_view>

#include "engine/core/clock.h"
#include "engine/view_model/failure_lab.h"
#include "engine/view_model/run_model.h"
#include "tests/support/headless_imgui.h"
#include "tests/support/run_events.h"
#include "viz/app_state.h"
#include "viz/fonts.h"
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

TEST_CASE("a step that ended a moment ago gives the last second's pace") {
  MainWindow app;
  app.state.run.phase = viz::RunPhase::Running;
  steps_ended(app.model, 0.0);
  app.frame(ImVec2(900, 400));
  CHECK(app.state.said.pace == "≈ 500 µs per step (the last second)");
}
