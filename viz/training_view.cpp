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

using replay::LossPoint;
using replay::LossSeries;

// Overlays are drawn in muted, distinct tones so the live run stays in front.
constexpr uint32_t kOverlayColors[] = {0xFF8C6A5A, 0xFF3F8FBF, 0xFF6E9A3C, 0xFFB0609E, 0xFF2F6FD8, 0xFF808080};

// Steps to epochs: epoch k (0-based) ends at the step recorded with its MSE, so a step maps to
// k + its fraction of the way through epoch k.
double epoch_of_step(const LossSeries& s, double step) {
  double begin = -1;  // steps are counted from 0; the first epoch spans (-1, end0]
  for (size_t k = 0; k < s.epoch_mse.size(); ++k) {
    const double end = s.epoch_mse[k].step - 1;
    if (step <= end || k + 1 == s.epoch_mse.size()) {
      const double span = std::max(end - begin, 1.0);
      return static_cast<double>(k) + (step - begin) / span;
    }
    begin = end;
  }
  return step;  // no epoch finished yet: fall back to steps
}

std::vector<LossPoint> to_epochs(const LossSeries& s, std::span<const LossPoint> points) {
  std::vector<LossPoint> out;
  out.reserve(points.size());
  for (const auto& p : points) out.push_back({epoch_of_step(s, p.step), p.loss});
  return out;
}

std::vector<LossPoint> mse_points(const LossSeries& s, bool by_epoch) {
  std::vector<LossPoint> out;
  for (const auto& e : s.epoch_mse) out.push_back({by_epoch ? e.epoch + 1.0 : e.step, e.mse});
  return out;
}

struct Extent {
  double x0 = 0, x1 = 1, y0 = 1e-3, y1 = 1;
  bool any = false;
  void take(std::span<const LossPoint> pts, bool log) {
    for (const auto& p : pts) {
      if (!std::isfinite(p.loss) || (log && p.loss <= 0)) continue;
      if (!any) {
        x0 = x1 = p.step;
        y0 = y1 = p.loss;
        any = true;
      }
      x0 = std::min(x0, p.step);
      x1 = std::max(x1, p.step);
      y0 = std::min(y0, p.loss);
      y1 = std::max(y1, p.loss);
    }
  }
};

}  // namespace

