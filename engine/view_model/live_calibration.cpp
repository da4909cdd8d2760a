#include "engine/view_model/live_calibration.h"

#include <algorithm>
#include <cstdint>
#include <map>

namespace ringlab::sim {

namespace {

// From the last arrival to the last finish. Early ranks have sent their first chunk by then, so
// this is a shade under the ring's full cost, but free of the scheduler's skew between ranks.
double record_seconds(const view_model::CollectiveRecord& record) {
  int64_t last_begin = INT64_MIN, last_end = INT64_MIN;
  for (int r = 0; r < record.world_size; ++r) {
    last_begin = std::max(last_begin, record.ranks[r].t_begin_ns);
    last_end = std::max(last_end, record.ranks[r].t_end_ns);
  }
  return (last_end - last_begin) * 1e-9;
}

bool held_at_gate(const view_model::CollectiveRecord& record) {
  for (const view_model::RankCollectiveSpan& span : record.ranks)
    if (span.gate_wait_ns > 0) return true;
  return false;
}

double median_of(std::vector<double> values) {
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(mid), values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  return (*std::max_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(mid)) + upper) / 2;
}

}  // namespace

std::vector<MeasuredAllreduce> measured_allreduces(const view_model::CollectiveLog& log) {
  std::vector<MeasuredAllreduce> out;
  for (size_t i = 0; i < log.size(); ++i) {
    const view_model::CollectiveRecord& record = log.at(i);
    if (record.algorithm != "ring" && record.algorithm != "native") continue;
    if (record.world_size < 2 || record.bytes <= 0 || !record.complete() || held_at_gate(record)) continue;
    const double seconds = record_seconds(record);
    if (seconds <= 0) continue;
    out.push_back({record.key.generation, record.world_size, record.algorithm, static_cast<double>(record.bytes), seconds});
  }
  return out;
}

LiveCalibration calibrate_live(const std::vector<MeasuredAllreduce>& measured) {
  LiveCalibration live;
  if (measured.empty()) return live;
  const MeasuredAllreduce& newest = measured.back();
  live.generation = newest.generation;
  live.world_size = newest.world_size;
  live.algorithm = newest.algorithm;

  std::map<double, std::vector<double>> by_size;
  for (const MeasuredAllreduce& m : measured)
    if (m.generation == live.generation && m.world_size == live.world_size && m.algorithm == live.algorithm)
      by_size[m.bytes].push_back(m.seconds);
  std::vector<BenchPoint> medians;
  for (const auto& [bytes, times] : by_size) {
    live.sizes.push_back({bytes, median_of(times), static_cast<int>(times.size())});
    medians.push_back({bytes, live.sizes.back().median_s, live.algorithm});
  }
  if (live.sizes.size() >= 2) {
    live.calibration = calibrate(medians, Algorithm::Ring, live.world_size);
    live.calibration.source_algorithm = live.algorithm;
    live.fitted = true;
  }
  return live;
}

std::vector<MeasuredVsModel> compare_with_model(const LiveCalibration& live, const LinkParams& link) {
  std::vector<MeasuredVsModel> out;
  if (!live.any()) return out;
  for (const MeasuredSize& s : live.sizes) {
    const double model_s = predict_allreduce(Algorithm::Ring, live.world_size, s.bytes, link);
    out.push_back({s.bytes, s.median_s, model_s, model_s > 0 ? s.median_s / model_s : 0.0});
  }
  return out;
}

}  // namespace ringlab::sim
