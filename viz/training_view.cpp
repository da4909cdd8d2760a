// Training: every rank's loss per step and the whole-dataset MSE per epoch, with earlier runs
// as labelled overlays and a marker wherever the world changed while training.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <fmt/core.h>

#include "viz/fonts.h"
#include "viz/i18n.h"
#include "viz/plot.h"
#include "viz/rank_colors.h"
#include "viz/theme.h"
#include "viz/views.h"
#include "viz/widgets.h"

namespace ringlab::viz {
namespace {

using view_model::LossPoint;
using view_model::CurveShape;
using view_model::LossSeries;
using view_model::EpochPoint;

// "4 ranks, gloo, ring, lr 0.03", in the app's language when the series knows its job.
std::string series_name(const LossSeries& s) {
  return s.job ? JobSummary(*s.job) : s.label;
}

// Overlays are drawn in muted, distinct tones so the live run stays in front.
// Muted tones away from the ranks' blue, orange, green and pink (an earlier run in orange read as
// rank 1): slate, brown, olive, dark teal, maroon, grey. ImGui's ABGR.
constexpr uint32_t kOverlayColors[] = {0xFF8C6A5A, 0xFF4F6A8C, 0xFF3A7A7A, 0xFF6F6F2F, 0xFF4F3B8A, 0xFF808080};

// One curve to draw: its points (a view into the model, never copied), how to draw it.
struct Curve {
  std::span<const LossPoint> points;
  const LossSeries* series;  // for the epoch axis
  uint32_t color;
  float thickness;
  bool dots;
  int legend;  // its legend entry, -1 for none
};

// Line widths are whole pixels: Dear ImGui then draws anti-aliased lines from a texture with
// two triangles per segment instead of building the fringe out of many more.
//
// Each curve's reduction to pixel columns (view_model::CurveReduction), kept between frames.
std::vector<view_model::CurveReduction> g_reduced;

}  // namespace

namespace {

// Side by side, the engine's MSE curve lies on the script's: how far apart they are, epoch by
// epoch, which the eye cannot tell at this scale ("" when no script's run is overlaid).
struct Agreement {
  int epochs = 0;  // epochs both runs have an MSE for
  double largest = 0;
};

Agreement agreement_with_script(const std::vector<LossSeries>& overlays, const LossSeries& live) {
  const auto script = std::find_if(overlays.rbegin(), overlays.rend(),
                                   [](const LossSeries& s) { return !s.job && !s.label.empty(); });
  Agreement a;
  if (script == overlays.rend()) return a;
  // Both lists are in epoch order: one walk, every frame, however many epochs.
  const auto& mine = live.epoch_mse;
  const auto& theirs = script->epoch_mse;
  for (size_t i = 0, j = 0; i < mine.size() && j < theirs.size();) {
    if (mine[i].epoch < theirs[j].epoch) ++i;
    else if (theirs[j].epoch < mine[i].epoch) ++j;
    else {
      a.largest = std::max(a.largest, std::abs(mine[i++].mse - theirs[j++].mse));
      ++a.epochs;
    }
  }
  return a;
}

std::string agreement_text(const Agreement& a) {
  if (a.epochs == 0) return "";
  if (a.largest == 0) return trf("ringlab and PyTorch: the same MSE in all {} epochs", a.epochs);
  return trf("ringlab and PyTorch: MSE at most {} apart over {} epochs", fmt::format("{:.1e}", a.largest), a.epochs);
}

// In a small pane, a legend entry per earlier run filled rows of it after a few runs and left
// the plot a sliver: there they share one entry, as the ranks do (the hover read-out still
// names each curve).
std::vector<LegendEntry> earlier_runs_as_one(const std::vector<LegendEntry>& legend, size_t overlays, size_t first) {
  if (overlays < 2 || overlays > legend.size()) return legend;
  std::vector<LegendEntry> shown;
  const LegendEntry& newest = legend[overlays - 1];
  const std::string text = trf("earlier runs {}–{}", first, first + overlays - 1);
  shown.push_back({text, newest.color, newest.thickness, text});
  shown.insert(shown.end(), legend.begin() + static_cast<std::ptrdiff_t>(overlays), legend.end());
  return shown;
}

void draw_training_switches(AppState& state) {
  TrainingViewState& v = state.training;
  FlowCheckbox(label("Log scale", "log_scale"), &v.log_scale, true);
  FlowCheckbox(label("x in epochs", "by_epoch"), &v.by_epoch);
  FlowCheckbox(label("Per-rank loss", "rank_loss"), &v.show_ranks);
  FlowCheckbox(label("Earlier runs", "overlays"), &v.show_overlays);
  if (!state.overlays.empty()) {
    SameLineIfFits(ImGui::CalcTextSize(tr("Clear")).x + ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::SmallButton(label("Clear", "clear_overlays").c_str())) state.requests.clear_overlays = true;
  }
}

// The curves to draw, in drawing order, their legend entries, and how far the axes reach.
struct CurveSet {
  std::vector<Curve> curves;
  std::vector<LegendEntry> legend;
  view_model::LossExtent extent;
  size_t overlay_entries = 0;  // the legend's first entries are the earlier runs'