void DrawTrainingView(const replay::RunModel& model, AppState& state) {
  const Palette& pal = palette();
  TrainingViewState& v = state.training;
  FlowCheckbox(label("Log scale", "log_scale"), &v.log_scale, true);
  FlowCheckbox(label("x in epochs", "by_epoch"), &v.by_epoch);
  FlowCheckbox(label("Per-rank loss", "rank_loss"), &v.show_ranks);
  FlowCheckbox(label("Earlier runs", "overlays"), &v.show_overlays);
  if (!state.overlays.empty()) {
    SameLineIfFits(ImGui::CalcTextSize(tr("Clear")).x + ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::SmallButton(label("Clear", "clear_overlays").c_str())) state.requests.clear_overlays = true;
  }

  const LossSeries& live = model.loss();
  const bool by_epoch = v.by_epoch;
  // Gather the series in plot coordinates.
  struct Drawn {
    std::vector<LossPoint> points;
    uint32_t color;
    float thickness;
    bool dots;
    int legend;  // its legend entry, -1 for none
  };
  std::vector<Drawn> lines;
  std::vector<LegendEntry> legend;
  Extent extent;
  auto add = [&](std::vector<LossPoint> pts, uint32_t color, float thickness, bool dots, std::string name) {
    extent.take(pts, v.log_scale);
    int entry = -1;
    if (!name.empty()) {
      entry = static_cast<int>(legend.size());
      legend.push_back({std::move(name), color | 0xFF000000, thickness});
    }
    lines.push_back({std::move(pts), color, thickness, dots, entry});
  };
  if (v.show_overlays)
    for (size_t i = 0; i < state.overlays.size(); ++i) {
      const LossSeries& s = state.overlays[i];
      const uint32_t color = kOverlayColors[i % std::size(kOverlayColors)];
      if (v.show_ranks && !s.rank_loss.empty())
        add(by_epoch ? to_epochs(s, s.rank_loss[0]) : s.rank_loss[0], with_alpha(color, 0.35f), 1.5f, false, "");
      // Wide and pale underneath, so a live curve that matches it exactly still shows it.
      add(mse_points(s, by_epoch), with_alpha(color, 0.55f), 7.0f, true, trf("MSE · {}", s.label));
    }
  // Up to four ranks get a legend entry each; more share one, so the plot keeps its height.
  const bool many = live.rank_loss.size() > 4;
  if (v.show_ranks)
    for (size_t r = 0; r < live.rank_loss.size() && r < 16; ++r) {
      if (live.rank_loss[r].empty()) continue;
      std::string name = many ? (r == 0 ? trf("ranks 0–{}: each rank's loss on its own batch", live.rank_loss.size() - 1) : "")
                              : trf("rank {} loss (its own batch)", r);
      add(by_epoch ? to_epochs(live, live.rank_loss[r]) : live.rank_loss[r], rank_color(static_cast<int>(r), 0.85f),
          1.8f, false, name);
    }
  if (!live.epoch_mse.empty()) {
    add(mse_points(live, by_epoch), pal.mse, 3.5f, true,
        trf("MSE, whole dataset{}", live.label.empty() ? "" : " · " + live.label));
  }

  if (!extent.any) {
    ImGui::TextDisabled("%s", tr("No steps yet. Press Start: each rank reports its loss after every step."));
    return;
  }
  // The legend goes above the plot when there is room; in a small pane it moves into the
  // hover read-out, which names every series anyway.
  if (ImGui::GetContentRegionAvail().y > ImGui::GetFontSize() * 16) LegendRow(legend);
  const ImVec2 size = ImGui::GetContentRegionAvail();
  if (extent.x1 <= extent.x0) extent.x1 = extent.x0 + 1;
  double y0 = extent.y0, y1 = extent.y1;
  if (v.log_scale) {
    y0 /= 1.25;
    y1 *= 1.25;
  } else {
    const double pad = (y1 - y0) * 0.08 + 1e-9;
    y0 = std::max(0.0, y0 - pad);
    y1 += pad;
  }
  Plot plot("##loss", size, {by_epoch ? 0.0 : extent.x0, extent.x1, false}, {y0, y1, v.log_scale},
            by_epoch ? tr("epoch") : tr("training step"), tr("loss"));
  for (const auto& l : lines) {
    const auto pts = by_epoch ? l.points : replay::decimate(l.points, extent.x0, extent.x1, static_cast<int>(size.x));
    plot.line(pts, l.color, l.thickness);
    if (l.dots) plot.dots(l.points, l.color, std::min(l.thickness + 1.5f, 6.0f));
  }
  if (!by_epoch)
    for (const auto& change : live.changes)
      plot.marker(change.step, pal.accent,
                  trf("→ {} rank{}, {}", change.world_size, change.world_size == 1 ? "" : "s", change.backend));

  // Hover: a vertical line and every series' value at that x.
  if (plot.hovered()) {
    const double x = plot.x_at(plot.mouse().x);
    ImDrawList* dl = plot.draw_list();
    dl->AddLine(ImVec2(plot.mouse().x, plot.inner_min().y), ImVec2(plot.mouse().x, plot.inner_max().y), pal.axis, 1.0f);
    std::string tip = by_epoch ? trf("epoch {:.2f}", x) : trf("step {:.0f}", x);
    for (const auto& l : lines) {
      LossPoint p;
      if (l.legend < 0 || !replay::nearest_point(l.points, x, p)) continue;
      dl->AddCircleFilled(plot.to_screen(p.step, p.loss), l.thickness + 2.5f, l.color);
      tip += fmt::format("\n{}: {:.6f}", legend[l.legend].text, p.loss);
    }
    ImGui::SetTooltip("%s", tip.c_str());
  }
}

}  // namespace ringlab::viz
