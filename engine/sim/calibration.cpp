#include "engine/sim/calibration.h"

#include <fmt/core.h>

#include <cmath>
#include <set>

#include "engine/core/error.h"

namespace ringlab::sim {

ModelCoefficients model_coefficients(Algorithm algorithm, int64_t p, const AlgorithmOptions& options) {
  if (p < 2) throw InputError(fmt::format("world size {} communicates nothing: cannot fit a link to it", p));
  const double pd = static_cast<double>(p);
  switch (algorithm) {
    case Algorithm::Ring:
      return {2 * (pd - 1), 2 * (pd - 1) / pd, (pd - 1) / pd};
    case Algorithm::Tree: {
      if (options.tree_segments != 1) throw InputError("a pipelined tree is not a line in the size: fit with tree_segments = 1");
      const double levels = ceil_log2(p);
      return {2 * levels, 2 * levels, levels};
    }
    case Algorithm::Rhd: {
      const int64_t core = floor_pow2(p);
      const double share = static_cast<double>(core - 1) / static_cast<double>(core);
      const double extra = core == p ? 0.0 : 1.0;
      return {2.0 * ceil_log2(core) + 2 * extra, 2 * share + 2 * extra, share + extra};
    }
    case Algorithm::ParameterServer: {
      const double k = std::max(1, options.ps_shards);
      // Which link binds (servers' or workers') does not depend on n when alpha and beta scale
      // together; take the servers' when p >= k, as ps_allreduce_s does.
      if (pd >= k) return {2 * pd, 2 * pd / k, (pd - 1) / k};
      return {2 * k, 2.0, (pd - 1) / k};
    }
    case Algorithm::Dbt:
      throw InputError("the double binary tree is pipelined (not a straight line in the size): fit ring, tree, rhd or ps");
  }
  throw InputError("unknown algorithm");
}

LineFit fit_line(const std::vector<BenchPoint>& points) {
  std::set<double> sizes;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!(points[i].seconds > 0) || !std::isfinite(points[i].seconds))
      throw InputError(fmt::format("point {}: time must be > 0 s, got {}", i, points[i].seconds));
    sizes.insert(points[i].bytes);
  }
  if (sizes.size() < 2)
    throw InputError(fmt::format("a fit needs at least two different message sizes; got {}", sizes.size()));

  // Normal equations of  min sum w (a + b n - t)^2  with w = 1/t^2.
  double sw = 0, sn = 0, snn = 0, st = 0, snt = 0;
  for (const BenchPoint& p : points) {
    const double w = 1.0 / (p.seconds * p.seconds);
    sw += w;
    sn += w * p.bytes;
    snn += w * p.bytes * p.bytes;
    st += w * p.seconds;
    snt += w * p.bytes * p.seconds;
  }
  LineFit fit;
  const double det = sw * snn - sn * sn;
  fit.intercept_s = (st * snn - sn * snt) / det;
  fit.slope_s_per_byte = (sw * snt - sn * st) / det;
  if (fit.intercept_s < 0) {
    fit.intercept_s = 0;
    fit.slope_s_per_byte = snn > 0 ? snt / snn : 0;
  } else if (fit.slope_s_per_byte < 0) {
    fit.slope_s_per_byte = 0;
    fit.intercept_s = st / sw;
  }
  double sum_sq = 0;
  for (const BenchPoint& p : points) {
    const double r = (fit.intercept_s + fit.slope_s_per_byte * p.bytes - p.seconds) / p.seconds;
    sum_sq += r * r;
  }
  fit.points = static_cast<int>(points.size());
  fit.rms_relative_error = std::sqrt(sum_sq / static_cast<double>(points.size()));
  return fit;
}

Calibration calibrate(const std::vector<BenchPoint>& points, Algorithm algorithm, int64_t world_size,
                      double known_gamma_s_per_byte, const AlgorithmOptions& options) {
  const ModelCoefficients c = model_coefficients(algorithm, world_size, options);
  Calibration out;
  out.algorithm = algorithm;
  out.world_size = world_size;
  out.fit = fit_line(points);
  out.link.alpha_s = out.fit.intercept_s / c.latency;
  if (known_gamma_s_per_byte >= 0) {
    out.gamma_separated = true;
    out.link.gamma_s_per_byte = known_gamma_s_per_byte;
    out.link.beta_s_per_byte =
        std::max(0.0, (out.fit.slope_s_per_byte - c.per_byte_gamma * known_gamma_s_per_byte) / c.per_byte_beta);
  } else {
    out.link.beta_s_per_byte = out.fit.slope_s_per_byte / c.per_byte_beta;
  }
  return out;
}

Calibration calibrate_bench_file(const BenchFile& file, double known_gamma_s_per_byte, const std::string& which) {
  std::string wanted = which;
  if (wanted.empty()) {
    std::set<std::string> present;
    for (const BenchPoint& p : file.points) present.insert(p.algorithm);
    wanted = present.size() == 1 ? *present.begin() : "ring";
  }
  std::vector<BenchPoint> chosen;
  for (const BenchPoint& p : file.points)
    if (p.algorithm == wanted) chosen.push_back(p);
  if (chosen.empty()) throw InputError(fmt::format("bench file has no results for algorithm '{}'", wanted));
  // The backend's own all-reduce: gloo's and OpenMPI's large-message schedules are ring-like.
  const Algorithm model = (wanted == "native" || wanted.empty()) ? Algorithm::Ring : parse_algorithm(wanted);
  Calibration out = calibrate(chosen, model, file.world_size, known_gamma_s_per_byte);
  out.source_algorithm = wanted;
  return out;
}

}  // namespace ringlab::sim
