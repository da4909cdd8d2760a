#include "viz/plot.h"

#include "viz/rank_colors.h"
#include <algorithm>
#include <cmath>
#include <fmt/core.h>

#include "viz/fonts.h"
#include "viz/theme.h"

namespace ringlab::viz {

std::vector<double> nice_ticks(double lo, double hi, int target, double least_step) {
  std::vector<double> ticks;
  if (!(hi > lo) || target < 1) return ticks;
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  step = std::max(step, least_step);
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  if (!(hi > lo) || lo <= 0) return ticks;
  const int k0 = static_cast<int>(std::floor(std::log10(lo)));
  const int k1 = static_cast<int>(std::ceil(std::log10(hi)));
  const bool dense = k1 - k0 <= 2;
  for (int k = k0; k <= k1; ++k)
    for (double m : dense ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      const double t = m * std::pow(10.0, k);
      if (t >= lo * 0.999 && t <= hi * 1.001) ticks.push_back(t);
    }
  return ticks;
}

// As many decimals as the spacing needs: ticks 2.5 apart read 2.5, 5.0, 7.5, never 2, 5, 8.
std::string format_tick(double v, double step) {
  if (step <= 0) return fmt::format("{:.2f}", v);
  int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 6);
  while (decimals < 6) {
    const double scaled = step * std::pow(10.0, decimals);
    if (std::fabs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) break;
    ++decimals;
  }
  return fmt::format("{:.{}f}", v, decimals);
}

namespace {

// Large numbers are written in thousands ("k") or millions ("M"), from 10,000 and 1,000,000.
double unit_for(double largest) { return largest >= 1e6 ? 1e6 : largest >= 1e4 ? 1e3 : 1; }

std::string format_in_unit(double v, double unit) {
  const double a = std::fabs(v);
  if (a == 0) return "0";
  // A diverged run's loss axis spans 1e-05 to 1e+29: past ten thousand millions, and below 1,
  // a unit says nothing ("1e+29M", "1e-05M"); powers of ten do.
  if (a >= 1e10) return fmt::format("{:.0e}", v);
  if (unit > 1 && a >= 1) return fmt::format("{:.3g}{}", v / unit, unit == 1e6 ? "M" : "k");
  // A log axis of losses runs 1, 0.1, 0.01, 0.001: decimals down to 0.0001, so one axis does not
  // mix "0.01" with "1.0e-03"; smaller than that, powers of ten.
  if (a >= 1e-4) return fmt::format("{:.4g}", v);
  return fmt::format("{:.1e}", v);
}

}  // namespace

std::string format_number(double v) { return format_in_unit(v, unit_for(std::fabs(v))); }

std::string format_duration(double ns) {
  if (ns < 1e6) return fmt::format("{:.1f} µs", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

// One unit for all of an axis's numbers: 5k, 10k, 15k, never 5000 beside 10k.
std::vector<std::string> format_axis(const std::vector<double>& values) {
  double largest = 0;
  for (double v : values) largest = std::max(largest, std::fabs(v));
  std::vector<std::string> out;
  for (double v : values) out.push_back(format_in_unit(v, unit_for(largest)));
  return out;
}

// Decimals while every tick has them (down to 0.0001); once one is smaller, every tick is a
// power of ten ("1", "1e-3", "1e-6"): one format down the whole axis, never "0.0001" over "1.0e-05".
std::vector<std::string> format_log_axis(const std::vector<double>& values) {
  // Below 0.0001, or up to a million and more (a diverged run's losses): powers of ten, not
  // 0.0001 over 1.0e-05, nor "0.001M" under "10M".
  const bool powers =
      std::any_of(values.begin(), values.end(), [](double v) { return (v > 0 && v < 1e-4) || v >= 1e6; });
  if (!powers) return format_axis(values);
  std::vector<std::string> out;
  for (double v : values) {
    const double e = std::log10(v);
    const bool power_of_ten = std::fabs(e - std::round(e)) < 1e-9;
    if (!power_of_ten) out.push_back(fmt::format("{:.1e}", v));
    else if (std::lround(e) == 0) out.push_back("1");
    else out.push_back(fmt::format("1e{}", std::lround(e)));
  }
  return out;
}

void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, uint32_t color, float thickness, float dash) {
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float length = std::sqrt(dx * dx + dy * dy);
  if (length <= 0 || dash <= 0) return;
  for (float t = 0; t < length; t += 2 * dash) {
    const float e = std::min(t + dash, length);
    dl->AddLine(ImVec2(a.x + dx * t / length, a.y + dy * t / length),
                ImVec2(a.x + dx * e / length, a.y + dy * e / length), color, thickness);
  }
}

void dashed_polyline(ImDrawList* dl, const std::vector<ImVec2>& points, uint32_t color, float thickness, float dash) {
  if (dash <= 0) return;
  float phase = 0;  // how far into the current dash-and-gap period the walk is
  for (size_t i = 1; i < points.size(); ++i) {
    const ImVec2 a = points[i - 1], b = points[i];
    const float dx = b.x - a.x, dy = b.y - a.y;
    const float length = std::sqrt(dx * dx + dy * dy);
    float t = 0;
    while (t < length) {
      const bool on = phase < dash;
      const float run = std::min((on ? dash : 2 * dash) - phase, length - t);
      if (on)
        dl->AddLine(ImVec2(a.x + dx * t / length, a.y + dy * t / length),
                    ImVec2(a.x + dx * (t + run) / length, a.y + dy * (t + run) / length), color, thickness);
      t += run;
      phase = std::fmod(phase + run, 2 * dash);
    }
  }
}

ImVec2 reserve_plot_area(const char* id, ImVec2& size, bool& hovered) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  size.x = std::max(size.x, 80.0f);
  size.y = std::max(size.y, 60.0f);
  ImGui::InvisibleButton(id, size);
  hovered = ImGui::IsItemHovered();
  return origin;
}

