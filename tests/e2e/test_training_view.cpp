// The Training view's hover read-out, driven without a window: the mouse swept across the loss
// plot of a finished 2-rank run whose epochs' MSE sits at steps 4 and 8 (an epoch of 4 steps).
#include <doctest/doctest.h>

#include <imgui.h>

#include <map>
#include <string>

#include "engine/view_model/run_model.h"
#include "tests/support/headless_imgui.h"
#include "tests/support/run_events.h"
#include "viz/app_state.h"
#include "viz/fonts.h"
#include "viz/layout_audit.h"
#include "viz/rank_colors.h"
#include "viz/theme.h"
#include "viz/views.h"

using namespace ringlab;

namespace {

view_model::RunModel two_epochs(int ranks = 2) {
  view_model::RunModel model;
  for (int r = 0; r < ranks; ++r) model.consume(test::run_begin_event(r, ranks, "gloo"));
  for (int s = 0; s < 8; ++s) {
    for (int r = 0; r < ranks; ++r) model.consume(test::step_end_event(r, s, s / 4, 2.0 / (1 + s) + 0.1 * r));
    if (s % 4 == 3) {
      Event e;
      e.kind = EventKind::EpochEnd;
      e.rank = 0;
      e.epoch = s / 4;
      e.step = s + 1;
      e.value = 1.5 / (1 + s);
      model.consume(e);
    }
  }
  return model;
}

// A live change to `ranks` ranks after two_epochs' run, whose new world trains one step more
// (step 8); 0: none.
void change_after_two_epochs(view_model::RunModel& model, int ranks) {
  for (int r = 0; r < ranks; ++r) model.consume(test::run_begin_event(r, ranks, "gloo"));
  for (int r = 0; r < ranks; ++r) model.consume(test::step_end_event(r, 8, 2, 0.2));
}

// One frame of the Training view alone in a pane of `size` at (10, 10).
void draw_in_pane(const view_model::RunModel& model, viz::AppState& state, ImVec2 size) {
  ImGui::NewFrame();
  ImGui::SetNextWindowPos(ImVec2(10, 10));
  ImGui::SetNextWindowSize(size);
  ImGui::Begin("training", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoScrollbar);
  viz::DrawTrainingView(model, state);
  ImGui::End();
  ImGui::Render();
}

// The read-out's first line ("step 5") and the whole of it, for every step the sweep met: the
// last frame of each, the mouse nearest the step's right half (a curve says nothing a few pixels
// before its first point).
// `earlier`: runs kept before it, as overlays, of `kept` kept in the session (the app keeps the newest few).
std::map<std::string, std::string> sweep(size_t earlier = 0, size_t kept = 0, bool by_epoch = false) {
  test::HeadlessImGui imgui{ImVec2(1000, 600)};
  viz::load_fonts(18.0f);
  ImGui::GetIO().Fonts->Build();
  const view_model::RunModel model = two_epochs();
  viz::AppState state;
  for (size_t i = 0; i < earlier; ++i) state.overlays.push_back(model.loss());
  state.overlays_kept = kept;
  state.run.phase = viz::RunPhase::Finished;
  state.training.log_scale = false;
  state.training.by_epoch = by_epoch;
  std::map<std::string, std::string> seen;
  for (float x = 0; x < 800; x += 3) {
    ImGui::GetIO().MousePos = ImVec2(10 + x, 10 + 400);
    draw_in_pane(model, state, ImVec2(800, 500));
    const std::string& out = state.said.loss_read_out;
    if (!out.empty()) seen[out.substr(0, out.find('\n'))] = out;
  }
  return seen;
}

// A finished 4-rank run beside two earlier runs, drawn in a Training pane of `pane` at the text
// size of a 1280x720 window.
// `then`: a live change to that many ranks after the two epochs, which train one step more (0: none).
viz::SaidOnScreen four_ranks_in(ImVec2 pane, int then = 0) {
  test::HeadlessImGui imgui{ImVec2(1000, 800)};
  viz::load_fonts(14.0f);
  ImGui::GetIO().Fonts->Build();
  view_model::RunModel model = two_epochs(4);
  change_after_two_epochs(model, then);
  viz::AppState state;
  state.overlays = {model.loss(), model.loss()};
  state.overlays_kept = 2;
  state.run.phase = viz::RunPhase::Finished;
  draw_in_pane(model, state, pane);
  return state.said;
}

}  // namespace

