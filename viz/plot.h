#pragma once
// Line plots drawn with ImDrawList (ImPlot is not packaged): axes with readable ticks, a
// log scale for losses, lines, markers, vertical markers and a legend row; the views add hover
// read-outs with x_at() and to_screen().
#include <imgui.h>

#include <span>
#include <string>
#include <vector>

#include "engine/view_model/loss_series.h"

namespace ringlab::viz {

struct PlotAxis {
  double min = 0;
  double max = 1;
  bool log = false;
  bool whole = false;  // counts things (training steps): ticks on whole numbers only
};

struct LegendEntry {
  // Drawn as the plot draws the entry's data; `ranks`: a line in the colours of ranks 0 to
  // rank_colors - 1, for one entry that stands for every rank's curve.
  enum class Swatch { line, dashed, point, ranks };
  std::string text;
  uint32_t color = 0;
  float thickness = 2.0f;
  std::string short_text;  // used when the full texts would take more than two lines ("" = text)
  Swatch swatch = Swatch::line;
  int rank_colors = 0;
};

class Plot {
 public:
  // Reserves `size` at the cursor and draws the frame, grid, ticks and axis labels.
  Plot(const char* id, ImVec2 size, PlotAxis x, PlotAxis y, const std::string& x_label,
       const std::string& y_label);
  ~Plot();  // pops the clip rectangle
  Plot(const Plot&) = delete;
  Plot& operator=(const Plot&) = delete;

  ImVec2 to_screen(double x, double y) const;
  double x_at(float screen_x) const;
  bool hovered() const { return hovered_; }
  ImVec2 mouse() const { return ImGui::GetIO().MousePos; }
  ImVec2 inner_min() const { return min_; }
  ImVec2 inner_max() const { return max_; }
  ImDrawList* draw_list() const { return dl_; }

  void line(std::span<const view_model::LossPoint> points, uint32_t color, float thickness) const;
  void dots(std::span<const view_model::LossPoint> points, uint32_t color, float radius) const;
  // A dense curve as the band through its columns' ranges, at least `thickness` tall.
  void band(std::span<const view_model::LossRange> columns, uint32_t color, float thickness) const;
  // A dashed vertical line at x with a label at the top.
  void marker(double x, uint32_t color, const std::string& text) const;
  // The same in two passes, for several markers: every line first, then every label, so that no
  // marker's line crosses another's label.
  void marker_line(double x, uint32_t color) const;
  void marker_label(double x, uint32_t color, const std::string& text) const;

 private:
  float sx(double x) const;
  float sy(double y) const;

  ImDrawList* dl_;
  PlotAxis x_, y_;
  ImVec2 min_, max_;
  ImVec2 pane_max_;  // the clip rectangle around the plot's own: dots may reach past its frame's right edge
  mutable std::vector<ImVec4> marker_labels_;  // where marker texts went: the next one moves below
  bool hovered_ = false;
};

// A legend laid out as a row (wrapping) above a plot, so it never hides the data.
// `prefer_short`: the short names whenever they exist (a small pane keeps its plot's height);
// otherwise only when the full ones would take more than two lines.
// Returns the texts it drew, in order.
std::vector<std::string> LegendRow(std::span<const LegendEntry> entries, bool prefer_short = false);
// The height LegendRow would take for these entries in the space left on this line's width.
float LegendHeight(std::span<const LegendEntry> entries, bool prefer_short = false);

// At most about `target` ticks from lo to hi, at 1, 2, 2.5 or 5 times a power of ten apart, and
// never closer than `least_step` (1 on an axis of whole things: a one-step run's axis read "0, 0.2,
// 0.4 ... 1 training step").
std::vector<double> nice_ticks(double lo, double hi, int target, double least_step = 0);
std::vector<double> log_ticks(double lo, double hi);
std::string format_number(double v);  // short: 0.05, 0.001, 1.2k, 3.0e-05
std::string format_duration(double ns);  // "812.5 µs", "2.31 ms", "2.06 s": the unit that keeps it short
std::vector<std::string> format_axis(const std::vector<double>& values);  // format_number, one unit for all
std::vector<std::string> format_log_axis(const std::vector<double>& values);  // powers of ten: one format for all
// A tick label with as many decimals as the tick spacing needs: 11213.5 next to 11214.0.
std::string format_tick(double v, double step);

// Takes `size` at the cursor (at least 80 x 60, written back) as one item, so the plot can be
// hovered; returns its top-left corner.
ImVec2 reserve_plot_area(const char* id, ImVec2& size, bool& hovered);

// One tick of an axis: where it is on screen and its label.
struct AxisTick {
  float at = 0;
  std::string text;
};
// The frame every plot shares: grid lines and labelled ticks on both axes, the border, the axis
// titles (x centred below, y above the top-left corner at `origin`), then the clip rectangle
// to the inner area, which the plot pops when it is destroyed.
void draw_plot_frame(ImDrawList* dl, ImVec2 origin, ImVec2 min, ImVec2 max, const std::vector<AxisTick>& x_ticks,
                     const std::vector<AxisTick>& y_ticks, const std::string& x_label, const std::string& y_label);

// A dashed line (ImDrawList has none).
void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, uint32_t color, float thickness, float dash);
// The same along a polyline, the dashes running on across its corners.
void dashed_polyline(ImDrawList* dl, const std::vector<ImVec2>& points, uint32_t color, float thickness, float dash);
// How many of `lines`' segments (screen polylines) pass through the rectangle [lo, hi]: where a
// label would hide the fewest curves, or whether it would sit on a link.
int segments_through(const std::vector<std::vector<ImVec2>>& lines, ImVec2 lo, ImVec2 hi);

}  // namespace ringlab::viz