Plot::Plot(const char* id, ImVec2 size, PlotAxis x, PlotAxis y, const std::string& x_label,
           const std::string& y_label)
    : dl_(ImGui::GetWindowDrawList()), x_(x), y_(y) {
  const ImVec2 origin = reserve_plot_area(id, size, hovered_);
  const float fs = ImGui::GetFontSize();
  pane_max_ = dl_->GetClipRectMax();
  if (y_.log) {
    y_.min = std::log10(std::max(y_.min, 1e-12));
    y_.max = std::log10(std::max(y_.max, 1e-12));
  }
  if (!(x_.max > x_.min)) x_.max = x_.min + 1;
  if (!(y_.max > y_.min)) y_.max = y_.min + 1;
  min_ = ImVec2(origin.x + fs * 3.6f, origin.y + fs * 1.5f);
  max_ = ImVec2(origin.x + size.x - fs * 0.6f, origin.y + size.y - fs * 2.6f);

  // Grid, ticks and their labels.
  const float plot_w = max_.x - min_.x, plot_h = max_.y - min_.y;
  std::vector<AxisTick> xt, yt;
  const std::vector<double> x_values = nice_ticks(x_.min, x_.max, std::max(2, static_cast<int>(plot_w / (fs * 6))), x_.whole ? 1.0 : 0.0);
  const std::vector<std::string> x_texts = format_axis(x_values);
  for (size_t i = 0; i < x_values.size(); ++i) xt.push_back({sx(x_values[i]), x_texts[i]});
  const std::vector<double> y_values = y_.log ? log_ticks(std::pow(10.0, y_.min), std::pow(10.0, y_.max))
                                              : nice_ticks(y_.min, y_.max, std::max(2, static_cast<int>(plot_h / (fs * 2.5f))));
  const std::vector<std::string> y_texts = y_.log ? format_log_axis(y_values) : std::vector<std::string>{};
  for (size_t i = 0; i < y_values.size(); ++i)
    yt.push_back({sy(y_.log ? std::log10(y_values[i]) : y_values[i]), y_.log ? y_texts[i] : format_number(y_values[i])});
  draw_plot_frame(dl_, origin, min_, max_, xt, yt, x_label, y_label);
}