TEST_CASE("in the small pane of a 1280x720 window the ranks share a legend entry, so the plot keeps its height") {
  // The pane beside the ring: a legend entry per rank took a second line and left the plot a
  // strip a few ticks high (a PyTorch script side by side with the engine took a third).
  const viz::SaidOnScreen small = four_ranks_in(ImVec2(390, 200));
  CHECK(small.loss_legend == std::vector<std::string>{"earlier runs 1–2", "ranks 0–3", "MSE"});
  // After a live change to 3 ranks rank 3's curve ends at the marker: the entry says who trains now.
  CHECK(four_ranks_in(ImVec2(390, 200), 3).loss_legend ==
        std::vector<std::string>{"earlier runs 1–2", "ranks 0–3 (0–2 since the change)", "MSE"});
  CHECK(small.loss_plot_height >= 110);  // 100 under a legend of two lines
  // Enlarged, every rank is named.
  const viz::SaidOnScreen big = four_ranks_in(ImVec2(800, 500));
  CHECK(big.loss_legend.size() == 7);
  CHECK(big.loss_legend[2] == "rank 0");
  CHECK(big.loss_plot_height >= 300);
}

TEST_CASE("the loss read-out names the step of a sparse curve's point when it is not the step under the mouse") {
  const std::map<std::string, std::string> seen = sweep();
  REQUIRE(seen.count("step 4"));
  REQUIRE(seen.count("step 5"));
  // At step 4 the epoch's MSE is the step's own; at step 5 the nearest MSE is still step 4's.
  CHECK(seen.at("step 4").find("MSE, whole dataset: ") != std::string::npos);
  CHECK(seen.at("step 5").find("MSE, whole dataset (at step 4): ") != std::string::npos);
  CHECK(seen.at("step 5").find("rank 0 loss (its own batch): ") != std::string::npos);
  // Left of the axis's start (its margin is part of the plot) the read-out is of step 0.
  CHECK(seen.count("step 0"));
  CHECK_FALSE(seen.count("step -1"));
}

// Nine runs in a session, the newest six kept: the two shown here are runs 8 and 9, named so
// (they were "earlier run 1" and "2", though the session's first runs were long gone).
TEST_CASE("earlier runs are named by their place among the session's runs") {
  const std::map<std::string, std::string> seen = sweep(2, 9);
  REQUIRE(seen.count("step 4"));
  const std::string& out = seen.at("step 4");
  CHECK(out.find("earlier run 8: MSE") != std::string::npos);
  CHECK(out.find("earlier run 9: MSE") != std::string::npos);
  CHECK(out.find("earlier run 1:") == std::string::npos);
}

// The last epoch's MSE sits at the step the run ended on, the plot's right edge: its dot was
// clipped to the plot's frame and showed as a half dot. Every vertex of the MSE in its own
// colour (the dots, the line) lies inside its draw command's clip rectangle.
TEST_CASE("the MSE's dot on the plot's right edge is drawn whole") {
  test::HeadlessImGui imgui{ImVec2(1000, 600)};
  viz::load_fonts(18.0f);
  ImGui::GetIO().Fonts->Build();
  const view_model::RunModel model = two_epochs();
  viz::AppState state;
  state.run.phase = viz::RunPhase::Finished;
  draw_in_pane(model, state, ImVec2(800, 500));
  const uint32_t mse = viz::palette().mse;
  int seen = 0, cut = 0;
  float right = 0;
  const ImDrawData& frame = *ImGui::GetDrawData();
  for (int n = 0; n < frame.CmdListsCount; ++n) {
    const ImDrawList* list = frame.CmdLists[n];
    for (const ImDrawCmd& cmd : list->CmdBuffer) {
      for (unsigned i = 0; i < cmd.ElemCount; ++i) {
        const ImDrawVert& v = list->VtxBuffer[cmd.VtxOffset + list->IdxBuffer[cmd.IdxOffset + i]];
        if (v.col != mse) continue;
        ++seen;
        right = std::max(right, v.pos.x);
        // A pixel's grace: a thick line's end reaches 0.7 px past the frame; the half dot was 5 px.
        cut += v.pos.x < cmd.ClipRect.x - 1 || v.pos.x > cmd.ClipRect.z + 1 || v.pos.y < cmd.ClipRect.y - 1 ||
               v.pos.y > cmd.ClipRect.w + 1;
      }
    }
  }
  CHECK(seen > 100);
  CHECK(cut == 0);
  CHECK(right < 10 + 800);  // within the pane
}

