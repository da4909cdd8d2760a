#include "engine/view_model/loss_series.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ringlab::view_model {

void LossExtent::take(double x, double y) {
  if (!std::isfinite(y)) return;
  if (!any) {
    x0 = x1 = x;
    y0 = y1 = y;
    any = true;
  }
  x0 = std::min(x0, x);
  x1 = std::max(x1, x);
  y0 = std::min(y0, y);
  y1 = std::max(y1, y);
  if (y > 0 && (y0_positive == 0 || y < y0_positive)) y0_positive = y;
}

namespace {

// From the epochs' first steps: epoch k spans [starts[k], starts[k+1]); the last one, still going
// or ended, is as long as the one before it, or reaches the last step when it is the only one.
double epoch_from_starts(const std::vector<double>& starts, double step, double last_step) {
  auto it = std::upper_bound(starts.begin(), starts.end(), step);
  const size_t k = it == starts.begin() ? 0 : static_cast<size_t>(it - starts.begin()) - 1;
  const double begin = starts[k];
  double length = k + 1 < starts.size() ? starts[k + 1] - begin
                  : k > 0               ? begin - starts[k - 1]
                                        : last_step + 1 - begin;
  length = std::max(length, 1.0);
  return static_cast<double>(k) + std::clamp((step - begin) / length, 0.0, 1.0);
}

}  // namespace

double LossSeries::epoch_of_step(double step) const {
  if (epoch_mse.empty() && !epoch_starts.empty()) return epoch_from_starts(epoch_starts, step, last_step);
  if (epoch_mse.empty()) return step;
  // The first epoch whose end (its recorded step: the steps done by then) is at or after `step`.
  auto it = std::lower_bound(epoch_mse.begin(), epoch_mse.end(), step,
                             [](const EpochPoint& e, double s) { return e.step < s; });
  if (it == epoch_mse.end()) --it;
  const size_t k = static_cast<size_t>(it - epoch_mse.begin());
  const double end = it->step;
  const double begin = k == 0 ? 0.0 : epoch_mse[k - 1].step;
  return static_cast<double>(k) + (step - begin) / std::max(end - begin, 1.0);
}

bool LossSeries::empty() const {
  for (const auto& r : rank_loss)
    if (!r.empty()) return false;
  return epoch_mse.empty();
}

bool LossSeries::bounds(double& x0, double& x1, double& y0, double& y1) const {
  if (extent.any) {
    x0 = extent.x0;
    x1 = extent.x1;
    y0 = extent.y0;
    y1 = extent.y1;
    return true;
  }
  x0 = y0 = std::numeric_limits<double>::infinity();
  x1 = y1 = -std::numeric_limits<double>::infinity();
  auto take = [&](double x, double y) {
    if (!std::isfinite(y)) return;
    x0 = std::min(x0, x);
    x1 = std::max(x1, x);
    y0 = std::min(y0, y);
    y1 = std::max(y1, y);
  };
  for (const auto& r : rank_loss)
    for (const auto& p : r) take(p.step, p.loss);
  for (const auto& e : epoch_mse) take(e.step, e.mse);
  return x0 <= x1;
}

void LossSeriesBuilder::clear() {
  std::string label = std::move(series_.label);
  series_ = LossSeries{};
  series_.label = std::move(label);
  step_offset_.clear();
  last_step_of_.clear();
  first_generation_ = -1;
}

// A new set of workers after a live change may count steps from zero again or continue from
// the checkpoint; either way its curve continues where the previous world stopped.
double LossSeriesBuilder::step_of(const Event& event, int generation, int world_size,
                                  const std::string& backend) {
  auto it = step_offset_.find(generation);
  if (it == step_offset_.end()) {
    double offset = 0;
    if (first_generation_ < 0) {
      first_generation_ = generation;
    } else if (generation > first_generation_) {
      if (event.step <= series_.last_step) offset = series_.last_step + 1 - event.step;
      series_.changes.push_back({series_.last_step + 0.5, world_size, backend});
    }
    it = step_offset_.emplace(generation, offset).first;
  }
  return event.step + it->second;
}

void LossSeriesBuilder::consume(const Event& event, int generation, int world_size,
                                const std::string& backend) {
  if (event.kind == EventKind::StepEnd && event.step >= 0 && event.rank >= 0) {
    const double x = step_of(event, generation, world_size, backend);
    if (static_cast<int>(series_.rank_loss.size()) <= event.rank) series_.rank_loss.resize(event.rank + 1);
    auto& points = series_.rank_loss[event.rank];
    if (!is_joined_step(event) && (points.empty() || points.back().step < x)) {
      points.push_back({x, event.value});
      series_.extent.take(x, event.value);
    }
    series_.last_step = std::max(series_.last_step, x);
    if (event.epoch >= 0 && event.epoch == static_cast<int>(series_.epoch_starts.size()))
      series_.epoch_starts.push_back(x);
    double& last = last_step_of_[generation];
    last = std::max(last, x);
  } else if (event.kind == EventKind::EpochEnd && event.epoch >= 0) {
    double x = event.step >= 0 ? step_of(event, generation, world_size, backend)
                               : (last_step_of_.count(generation) ? last_step_of_[generation]
                                                                  : series_.last_step);
    series_.epoch_mse.push_back({event.epoch, x, event.value});
    series_.mse_curve.push_back({x, event.value});
    series_.extent.take(x, event.value);
  }
}