void draw_plot_frame(ImDrawList* dl, ImVec2 origin, ImVec2 min, ImVec2 max, const std::vector<AxisTick>& x_ticks,
                     const std::vector<AxisTick>& y_ticks, const std::string& x_label, const std::string& y_label) {
  const Palette& p = palette();
  const float fs = ImGui::GetFontSize();
  // Every tick keeps its grid line; a number that would touch the one written before it is left out.
  // A number centred under the plot's right edge would reach past the pane's (the last digit of
  // "2000" was cut off): it ends at the pane's edge instead.
  const float pane_right = dl->GetClipRectMax().x;
  float last_right = -1e9f;
  for (const AxisTick& t : x_ticks) {
    dl->AddLine(ImVec2(t.at, min.y), ImVec2(t.at, max.y), p.grid);
    const ImVec2 ts = ImGui::CalcTextSize(t.text.c_str());
    const float left = std::min(t.at - ts.x / 2, pane_right - ts.x);
    if (left < last_right + fs * 0.5f) continue;
    dl->AddText(ImVec2(left, max.y + fs * 0.25f), p.text_dim, t.text.c_str());
    last_right = left + ts.x;
  }
  float last_y = 1e9f;
  for (const AxisTick& t : y_ticks) {
    dl->AddLine(ImVec2(min.x, t.at), ImVec2(max.x, t.at), p.grid);
    const ImVec2 ts = ImGui::CalcTextSize(t.text.c_str());
    if (std::fabs(t.at - last_y) < ts.y * 1.1f) continue;
    dl->AddText(ImVec2(min.x - ts.x - fs * 0.3f, t.at - ts.y / 2), p.text_dim, t.text.c_str());
    last_y = t.at;
  }
  dl->AddRect(min, max, p.axis);
  const ImVec2 xs = ImGui::CalcTextSize(x_label.c_str());
  dl->AddText(ImVec2((min.x + max.x - xs.x) / 2, max.y + fs * 1.3f), p.text, x_label.c_str());
  dl->AddText(ImVec2(origin.x, origin.y), p.text_dim, y_label.c_str());
  dl->PushClipRect(min, max, true);
}

Plot::~Plot() { dl_->PopClipRect(); }

float Plot::sx(double x) const {
  return static_cast<float>(min_.x + (x - x_.min) / (x_.max - x_.min) * (max_.x - min_.x));
}

float Plot::sy(double y) const {
  return static_cast<float>(max_.y - (y - y_.min) / (y_.max - y_.min) * (max_.y - min_.y));
}

ImVec2 Plot::to_screen(double x, double y) const {
  if (y_.log) y = std::log10(std::max(y, 1e-12));
  return ImVec2(sx(x), sy(y));
}

double Plot::x_at(float screen_x) const {
  return x_.min + (screen_x - min_.x) / (max_.x - min_.x) * (x_.max - x_.min);
}

void Plot::line(std::span<const view_model::LossPoint> points, uint32_t color, float thickness) const {
  if (points.size() < 2) {
    dots(points, color, thickness * 1.5f);
    return;
  }
  std::vector<ImVec2> screen;
  screen.reserve(points.size());
  for (const auto& pt : points)
    if (std::isfinite(pt.loss) && (!y_.log || pt.loss > 0)) screen.push_back(to_screen(pt.step, pt.loss));
  if (screen.size() >= 2) dl_->AddPolyline(screen.data(), static_cast<int>(screen.size()), color, 0, thickness);
}

void Plot::band(std::span<const view_model::LossRange> columns, uint32_t color, float thickness) const {
  if (columns.empty()) return;
  // Each column becomes a vertical edge from its lowest to its highest loss (a single point an
  // edge `thickness` tall), centred on the column's steps; neighbouring edges are joined by two
  // triangles. On a log axis a loss of 0 goes to the bottom (the clip rectangle cuts it).
  std::vector<ImVec2> top, bottom;
  top.reserve(columns.size());
  bottom.reserve(columns.size());
  for (const auto& c : columns) {
    const double x = (c.step0 + c.step1) / 2;
    float y_hi = to_screen(x, c.hi).y, y_lo = to_screen(x, c.lo).y;
    if (y_lo - y_hi < thickness) {
      const float mid = (y_lo + y_hi) / 2;
      y_hi = mid - thickness / 2;
      y_lo = mid + thickness / 2;
    }
    top.emplace_back(sx(x), y_hi);
    bottom.emplace_back(sx(x), y_lo);
  }
  if (columns.size() == 1) {
    dl_->AddRectFilled(ImVec2(top[0].x - thickness / 2, top[0].y), ImVec2(bottom[0].x + thickness / 2, bottom[0].y), color);
    return;
  }
  // Vertex 2i is column i's top, 2i + 1 its bottom; each pair of neighbours makes a quad.
  const int n = static_cast<int>(columns.size());
  dl_->PrimReserve((n - 1) * 6, n * 2);
  const ImVec2 uv = ImGui::GetFontTexUvWhitePixel();
  const auto base = static_cast<ImDrawIdx>(dl_->_VtxCurrentIdx);
  for (int i = 0; i < n; ++i) {
    dl_->PrimWriteVtx(top[i], uv, color);
    dl_->PrimWriteVtx(bottom[i], uv, color);
  }
  for (int i = 0; i + 1 < n; ++i)
    for (int k : {0, 1, 3, 0, 3, 2}) dl_->PrimWriteIdx(static_cast<ImDrawIdx>(base + 2 * i + k));
}

