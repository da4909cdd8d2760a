#pragma once
// A log-log plot for quantities that span many decades: message sizes from bytes to GiB, times
// from microseconds to seconds, bandwidths from kB/s to hundreds of GB/s. Plot (plot.h) has a
// linear x axis and plain-number ticks; this one is logarithmic on both axes and prints its
// ticks in the quantity's own units ("64 KiB", "10 ms", "1 GB/s"). It reuses plot.h's helpers
// (log_ticks, dashed_line) and the palette.
#include <imgui.h>

#include <span>
#include <string>
#include <vector>

namespace ringlab::viz {

struct LogAxis {
  double min = 1;  // > 0
  double max = 10;
  std::vector<double> (*ticks)(double lo, double hi, int most) = nullptr;  // nullptr: powers of ten
  std::string (*format)(double) = nullptr;                                 // nullptr: format_number
};

// Powers of two a whole number of KiB/MiB steps apart where room allows: 1 B, 32 B, 1 KiB, ...
std::vector<double> power_of_two_ticks(double lo, double hi, int most);
// Powers of ten, every second or third one when `most` allows fewer.
std::vector<double> decade_ticks(double lo, double hi, int most);

class LogLogPlot {
 public:
  // Reserves `size` at the cursor and draws the frame, grid, ticks and axis labels.
  LogLogPlot(const char* id, ImVec2 size, LogAxis x, LogAxis y, const std::string& x_label,
             const std::string& y_label);
  ~LogLogPlot();  // pops the clip rectangle
  LogLogPlot(const LogLogPlot&) = delete;
  LogLogPlot& operator=(const LogLogPlot&) = delete;

  ImVec2 to_screen(double x, double y) const;
  double x_at(float screen_x) const;
  bool hovered() const { return hovered_; }
  ImVec2 inner_min() const { return min_; }
  ImVec2 inner_max() const { return max_; }
  ImDrawList* draw_list() const { return dl_; }

  // Points with x or y <= 0 are skipped (they have no place on a log axis).
  void line(std::span<const double> xs, std::span<const double> ys, uint32_t color, float thickness,
            bool dashed = false) const;
  // A filled dot ringed in ink, for measured points among model curves.
  void point(double x, double y, uint32_t color, float radius) const;
  // A dashed vertical line at x, drawn before the curves (under them).
  void marker(double x, uint32_t color) const;
  // Its label, drawn after the curves and points (over them, on a card of the canvas's colour):
  // beside the line at the top or the bottom, right or left of it, wherever it hides the fewest of
  // them; the first of `texts` (longest first) that fits beside it; nothing where none does.
  void marker_label(double x, uint32_t color, const std::vector<std::string>& texts) const;

 private:
  float sx(double x) const;
  float sy(double y) const;

  ImDrawList* dl_;
  LogAxis x_, y_;
  double lx0_, lx1_, ly0_, ly1_;  // log10 of the axes' ends
  ImVec2 min_, max_;
  bool hovered_ = false;
  mutable std::vector<std::vector<ImVec2>> drawn_;  // the curves' screen points, for marker_label
};

}  // namespace ringlab::viz