// Stepping through a run's first step, each rank's first loss sits at step 0, on the plot's left
// edge: it was drawn as a sliver there, half cut by the frame (a curve of one point is no line).
// It is a dot, drawn whole: every vertex in the rank's colour inside its clip rectangle.
TEST_CASE("a run's first step: each rank's loss is a whole dot on the plot's left edge") {
  test::HeadlessImGui imgui{ImVec2(1000, 600)};
  viz::load_fonts(18.0f);
  ImGui::GetIO().Fonts->Build();
  view_model::RunModel model;
  for (int r = 0; r < 2; ++r) model.consume(test::run_begin_event(r, 2, "gloo"));
  for (int r = 0; r < 2; ++r) model.consume(test::step_end_event(r, 0, 0, 1.0 + r));
  viz::AppState state;
  state.run.phase = viz::RunPhase::Running;
  draw_in_pane(model, state, ImVec2(800, 500));
  const uint32_t rank0 = viz::rank_color(0, 0.85f);  // the curves' colour
  int seen = 0, cut = 0;
  float x0 = 1e9f, x1 = -1e9f;
  const ImDrawData& frame = *ImGui::GetDrawData();
  for (int n = 0; n < frame.CmdListsCount; ++n) {
    const ImDrawList* list = frame.CmdLists[n];
    for (const ImDrawCmd& cmd : list->CmdBuffer)
      for (unsigned i = 0; i < cmd.ElemCount; ++i) {
        const ImDrawVert& v = list->VtxBuffer[cmd.VtxOffset + list->IdxBuffer[cmd.IdxOffset + i]];
        if (v.col != rank0 || v.pos.y < 10 + 60) continue;  // below the legend's sample
        ++seen;
        x0 = std::min(x0, v.pos.x), x1 = std::max(x1, v.pos.x);
        cut += v.pos.x < cmd.ClipRect.x - 1 || v.pos.x > cmd.ClipRect.z + 1;
      }
  }
  CHECK(seen >= 12);        // a circle's fan
  CHECK(x1 - x0 >= 5.0f);   // a dot's width, not a sliver
  CHECK(cut == 0);
}

// The ranks' shared legend entry ("ranks 0–3") stood for four curves in four colours with a
// sample in rank 0's colour alone; its sample now has every rank's.
TEST_CASE("the ranks' shared legend entry shows every rank's colour") {
  test::HeadlessImGui imgui{ImVec2(1000, 800)};
  viz::load_fonts(14.0f);
  ImGui::GetIO().Fonts->Build();
  const view_model::RunModel model = two_epochs(4);
  viz::AppState state;
  state.overlays = {model.loss(), model.loss()};  // two earlier runs: the small pane's legend shares entries
  state.overlays_kept = 2;
  state.run.phase = viz::RunPhase::Finished;
  draw_in_pane(model, state, ImVec2(390, 200));
  REQUIRE(state.said.loss_legend.size() == 3);
  CHECK(state.said.loss_legend[1] == "ranks 0–3");
  // The curves are drawn at 0.85 opacity; the legend's samples opaque.
  const ImDrawData& frame = *ImGui::GetDrawData();
  for (int rank = 0; rank < 4; ++rank) {
    const uint32_t sample = viz::rank_color(rank, 0.85f) | 0xFF000000;
    int vertices = 0;
    for (int n = 0; n < frame.CmdListsCount; ++n)
      for (const ImDrawVert& v : frame.CmdLists[n]->VtxBuffer) vertices += v.col == sample;
    CAPTURE(rank);
    CHECK(vertices > 0);
  }
}

