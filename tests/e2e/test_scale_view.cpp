// The Scale view's words about the live run, drawn without a window: a 4-rank run's all-reduces of
// the seed's 10.7 KiB bucket, each 900 µs, against the links it can be compared with. Measured on
// loopback TCP (gloo), they are compared with loopback TCP's model whichever link is chosen; a
// chosen NVLink only says what the same size would take there. Compared with NVLink's model, the
// view called the run "100x" slower than a link it never used.
#include <doctest/doctest.h>

#include <imgui.h>

#include <cstdint>
#include <string>

#include "engine/view_model/run_model.h"
#include "tests/support/headless_imgui.h"
#include "tests/support/run_events.h"
#include "viz/app_state.h"
#include "viz/fonts.h"
#include "viz/log_plot.h"
#include "viz/plot.h"
#include "viz/views.h"

using namespace ringlab;

namespace {

constexpr int kRanks = 4;
constexpr int64_t kBucketBytes = 2737 * 4;

// A run on `backend` whose gradient all-reduces (ids 2..11, after the start-up's) take 900 µs.
view_model::RunModel run_on(const std::string& backend) {
  view_model::RunModel model;
  for (int r = 0; r < kRanks; ++r) model.consume(test::run_begin_event(r, kRanks, backend));
  for (int64_t id = 2; id < 12; ++id) {
    const int64_t t0 = id * 10'000'000;
    for (int r = 0; r < kRanks; ++r) model.consume(test::collective_event(EventKind::CollectiveBegin, r, id, kBucketBytes, t0));
    for (int r = 0; r < kRanks; ++r) model.consume(test::collective_event(EventKind::CollectiveEnd, r, id, kBucketBytes, t0 + 900'000));
  }
  return model;
}

// The view drawn once over `model`, as the main window does.
void draw_scale(const view_model::RunModel& model, viz::AppState& state) {
  ImGui::NewFrame();
  ImGui::SetNextWindowPos(ImVec2(10, 10));
  ImGui::SetNextWindowSize(ImVec2(1000, 600));
  ImGui::Begin("scale", nullptr, ImGuiWindowFlags_NoDecoration);
  viz::DrawScaleView(model, state);
  ImGui::End();
  ImGui::Render();
}

std::string note_against(const std::string& backend, const std::string& link) {
  test::HeadlessImGui imgui{ImVec2(1400, 1000)};
  viz::load_fonts(14.0f);
  ImGui::GetIO().Fonts->Build();
  viz::AppState state;
  state.job.backend = backend;
  state.scale.link = link;
  draw_scale(run_on(backend), state);
  return state.said.scale_note;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("the live run is measured against its own link; a chosen faster link says what it would take") {
  const std::string own = note_against("gloo", "this-machine");
  INFO(own);
  CHECK(has(own, "Live run, 4 ranks (ringlab's ring): one message size (10 all-reduces)."));
  CHECK(has(own, "Against the chosen link (this machine: loopback TCP (gloo)): 10.7 KiB: 900 µs, model "));

  const std::string nvlink = note_against("gloo", "nvlink4");
  INFO(nvlink);
  CHECK(has(nvlink, "Against its own link (this machine: loopback TCP (gloo)): 10.7 KiB: 900 µs, model "));
  CHECK(has(nvlink, "On the chosen link (NVLink 4 (H100)) the model gives 10.7 KiB: "));
  CHECK_FALSE(has(nvlink, "Against the chosen link"));
  // The same words as with loopback chosen, up to where the chosen link comes in.
  CHECK(nvlink.substr(0, nvlink.find(". On the chosen")) ==
        own.substr(0, own.find(". ", own.find("Against"))).replace(own.find("Against the chosen link"), 23, "Against its own link"));

  // MPI's ranks share memory: their own link is the shared-memory preset.
  const std::string mpi = note_against("mpi", "100gbe");
  INFO(mpi);
  CHECK(has(mpi, "Against its own link (this machine: shared memory (MPI)): 10.7 KiB: 900 µs"));
  CHECK(has(mpi, "On the chosen link (100 Gb Ethernet)"));
  // NCCL has no preset measured on this machine: the chosen link stays the one compared with.
  CHECK(has(note_against("nccl", "nvlink4"), "Against the chosen link (NVLink 4 (H100)): 10.7 KiB: 900 µs"));
}

TEST_CASE("the link within a node follows the job's backend to its own transport, until another is chosen") {
  test::HeadlessImGui imgui{ImVec2(1400, 1000)};
  viz::load_fonts(14.0f);
  ImGui::GetIO().Fonts->Build();
  viz::AppState state;
  CHECK(state.scale.link == "this-machine");  // gloo, the default backend: loopback TCP
  state.job.backend = "mpi";
  draw_scale(run_on("mpi"), state);
  CHECK(state.scale.link == "this-machine-shm");  // MPI's ranks on one host share memory
  CHECK(has(state.said.scale_note, "Against the chosen link (this machine: shared memory (MPI)): 10.7 KiB: 900 µs"));
  state.job.backend = "nccl";  // no preset measured here: the link stays
  draw_scale(run_on("nccl"), state);
  CHECK(state.scale.link == "this-machine-shm");
  state.job.backend = "gloo";
  draw_scale(run_on("gloo"), state);
  CHECK(state.scale.link == "this-machine");
  state.scale.link = "100gbe";  // chosen: changing the backend keeps it
  state.job.backend = "mpi";
  draw_scale(run_on("mpi"), state);
  CHECK(state.scale.link == "100gbe");
}

// At 1.5x text in a 1280x720 window the Scale view's plots have room for about two labels an axis;
// each took one ("1 s", "1 MiB"), which gives no scale.
TEST_CASE("a small log plot's axes keep two round ticks at least, or every one that fits") {
  using V = std::vector<double>;
  CHECK(viz::decade_ticks(1e-5, 20, 2) == V{1e-3, 1});          // 3 at k = 3 was too many; 6 left only 1
  CHECK(viz::decade_ticks(1e-5, 20, 3) == V{1e-4, 1e-2, 1});
  CHECK(viz::decade_ticks(1e-5, 20, 10) == V{1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10});
  CHECK(viz::power_of_two_ticks(8, 8.0 * (1 << 30), 2) == V{1024, 1 << 30});  // 1 KiB and 1 GiB
  CHECK(viz::power_of_two_ticks(8, 8.0 * (1 << 30), 3) == V{1024, 1 << 20, 1 << 30});
  CHECK(viz::power_of_two_ticks(3000, 5000, 4) == V{4096});  // less than a power of two: the one there is
}

// The largest bucket's label was drawn before the curves, which crossed its words ("124M:
// largest bucket 168 MiB" under the orange line): it now goes where the fewest curves pass.
TEST_CASE("a plot's label counts the curve segments it would hide") {
  const std::vector<std::vector<ImVec2>> lines = {
      {ImVec2(0, 100), ImVec2(100, 100), ImVec2(200, 0)},  // flat, then rising across the top right
      {ImVec2(0, 90), ImVec2(200, 90)},                    // flat under the first
  };
  CHECK(viz::segments_through(lines, ImVec2(10, 10), ImVec2(60, 30)) == 0);    // top left: nothing there
  CHECK(viz::segments_through(lines, ImVec2(140, 30), ImVec2(190, 50)) == 1);  // the rising segment
  CHECK(viz::segments_through(lines, ImVec2(10, 85), ImVec2(60, 105)) == 2);   // both flat segments
  CHECK(viz::segments_through(lines, ImVec2(150, 95), ImVec2(190, 99)) == 0);  // between them, under the rise
  // A long segment that crosses a small box between its ends is seen, not only its ends.
  CHECK(viz::segments_through({{ImVec2(0, 0), ImVec2(1000, 1000)}}, ImVec2(500, 500), ImVec2(504, 504)) == 1);
  // One that clips a box's corner by a fraction of a pixel is seen too; one that passes it is not.
  CHECK(viz::segments_through({{ImVec2(0, 109.5f), ImVec2(1000, 90.5f)}}, ImVec2(100, 100), ImVec2(200, 108)) == 1);
  CHECK(viz::segments_through({{ImVec2(0, 210), ImVec2(210, 0)}}, ImVec2(100, 100), ImVec2(104, 104)) == 0);
  CHECK(viz::segments_through({{ImVec2(0, 207.5f), ImVec2(207.5f, 0)}}, ImVec2(100, 100), ImVec2(104, 104)) == 1);
  CHECK(viz::segments_through({{ImVec2(50, 102), ImVec2(50, 102)}}, ImVec2(40, 100), ImVec2(60, 104)) == 1);  // a point
}

// Stepping through at the gate (Start greyed), the view said "press Start": the held all-reduces
// are left out of the measurement, and it now says so.
TEST_CASE("before any live point, the note says what brings one: Start, the run going on, or Follow live") {
  test::HeadlessImGui imgui{ImVec2(1400, 1000)};
  viz::load_fonts(14.0f);
  ImGui::GetIO().Fonts->Build();
  view_model::RunModel none;
  viz::AppState state;
  draw_scale(none, state);
  CHECK(state.said.scale_note.rfind("No live all-reduce yet: press Start", 0) == 0);
  state.run.phase = viz::RunPhase::Running;
  draw_scale(none, state);
  CHECK(state.said.scale_note.rfind("No live all-reduce measured yet: the run's own all-reduces appear", 0) == 0);
  state.step.mode = viz::RingMode::Gated;
  draw_scale(none, state);
  CHECK(state.said.scale_note.rfind("No live all-reduce measured yet: those stepped through at the gate are left out", 0) == 0);
}