// Whole on the frame's right edge, where the run's last epoch's MSE sits (clipped to the frame it
// showed as a half dot), and a lone dot on its left edge too (a run's first step). Dots crowded at
// a long run's start (earlier runs) reached over the y axis's numbers: those stay inside.
void Plot::dots(std::span<const view_model::LossPoint> points, uint32_t color, float radius) const {
  const float left = points.size() == 1 ? min_.x - radius : min_.x;
  dl_->PushClipRect(ImVec2(left, min_.y), ImVec2(std::min(max_.x + radius, pane_max_.x), max_.y));
  for (const auto& pt : points) {
    const ImVec2 at = to_screen(pt.step, pt.loss);
    const bool inside = at.x >= min_.x - 0.5f && at.x <= max_.x + 0.5f && at.y >= min_.y - 0.5f && at.y <= max_.y + 0.5f;
    if (inside && std::isfinite(pt.loss) && (!y_.log || pt.loss > 0)) dl_->AddCircleFilled(at, radius, color);
  }
  dl_->PopClipRect();
}

void Plot::marker(double x, uint32_t color, const std::string& text) const {
  marker_line(x, color);
  if (!text.empty()) marker_label(x, color, text);
}

void Plot::marker_line(double x, uint32_t color) const {
  const float px = sx(x);
  dashed_line(dl_, ImVec2(px, min_.y), ImVec2(px, max_.y), color, 2.0f, 6.0f);
}

void Plot::marker_label(double x, uint32_t color, const std::string& text) const {
  const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
  const float fs = ImGui::GetFontSize();
  // Right of its line, or left of it where the plot's edge is too near: moved in from the edge
  // only, the label sat across its own dashed line.
  const float right = sx(x) + fs * 0.3f, left = sx(x) - fs * 0.3f - ts.x;
  const float x0 = right + ts.x <= max_.x - fs * 0.2f ? right
                   : left >= min_.x + 3               ? left
                                                      : std::min(right, max_.x - ts.x - fs * 0.2f);
  // Markers close together (switches a few steps apart) stack their labels, one line each,
  // as far down as the plot has room; a label with no room left is in the hover read-out.
  float y0 = min_.y + 3;
  const auto clashes = [&](float y) {
    for (const ImVec4& r : marker_labels_)
      if (x0 - 3 < r.z && x0 + ts.x + 3 > r.x && y < r.w && y + ts.y + 2 > r.y) return true;
    return false;
  };
  while (clashes(y0) && y0 + 2 * (ts.y + 2) < max_.y) y0 += ts.y + 3;
  if (clashes(y0)) return;
  marker_labels_.push_back(ImVec4(x0 - 3, y0, x0 + ts.x + 3, y0 + ts.y + 2));
  dl_->AddRectFilled(ImVec2(x0 - 3, y0), ImVec2(x0 + ts.x + 3, y0 + 2 + ts.y), with_alpha(palette().canvas, 0.85f), 3);
  dl_->AddText(ImVec2(x0, y0 + 1), color, text.c_str());
}

namespace {

// How many lines the entries take in `width`, each `swatch` plus its text, `gap` between them.
int legend_lines(std::span<const LegendEntry> entries, bool short_texts, float width, float swatch, float gap) {
  int lines = 1;
  float x = 0;
  for (const auto& e : entries) {
    const std::string& t = short_texts && !e.short_text.empty() ? e.short_text : e.text;
    const float w = swatch + ImGui::CalcTextSize(t.c_str()).x;
    if (x > 0 && x + gap + w > width) {
      ++lines;
      x = 0;
    }
    x += (x > 0 ? gap : 0) + w;
  }
  return lines;
}

// Long names take more than two lines of a narrow pane: the short ones keep the plot's height.
bool legend_short_texts(std::span<const LegendEntry> entries, bool prefer_short) {
  const float fs = ImGui::GetFontSize();
  return prefer_short || legend_lines(entries, false, ImGui::GetContentRegionAvail().x, fs * 1.7f, fs) > 2;
}

}  // namespace