  // A curve, with a legend entry where it has a name.
  void add(const LossSeries& s, std::span<const LossPoint> pts, uint32_t color, float thickness, bool dots,
           std::string name, std::string short_name = "") {
    int entry = -1;
    if (!name.empty()) {
      entry = static_cast<int>(legend.size());
      legend.push_back({std::move(name), color | 0xFF000000, thickness, std::move(short_name)});
    }
    curves.push_back({pts, &s, color, thickness, dots, entry});
  }

  // The live run sets how far the steps axis reaches once it has a loss: an earlier run of
  // 200,000 steps would squeeze a short one now into the plot's first pixels. The earlier runs
  // are drawn as far as the live one has come (`within`).
  void take_extent(const LossSeries& s, const view_model::LossExtent* within) {
    if (!s.extent.any) return;
    const auto x = [&](double v) { return within ? std::clamp(v, within->x0, within->x1) : v; };
    extent.take(x(s.extent.x0), s.extent.y1);
    extent.take(x(s.extent.x1), s.extent.y0);
    if (s.extent.y0_positive > 0) extent.take(x(s.extent.x1), s.extent.y0_positive);
  }
};

// Earlier runs, each in a muted tone of its own: rank 0's loss faint, the MSE wide and pale
// underneath, so a live curve that matches it exactly still shows it. A named run (a PyTorch
// script's) keeps its name in the short legend too.
// `as_one`: the legend gives them one entry (a small pane), so they share its colour too; a tone
// each beside one entry's swatch left the curves of the others unnamed.
void add_earlier_runs(CurveSet& set, const AppState& state, const view_model::LossExtent* live_steps, bool as_one) {
  const TrainingViewState& v = state.training;
  set.overlay_entries = v.show_overlays ? state.overlays.size() : 0;
  if (!v.show_overlays) return;
  for (size_t i = 0; i < state.overlays.size(); ++i) {
    const LossSeries& s = state.overlays[i];
    const uint32_t color = kOverlayColors[as_one ? 0 : i % std::size(kOverlayColors)];
    set.take_extent(s, live_steps);
    if (v.show_ranks && !s.rank_loss.empty()) set.add(s, s.rank_loss[0], with_alpha(color, 0.35f), 1.0f, false, "");
    // Numbered by the session's runs: only the newest few are kept, and "run 1" was not the first.
    const size_t number = state.first_overlay_number() + i;
    // A PyTorch script's run goes by its name first, as in the legend (beside the engine it is
    // the run the lesson compares with, not merely an earlier one).
    set.add(s, s.mse_curve, with_alpha(color, 0.55f), 7.0f, true,
            s.job ? trf("earlier run {}: MSE · {}", number, series_name(s)) : trf("{}: MSE (earlier run {})", series_name(s), number),
            s.job ? trf("earlier run {}", number) : series_name(s));
  }
}

// The live run: each rank's loss (up to four ranks get a legend entry each; more share one, so
// the plot keeps its height) and the whole-dataset MSE. Its settings are in the menu bar, its
// world changes are the markers; beside a PyTorch script's run the legend says which of the two
// is which, and how close they are, which the eye cannot tell.
// `ranks_as_one`: the ranks share one entry at any world size (a pane whose plot their four
// entries would squeeze).
void add_live_run(CurveSet& set, const LossSeries& live, AppState& state, bool ranks_as_one) {
  set.take_extent(live, nullptr);
  const bool many = live.rank_loss.size() > 4 || (ranks_as_one && live.rank_loss.size() > 1);
  // After a live change to fewer ranks the curves of the ranks gone end at its marker: the range
  // says which ranks train now.
  const size_t now = live.changes.empty() ? live.rank_loss.size() : static_cast<size_t>(live.changes.back().world_size);
  const std::string ranks = now > 0 && now < live.rank_loss.size()
                                ? trf("ranks 0–{} (0–{} since the change)", live.rank_loss.size() - 1, now - 1)
                                : trf("ranks 0–{}", live.rank_loss.size() - 1);
  if (state.training.show_ranks)
    for (size_t r = 0; r < live.rank_loss.size() && r < 16; ++r) {
      if (live.rank_loss[r].empty()) continue;
      std::string name = many ? (r == 0 ? trf("{}: each rank's loss on its own batch", ranks) : "")
                              : trf("rank {} loss (its own batch)", r);
      std::string short_name = many ? (r == 0 ? ranks : "") : trf("rank {}", r);
      set.add(live, live.rank_loss[r], rank_color(static_cast<int>(r), 0.85f), 2.0f, false, name, short_name);
      // One entry for every rank: its sample in their colours, not rank 0's alone.
      if (many && r == 0) {
        set.legend.back().swatch = LegendEntry::Swatch::ranks;
        set.legend.back().rank_colors = static_cast<int>(std::min<size_t>(live.rank_loss.size(), 8));
      }
    }
  state.said.curves_agree.clear();
  if (live.epoch_mse.empty()) return;
  const uint32_t mse = palette().mse;
  const bool beside_script = std::any_of(state.overlays.begin(), state.overlays.end(),
                                         [](const LossSeries& s) { return !s.job && !s.label.empty(); });
  if (state.torch.live) {
    set.add(live, live.mse_curve, mse, 4.0f, true, tr("PyTorch script: MSE, whole dataset"), tr("PyTorch: MSE"));
  } else if (beside_script && state.training.show_overlays) {
    const Agreement a = agreement_with_script(state.overlays, live);
    state.said.curves_agree = agreement_text(a);
    const std::string apart = a.epochs == 0 ? "" : fmt::format(", ≤ {:.1e} from PyTorch", a.largest);
    set.add(live, live.mse_curve, mse, 4.0f, true, tr("ringlab's engine: MSE, whole dataset") + apart, tr("ringlab: MSE") + apart);
  } else {
    set.add(live, live.mse_curve, mse, 4.0f, true, tr("MSE, whole dataset"), tr("MSE"));
  }
}

// Before the first loss: what will put one here.
void say_no_loss_yet(const AppState& state) {
  if (state.run.phase != RunPhase::Running && state.run.phase != RunPhase::Paused)
    DimWrapped(tr("No steps yet. Press Start: each rank reports its loss after every step."));
  else if (state.step.mode == RingMode::Gated)
    DimWrapped(tr("Training: the workers are held before each ring step; the first loss appears when every rank has finished step 1."));
  else
    DimWrapped(tr("Training: the first loss appears when every rank has finished step 1."));
}

// The loss axis: a decade's room at least on a log scale, 8% either side on a linear one.
std::pair<double, double> loss_range(const view_model::LossExtent& extent, bool log_scale) {
  double y0 = log_scale ? (extent.y0_positive > 0 ? extent.y0_positive : 1e-3) : extent.y0, y1 = extent.y1;
  if (log_scale) {
    y0 /= 1.25;
    y1 = std::max(y1 * 1.25, y0 * 10);
  } else {
    const double pad = (y1 - y0) * 0.08 + 1e-9;
    y0 = std::max(0.0, y0 - pad);
    y1 += pad;
  }
  return {y0, y1};
}

// A curve's shape, its steps placed in epochs when the x axis counts them.
CurveShape on_axis(const Curve& c, CurveShape shape, bool by_epoch) {
  if (!by_epoch) return shape;
  for (auto& p : shape.line) p.step = c.series->epoch_of_step(p.step);
  for (auto& col : shape.columns) {
    col.step0 = c.series->epoch_of_step(col.step0);
    col.step1 = c.series->epoch_of_step(col.step1);
  }
  return shape;
}

// Each curve reduced to the plot's pixel columns (kept between frames: g_reduced), drawn as a
// band where it is dense and a line where it is not, with dots on a short one.
void draw_curves(Plot& plot, const CurveSet& set, double x_hi, bool by_epoch, int buckets) {
  for (size_t i = 0; i < set.curves.size(); ++i) {
    const Curve& c = set.curves[i];
    if (g_reduced.size() <= i) g_reduced.resize(i + 1);
    const CurveShape shape = on_axis(c, g_reduced[i].shape(c.points, set.extent.x0, x_hi, buckets), by_epoch);
    plot.band(shape.columns, c.color, c.thickness);
    if (shape.columns.empty() || shape.line.size() >= 2) plot.line(shape.line, c.color, c.thickness);
    // A curve of one point (each rank's first loss, while a class steps through the first step) is
    // no line: a dot, whole on the frame's left edge where step 0 sits.
    if ((c.dots && c.points.size() <= 40) || shape.line.size() == 1)
      plot.dots(shape.line, c.color, std::min(c.thickness + 1.5f, 6.0f));
  }
}

// The point of a curve nearest the mouse's x on the epoch axis: epochs grow with steps, so bisect
// for the step whose epoch position is nearest.
bool nearest_in_epochs(const Curve& c, double x, LossPoint& p) {
  double lo = c.points.front().step, hi = c.points.back().step;
  for (int i = 0; i < 40 && hi - lo > 0.5; ++i) {
    const double mid = (lo + hi) / 2;
    (c.series->epoch_of_step(mid) < x ? lo : hi) = mid;
  }
  return view_model::nearest_point(c.points, hi, p);
}

// Hover: a vertical line and every named series' value at that x. A shorter run (an earlier one,
// a rank gone after a live change) says nothing past its end.
std::string loss_read_out(Plot& plot, const CurveSet& set, bool by_epoch) {
  // Left of the axis's start (its margin is part of the plot) the read-out is of its first step,
  // not of "step -1".
  // The axis's last few pixels read its end: a pixel short of it the read-out headed "epoch 1.99"
  // over the last epoch's MSE, "(at epoch 2.00)".
  const float edge = plot.inner_max().x;
  const double x = std::max(plot.x_at(plot.mouse().x >= edge - 4 ? edge : plot.mouse().x), by_epoch ? 0.0 : set.extent.x0);
  ImDrawList* dl = plot.draw_list();
  dl->AddLine(ImVec2(plot.mouse().x, plot.inner_min().y), ImVec2(plot.mouse().x, plot.inner_max().y), palette().axis, 1.0f);
  std::string tip = by_epoch ? trf("epoch {:.2f}", x) : trf("step {:.0f}", x);
  const double slack = std::fabs(plot.x_at(plot.mouse().x + 4) - x);  // a few pixels either side
  for (const Curve& c : set.curves) {
    if (c.legend < 0 || c.points.empty()) continue;
    const auto at = [&](double step) { return by_epoch ? c.series->epoch_of_step(step) : step; };
    if (x < at(c.points.front().step) - slack || x > at(c.points.back().step) + slack) continue;
    LossPoint p;
    if (by_epoch ? !nearest_in_epochs(c, x, p) : !view_model::nearest_point(c.points, x, p)) continue;
    dl->AddCircleFilled(plot.to_screen(at(p.step), p.loss), c.thickness + 2.5f, c.color);
    // A sparse curve's nearest point (an epoch's MSE) may sit at another step than the one the
    // read-out heads with: it says its own, or it reads as that step's value. On the epoch axis
    // so does a curve of dots (the MSE read "epoch 2.49" half an epoch from its dot); a rank's
    // dense loss is read at the nearest step.
    const std::string& name = set.legend[c.legend].text;
    if (!by_epoch && fmt::format("{:.0f}", p.step) != fmt::format("{:.0f}", x))
      tip += "\n" + trf("{} (at step {:.0f}): {:.6f}", name, p.step, p.loss);
    else if (by_epoch && c.dots && fmt::format("{:.2f}", at(p.step)) != fmt::format("{:.2f}", x))
      tip += "\n" + trf("{} (at epoch {:.2f}): {:.6f}", name, at(p.step), p.loss);
    else
      tip += fmt::format("\n{}: {:.6f}", name, p.loss);
  }
  Tooltip(tip.c_str());
  return tip;
}

}  // namespace

void DrawTrainingView(const view_model::RunModel& model, AppState& state) {
  const TrainingViewState& v = state.training;
  state.said.loss_read_out.clear();
  draw_training_switches(state);
  const LossSeries& live = model.loss();
  // The legend goes above the plot whenever the plot keeps some height under it. Where it would
  // leave the plot less than kPlotKept, the ranks share one entry; only in a very small pane does
  // it move into the hover read-out, which names every series anyway.
  const float room = ImGui::GetContentRegionAvail().y, fs = ImGui::GetFontSize();
  const float kPlotKept = fs * 8;
  const bool short_legend = room < fs * 16;
  const auto curve_set = [&](bool ranks_as_one) {
    CurveSet set;
    add_earlier_runs(set, state, live.extent.any ? &live.extent : nullptr, short_legend && state.overlays.size() > 1);
    add_live_run(set, live, state, ranks_as_one);
    return set;
  };
  const auto legend_of = [&](const CurveSet& set) {
    return short_legend ? earlier_runs_as_one(set.legend, set.overlay_entries, state.first_overlay_number()) : set.legend;
  };
  CurveSet set = curve_set(false);
  if (room - LegendHeight(legend_of(set), short_legend) < kPlotKept) set = curve_set(true);
  if (!set.extent.any || set.curves.empty()) return say_no_loss_yet(state);
  state.said.loss_legend.clear();
  if (room > fs * 9) state.said.loss_legend = LegendRow(legend_of(set), short_legend);
  if (room > fs * 16 && !state.said.curves_agree.empty()) DimWrapped(state.said.curves_agree.c_str());
  const ImVec2 size = ImGui::GetContentRegionAvail();
  state.said.loss_plot_height = size.y;
  const bool by_epoch = v.by_epoch;
  const view_model::LossExtent& extent = set.extent;
  const double x_hi = extent.x1 > extent.x0 ? extent.x1 : extent.x0 + 1;
  const auto [y0, y1] = loss_range(extent, v.log_scale);
  const double axis_hi = by_epoch ? live.epoch_of_step(x_hi) : x_hi;
  Plot plot("##loss", size, {by_epoch ? 0.0 : extent.x0, std::max(axis_hi, by_epoch ? 1.0 : x_hi), false, !by_epoch},
            {y0, y1, v.log_scale}, by_epoch ? tr("epoch") : tr("training step"), tr("loss"));
  draw_curves(plot, set, x_hi, by_epoch, std::max(16, static_cast<int>(size.x)));
  if (!by_epoch) {
    for (const auto& change : live.changes) plot.marker_line(change.step, palette().accent);
    for (const auto& change : live.changes)
      plot.marker_label(change.step, palette().accent,
                        trf("→ {} rank{}, {}", change.world_size, change.world_size == 1 ? "" : "s", change.backend));
  }
  state.said.loss_read_out = plot.hovered() ? loss_read_out(plot, set, by_epoch) : "";
}

}  // namespace ringlab::viz