namespace {

// The points of [x0, x1] and their neighbour on each side: [first, last).
std::pair<size_t, size_t> span_with_neighbours(std::span<const LossPoint> points, double x0, double x1) {
  auto by_step = [](const LossPoint& p, double x) { return p.step < x; };
  size_t first = std::lower_bound(points.begin(), points.end(), x0, by_step) - points.begin();
  size_t last = std::lower_bound(points.begin(), points.end(), x1, by_step) - points.begin();
  if (first > 0) --first;            // the neighbour left of the range
  if (last < points.size()) ++last;  // and the one right of it
  return {first, last};
}

// Calls column(begin, end) for each run of points in one bucket of x, in order.
template <typename F>
void for_each_bucket(std::span<const LossPoint> points, size_t first, size_t last, double x0, double width, F&& column) {
  size_t i = first;
  while (i < last) {
    const double bucket = std::floor((points[i].step - x0) / width);
    size_t j = i + 1;
    while (j < last && std::floor((points[j].step - x0) / width) == bucket) ++j;
    column(i, j);
    i = j;
  }
}

// More than two points a bucket: drawn one by one they would fill columns, not trace a line.
bool dense(size_t first, size_t last, int buckets) { return last - first > static_cast<size_t>(2 * buckets); }

}  // namespace

bool dense_in(std::span<const LossPoint> points, double x0, double x1, int buckets) {
  if (points.empty() || buckets <= 0 || !(x1 > x0)) return false;
  const auto [first, last] = span_with_neighbours(points, x0, x1);
  return dense(first, last, buckets);
}

std::vector<LossPoint> decimate(std::span<const LossPoint> points, double x0, double x1, int buckets) {
  std::vector<LossPoint> out;
  if (points.empty() || buckets <= 0 || !(x1 > x0)) return out;
  const auto [first, last] = span_with_neighbours(points, x0, x1);
  if (!dense(first, last, buckets)) {
    out.assign(points.begin() + first, points.begin() + last);
    return out;
  }
  for_each_bucket(points, first, last, x0, (x1 - x0) / buckets, [&](size_t begin, size_t end) {
    size_t lo = begin, hi = begin;
    for (size_t j = begin; j < end; ++j) {
      if (points[j].loss < points[lo].loss) lo = j;
      if (points[j].loss > points[hi].loss) hi = j;
    }
    out.push_back(points[std::min(lo, hi)]);
    if (lo != hi) out.push_back(points[std::max(lo, hi)]);
  });
  return out;
}

std::vector<LossRange> column_ranges(std::span<const LossPoint> points, double x0, double x1, int buckets) {
  std::vector<LossRange> out;
  if (points.empty() || buckets <= 0 || !(x1 > x0)) return out;
  const auto [first, last] = span_with_neighbours(points, x0, x1);
  for_each_bucket(points, first, last, x0, (x1 - x0) / buckets, [&](size_t begin, size_t end) {
    LossRange r{points[begin].step, points[end - 1].step, INFINITY, -INFINITY};
    for (size_t j = begin; j < end; ++j)
      if (std::isfinite(points[j].loss)) {
        r.lo = std::min(r.lo, points[j].loss);
        r.hi = std::max(r.hi, points[j].loss);
      }
    if (r.lo <= r.hi) out.push_back(r);  // a column of NaN or infinite losses only is left out
  });
  return out;
}

CurveShape CurveReduction::shape(std::span<const LossPoint> points, double x0, double x1, int buckets) {
  const double tolerance = (x1 - x0) * 0.01;
  const size_t grown_enough = size_ + std::min<size_t>(size_ / 100, 128) + 8;
  const bool stale = data_ != points.data() || points.size() < size_ || points.size() > grown_enough ||
                     std::fabs(x0_ - x0) > tolerance || std::fabs(x1_ - x1) > tolerance || buckets_ != buckets;
  if (stale) {
    data_ = points.data();
    size_ = points.size();
    x0_ = x0;
    x1_ = x1;
    buckets_ = buckets;
    const bool is_dense = dense_in(points, x0, x1, buckets);
    columns_ = is_dense ? column_ranges(points, x0, x1, buckets) : std::vector<LossRange>{};
    line_ = is_dense ? std::vector<LossPoint>{} : decimate(points, x0, x1, buckets);
  }
  CurveShape out{columns_, line_};
  const std::span<const LossPoint> since = points.subspan(size_);
  if (columns_.empty()) {
    out.line.insert(out.line.end(), since.begin(), since.end());
    return out;
  }
  // The points since, reduced the same way. Drawn as a line they would zigzag up and down within
  // a pixel or two, and a thick line's joins at such turns reach far above and below the curve:
  // at the live edge, a spike that is not in the data.
  const std::vector<LossRange> more = column_ranges(since, x0, x1, buckets);
  out.columns.insert(out.columns.end(), more.begin(), more.end());
  return out;
}

bool nearest_point(std::span<const LossPoint> points, double x, LossPoint& out) {
  if (points.empty()) return false;
  auto it = std::lower_bound(points.begin(), points.end(), x,
                             [](const LossPoint& p, double v) { return p.step < v; });
  if (it == points.end()) {
    out = points.back();
  } else if (it == points.begin()) {
    out = *it;
  } else {
    out = (x - (it - 1)->step <= it->step - x) ? *(it - 1) : *it;
  }
  return true;
}

}  // namespace ringlab::view_model