float LegendHeight(std::span<const LegendEntry> entries, bool prefer_short) {
  if (entries.empty()) return 0;
  const float fs = ImGui::GetFontSize();
  const int lines = legend_lines(entries, legend_short_texts(entries, prefer_short), ImGui::GetContentRegionAvail().x,
                                 fs * 1.7f, fs);
  return lines * ImGui::GetTextLineHeightWithSpacing();
}

namespace {

// The entry's sample, `width` wide at `at`, as its data looks on the plot: a line, a dashed line
// (dashes shorter than the plot's, so that the short sample shows more than one), or a measured
// point.
void draw_swatch(const LegendEntry& e, ImVec2 at, float width) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const ImVec2 a(at.x, at.y + fs * 0.55f), b(at.x + width, at.y + fs * 0.55f);
  switch (e.swatch) {
    case LegendEntry::Swatch::line: dl->AddLine(a, b, e.color, e.thickness + 1); break;
    case LegendEntry::Swatch::dashed: dashed_line(dl, a, b, e.color, e.thickness + 1, fs * 0.3f); break;
    case LegendEntry::Swatch::ranks: {
      const int n = std::max(e.rank_colors, 1);
      for (int r = 0; r < n; ++r)
        dl->AddLine(ImVec2(a.x + width * r / n, a.y), ImVec2(a.x + width * (r + 1) / n, a.y), rank_color(r, 0.85f) | 0xFF000000,
                    e.thickness + 1);
      break;
    }
    case LegendEntry::Swatch::point: {
      const ImVec2 c((a.x + b.x) / 2, a.y);
      const float r = fs * 0.3f;
      dl->AddCircleFilled(c, r, e.color);
      dl->AddCircle(c, r, palette().text, 0, 1.5f);
      break;
    }
  }
}

}  // namespace

std::vector<std::string> LegendRow(std::span<const LegendEntry> entries, bool prefer_short) {
  const float fs = ImGui::GetFontSize();
  const float line_w = fs * 1.4f;
  const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
  const bool short_texts = legend_short_texts(entries, prefer_short);
  std::vector<std::string> drawn;
  bool first = true;
  for (const auto& entry : entries) {
    LegendEntry e = entry;
    if (short_texts && !e.short_text.empty()) e.text = e.short_text;
    const float w = line_w + fs * 0.3f + ImGui::CalcTextSize(e.text.c_str()).x;
    if (!first) {
      ImGui::SameLine(0, fs);
      if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
    }
    first = false;
    draw_swatch(e, ImGui::GetCursorScreenPos(), line_w);
    ImGui::Dummy(ImVec2(line_w, fs));
    ImGui::SameLine(0, fs * 0.3f);
    ImGui::TextUnformatted(e.text.c_str());
    drawn.push_back(std::move(e.text));
  }
  return drawn;
}

namespace {

// Whether the segment a-b meets the rectangle [lo, hi], its edges included: the segment clipped
// to the rectangle's four sides in turn (Liang and Barsky, 1984) leaves a piece.
bool segment_meets_rect(ImVec2 a, ImVec2 b, ImVec2 lo, ImVec2 hi) {
  float t0 = 0, t1 = 1;
  const float d[2] = {b.x - a.x, b.y - a.y};
  const float from[2] = {a.x, a.y}, low[2] = {lo.x, lo.y}, high[2] = {hi.x, hi.y};
  for (int axis = 0; axis < 2; ++axis) {
    if (d[axis] == 0) {
      if (from[axis] < low[axis] || from[axis] > high[axis]) return false;  // parallel, outside
      continue;
    }
    float enter = (low[axis] - from[axis]) / d[axis], leave = (high[axis] - from[axis]) / d[axis];
    if (enter > leave) std::swap(enter, leave);
    t0 = std::max(t0, enter);
    t1 = std::min(t1, leave);
    if (t0 > t1) return false;
  }
  return true;
}

}  // namespace

int segments_through(const std::vector<std::vector<ImVec2>>& lines, ImVec2 lo, ImVec2 hi) {
  int count = 0;
  for (const std::vector<ImVec2>& line : lines)
    for (size_t i = 1; i < line.size(); ++i) count += segment_meets_rect(line[i - 1], line[i], lo, hi) ? 1 : 0;
  return count;
}

}  // namespace ringlab::viz