// A run of one training step: its axis went from 0 to 1 in fifths ("0, 0.2, 0.4 ... 1"), as if
// a step could be cut. The step axis counts whole steps.
TEST_CASE("a one-step run's axis is marked in whole training steps") {
  test::HeadlessImGui imgui{ImVec2(1000, 600)};
  viz::load_fonts(18.0f);
  ImGui::GetIO().Fonts->Build();
  view_model::RunModel model;
  for (int r = 0; r < 2; ++r) model.consume(test::run_begin_event(r, 2, "gloo"));
  for (int s = 0; s < 2; ++s)
    for (int r = 0; r < 2; ++r) model.consume(test::step_end_event(r, s, 0, 1.0 - 0.1 * s));
  viz::AppState state;
  state.run.phase = viz::RunPhase::Finished;
  draw_in_pane(model, state, ImVec2(800, 500));
  const viz::LayoutAudit audit = viz::AuditLayout(ImGui::GetDrawData());
  const auto drawn = [&](const char* text) {
    return std::find(audit.texts.begin(), audit.texts.end(), text) != audit.texts.end();
  };
  CHECK(drawn("0"));
  CHECK(drawn("1"));
  // The losses run from 0.9 to 1: no tick of theirs reads as these fifths.
  for (const char* fifth : {"0.2", "0.4", "0.6", "0.8"}) CHECK_MESSAGE(!drawn(fifth), fifth);
}

// "x in epochs" relabels the plot: the epochs' MSE, at the 4 and 8 steps done by their ends, sit
// at epochs 1 and 2 (they read "epoch 1.50" and "epoch 2.49" for a run of 2 epochs of 2 steps:
// the steps were placed where they end, the MSE a step later again).
TEST_CASE("in epochs, each epoch's MSE sits at its end, a whole epoch") {
  std::vector<std::string> at_mse;
  const std::map<std::string, std::string> seen = sweep(0, 0, true);
  for (const auto& [first, out] : seen)
    if (out.find("MSE, whole dataset: ") != std::string::npos) at_mse.push_back(first);
  CHECK(at_mse == std::vector<std::string>{"epoch 1.00", "epoch 2.00"});
  // The plot's last pixels read its end: a pixel short of it the read-out headed "epoch 1.99" over
  // "MSE, whole dataset (at epoch 2.00)", the mouse on the dot.
  REQUIRE(!seen.empty());
  CHECK(seen.rbegin()->first == "epoch 2.00");
  CHECK(seen.rbegin()->second.find("MSE, whole dataset: ") != std::string::npos);
}

// A live change on the run's last step puts its marker on the plot's right edge: its label, moved
// in from the edge only, sat across its own dashed line. It goes left of the line there.
TEST_CASE("a change marker's label at the plot's right edge keeps clear of its line") {
  test::HeadlessImGui imgui{ImVec2(1000, 800)};
  viz::load_fonts(18.0f);
  ImGui::GetIO().Fonts->Build();
  view_model::RunModel model = two_epochs(4);
  change_after_two_epochs(model, 3);
  viz::AppState state;
  state.run.phase = viz::RunPhase::Finished;
  draw_in_pane(model, state, ImVec2(800, 500));
  const uint32_t line = viz::palette().accent, box = viz::with_alpha(viz::palette().canvas, 0.85f);
  // The accent's vertices by whole pixel column: the dashed line is the column they run down
  // for most of the plot's height (the label's letters are one text line high).
  std::map<int, std::pair<float, float>> columns;
  float box_x0 = 1e9f, box_x1 = -1e9f;
  const ImDrawData& frame = *ImGui::GetDrawData();
  for (int n = 0; n < frame.CmdListsCount; ++n)
    for (const ImDrawVert& v : frame.CmdLists[n]->VtxBuffer) {
      if (v.col == line) {
        auto [it, fresh] = columns.try_emplace(static_cast<int>(std::lround(v.pos.x)), v.pos.y, v.pos.y);
        it->second = {std::min(it->second.first, v.pos.y), std::max(it->second.second, v.pos.y)};
      }
      if (v.col == box) box_x0 = std::min(box_x0, v.pos.x), box_x1 = std::max(box_x1, v.pos.x);
    }
  float line_x0 = 1e9f, line_x1 = -1e9f;
  for (const auto& [x, ys] : columns)
    if (ys.second - ys.first > 200) line_x0 = std::min(line_x0, float(x)), line_x1 = std::max(line_x1, float(x));
  REQUIRE(line_x1 >= line_x0);  // the marker's line was drawn
  REQUIRE(box_x1 > box_x0);     // and its label's box
  CHECK(line_x1 - line_x0 < 6);  // one vertical line
  const float centre = (line_x0 + line_x1) / 2;  // the fringe of a 2 px line may touch the box
  CHECK((box_x1 < centre - 1 || box_x0 > centre + 1));
}
