#include "viz/log_plot.h"

#include <algorithm>
#include <cmath>

#include "viz/plot.h"
#include "viz/theme.h"

namespace ringlab::viz {

namespace {

// The exponents in [e0, e1] that are multiples of k: 1 KiB, 1 MiB (or 1, 1000) stay where they are.
std::vector<int> multiples_of(int e0, int e1, int k) {
  std::vector<int> found;
  for (int e = e0; e <= e1; ++e)
    if (((e % k) + k) % k == 0) found.push_back(e);
  return found;
}

// Every k-th power, for the smallest k of `steps` that leaves at most `most` ticks and at least
// two. A small plot (large text) can leave room for two only, where every k gives more or fewer
// (a 2^3..2^33 axis: 1 KiB, 1 MiB, 1 GiB at k = 10, only 1 MiB at 20): then the first and last of
// the sparsest k that still gives two, so an axis never carries a single tick, which gives no scale.
std::vector<double> every_kth_power(double lo, double hi, double base, const std::vector<int>& steps, int most) {
  const int e0 = static_cast<int>(std::ceil(std::log(lo) / std::log(base) - 1e-9));
  const int e1 = static_cast<int>(std::floor(std::log(hi) / std::log(base) + 1e-9));
  std::vector<int> chosen = multiples_of(e0, e1, steps.front());
  for (int k : steps) {
    const std::vector<int> found = multiples_of(e0, e1, k);
    if (found.size() < 2) break;
    chosen = found;
    if (found.size() <= static_cast<size_t>(std::max(most, 2))) break;
  }
  if (chosen.size() > static_cast<size_t>(std::max(most, 2))) chosen = {chosen.front(), chosen.back()};
  std::vector<double> ticks;
  for (int e : chosen) ticks.push_back(std::pow(base, e));
  return ticks;
}

}  // namespace

std::vector<double> power_of_two_ticks(double lo, double hi, int most) {
  if (!(hi > lo) || lo <= 0) return {};
  return every_kth_power(lo, hi, 2.0, {1, 2, 5, 10, 20}, most);
}

std::vector<double> decade_ticks(double lo, double hi, int most) {
  if (!(hi > lo) || lo <= 0) return {};
  return every_kth_power(lo, hi, 10.0, {1, 2, 3, 6}, most);
}

LogLogPlot::LogLogPlot(const char* id, ImVec2 size, LogAxis x, LogAxis y, const std::string& x_label,
                       const std::string& y_label)
    : dl_(ImGui::GetWindowDrawList()), x_(x), y_(y) {
  const ImVec2 origin = reserve_plot_area(id, size, hovered_);
  const float fs = ImGui::GetFontSize();
  x_.min = std::max(x_.min, 1e-300);
  y_.min = std::max(y_.min, 1e-300);
  if (!(x_.max > x_.min)) x_.max = x_.min * 10;
  if (!(y_.max > y_.min)) y_.max = y_.min * 10;
  lx0_ = std::log10(x_.min), lx1_ = std::log10(x_.max);
  ly0_ = std::log10(y_.min), ly1_ = std::log10(y_.max);
  auto text_of = [](const LogAxis& a, double v) { return a.format ? a.format(v) : format_number(v); };
  // The y ticks first: the widest of their labels sets the left margin.
  const float plot_h = size.y - fs * 4.1f;
  const int most_y = static_cast<int>(plot_h / (fs * 1.8f));
  const auto y_ticks = y_.ticks ? y_.ticks(y_.min, y_.max, most_y) : decade_ticks(y_.min, y_.max, most_y);
  float y_label_w = 0;
  for (double t : y_ticks) y_label_w = std::max(y_label_w, ImGui::CalcTextSize(text_of(y_, t).c_str()).x);
  min_ = ImVec2(origin.x + y_label_w + fs * 0.8f, origin.y + fs * 1.5f);
  max_ = ImVec2(origin.x + size.x - fs * 1.6f, origin.y + size.y - fs * 2.6f);

  const float plot_w = max_.x - min_.x;
  const auto x_ticks = x_.ticks ? x_.ticks(x_.min, x_.max, static_cast<int>(plot_w / (fs * 5.5f)))
                                : decade_ticks(x_.min, x_.max, static_cast<int>(plot_w / (fs * 5.5f)));
  std::vector<AxisTick> xt, yt;
  for (double t : x_ticks) xt.push_back({sx(t), text_of(x_, t)});
  for (double t : y_ticks) yt.push_back({sy(t), text_of(y_, t)});
  draw_plot_frame(dl_, origin, min_, max_, xt, yt, x_label, y_label);
}

LogLogPlot::~LogLogPlot() { dl_->PopClipRect(); }

float LogLogPlot::sx(double x) const {
  return static_cast<float>(min_.x + (std::log10(x) - lx0_) / (lx1_ - lx0_) * (max_.x - min_.x));
}

float LogLogPlot::sy(double y) const {
  return static_cast<float>(max_.y - (std::log10(y) - ly0_) / (ly1_ - ly0_) * (max_.y - min_.y));
}

ImVec2 LogLogPlot::to_screen(double x, double y) const { return ImVec2(sx(x), sy(y)); }

double LogLogPlot::x_at(float screen_x) const {
  return std::pow(10.0, lx0_ + (screen_x - min_.x) / (max_.x - min_.x) * (lx1_ - lx0_));
}

void LogLogPlot::line(std::span<const double> xs, std::span<const double> ys, uint32_t color, float thickness,
                      bool dashed) const {
  std::vector<ImVec2> screen;
  screen.reserve(xs.size());
  for (size_t i = 0; i < xs.size() && i < ys.size(); ++i)
    if (xs[i] > 0 && ys[i] > 0 && std::isfinite(ys[i])) screen.push_back(to_screen(xs[i], ys[i]));
  if (!dashed) {
    if (screen.size() >= 2) dl_->AddPolyline(screen.data(), static_cast<int>(screen.size()), color, 0, thickness);
  } else {
    const float dash = ImGui::GetFontSize() * 0.45f;
    for (size_t i = 1; i < screen.size(); ++i) dashed_line(dl_, screen[i - 1], screen[i], color, thickness, dash);
  }
  drawn_.push_back(std::move(screen));
}

void LogLogPlot::point(double x, double y, uint32_t color, float radius) const {
  if (!(x > 0 && y > 0)) return;
  const ImVec2 c = to_screen(x, y);
  // Its outline, for marker_label: a label put over a measured point would hide the data.
  const float r = radius + 2.0f;
  drawn_.push_back({ImVec2(c.x - r, c.y - r), ImVec2(c.x + r, c.y - r), ImVec2(c.x + r, c.y + r), ImVec2(c.x - r, c.y + r),
                    ImVec2(c.x - r, c.y - r)});
  dl_->AddCircleFilled(c, radius + 2.0f, palette().canvas);
  dl_->AddCircleFilled(c, radius, color);
  dl_->AddCircle(c, radius, palette().text, 0, 1.5f);
}

void LogLogPlot::marker(double x, uint32_t color) const {
  if (!(x > 0)) return;
  const float px = sx(x);
  dashed_line(dl_, ImVec2(px, min_.y), ImVec2(px, max_.y), color, 2.0f, ImGui::GetFontSize() * 0.35f);
}

void LogLogPlot::marker_label(double x, uint32_t color, const std::vector<std::string>& texts) const {
  if (!(x > 0)) return;
  const float px = sx(x);
  const float fs = ImGui::GetFontSize();
  // Every text at every spot beside the line that lies inside the plot, with what it would hide.
  struct Spot {
    const std::string* text;
    ImVec2 at, size;
    int hidden;
  };
  std::vector<Spot> spots;
  for (const std::string& text : texts) {
    const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    for (const float y0 : {min_.y + 4, max_.y - 4 - ts.y})
      for (const float x0 : {px + fs * 0.3f, px - fs * 0.3f - ts.x})
        if (x0 >= min_.x + fs * 0.2f && x0 + ts.x <= max_.x - fs * 0.2f)
          spots.push_back({&text, ImVec2(x0, y0), ts,
                           segments_through(drawn_, ImVec2(x0 - 3, y0 - 1), ImVec2(x0 + ts.x + 3, y0 + ts.y + 1))});
  }
  if (spots.empty()) return;
  // The longest text that hides nothing; else the longest that fits, where it hides the least.
  auto best = std::find_if(spots.begin(), spots.end(), [](const Spot& s) { return s.hidden == 0; });
  if (best == spots.end()) {
    best = spots.begin();  // the longest text that fits: its spots come first
    for (auto s = spots.begin(); s != spots.end() && s->text == spots.front().text; ++s)
      if (s->hidden < best->hidden) best = s;
  }
  const ImVec2 at = best->at, ts = best->size;
  dl_->AddRectFilled(ImVec2(at.x - 3, at.y - 1), ImVec2(at.x + ts.x + 3, at.y + 1 + ts.y), with_alpha(palette().canvas, 0.85f), 3);
  dl_->AddText(at, color, best->text->c_str());
}

}  // namespace ringlab::viz
