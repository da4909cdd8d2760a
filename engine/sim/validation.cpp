#include "engine/sim/validation.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/core/error.h"

namespace ringlab::sim {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void require_tolerance(double tolerance) {
  if (!(tolerance > 0) || !std::isfinite(tolerance))
    throw InputError(fmt::format("tolerance must be a fraction > 0 (0.25: within 25%); got {}", tolerance));
}

ComparisonRow compare(std::string quantity, double bytes, double predicted_s, Repeated measured, double tolerance) {
  ComparisonRow row;
  row.quantity = std::move(quantity);
  row.bytes = bytes;
  row.predicted_s = predicted_s;
  row.ratio = predicted_s / measured.median;
  row.verdict = judge(predicted_s, measured, tolerance);
  row.measured = std::move(measured);
  return row;
}

}  // namespace

Repeated summarize_repeats(std::vector<double> values) {
  if (values.empty()) throw InputError("no measurement to summarise");
  for (double v : values)
    if (!(v > 0) || !std::isfinite(v)) throw InputError(fmt::format("a measured time must be > 0 s; got {}", v));
  Repeated r;
  r.median = median_of(values);
  std::vector<double> deviation;
  for (double v : values) deviation.push_back(std::fabs(v - r.median));
  r.spread = median_of(deviation) / r.median;
  r.values = std::move(values);
  return r;
}

BenchSeries merge_bench_files(const std::vector<BenchFile>& files, const std::vector<std::string>& origins,
                              const std::string& algorithm) {
  if (files.empty()) throw InputError("no bench file to validate against");
  auto origin = [&](size_t i) { return i < origins.size() ? origins[i] : fmt::format("bench file {}", i + 1); };
  BenchSeries series;
  series.backend = files[0].backend;
  series.world_size = files[0].world_size;
  series.algorithm = algorithm;
  std::map<double, std::vector<double>> by_size;
  for (size_t i = 0; i < files.size(); ++i) {
    const BenchFile& f = files[i];
    if (f.backend != series.backend || f.world_size != series.world_size)
      throw InputError(fmt::format("{}: backend '{}' with {} ranks, but {} has '{}' with {} ranks; validate one "
                                   "configuration at a time", origin(i), f.backend, f.world_size, origin(0),
                                   series.backend, series.world_size));
    size_t found = 0;
    for (const BenchPoint& p : f.points) {
      if (p.algorithm != algorithm) continue;
      by_size[p.bytes].push_back(p.seconds);
      ++found;
    }
    if (found == 0) throw InputError(fmt::format("{}: no results for algorithm '{}'", origin(i), algorithm));
  }
  for (auto& [bytes, times] : by_size) {
    if (times.size() != files.size())
      throw InputError(fmt::format("size {} B was measured in {} of the {} bench files; sweep the same sizes every time",
                                   bytes, times.size(), files.size()));
    series.bytes.push_back(bytes);
    series.seconds.push_back(summarize_repeats(times));
  }
  return series;
}

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::Fitted: return "fitted";
    case Verdict::Within: return "within";
    case Verdict::Beyond: return "BEYOND";
    case Verdict::Noisy: return "noisy";
    case Verdict::Shown: return "shown";
  }
  return "unknown";
}

int agreeing_repeats(const Repeated& measured, double tolerance) {
  int agreeing = 0;
  for (double v : measured.values)
    if (std::fabs(v / measured.median - 1.0) <= tolerance) ++agreeing;
  return agreeing;
}

bool reproducible(const Repeated& measured, double tolerance) {
  // Two thirds, rounded up: 2 of 3, 4 of 5, 4 of 6.
  const int needed = static_cast<int>((2 * measured.values.size() + 2) / 3);
  return agreeing_repeats(measured, tolerance) >= needed;
}

Verdict judge(double predicted_s, const Repeated& measured, double tolerance) {
  require_tolerance(tolerance);
  if (!reproducible(measured, tolerance)) return Verdict::Noisy;
  return std::fabs(predicted_s / measured.median - 1.0) <= tolerance ? Verdict::Within : Verdict::Beyond;
}

AllreduceValidation validate_allreduce(const BenchSeries& series, double tolerance) {
  require_tolerance(tolerance);
  if (series.bytes.size() < 4)
    throw InputError(fmt::format("validation needs at least 4 sizes (fit on half, predict the rest); the bench has {}",
                                 series.bytes.size()));
  AllreduceValidation out;
  out.series = series;
  std::vector<BenchPoint> fit_points;
  for (size_t i = 0; i < series.bytes.size(); i += 2)
    fit_points.push_back({series.bytes[i], series.seconds[i].median, series.algorithm});
  // The backend's own all-reduce ("native") is fitted as a ring too: at one world size every
  // non-pipelined schedule is a line a + b n, so the predictions do not depend on which one is
  // named; only the reading of alpha and beta does (calibration.h).
  const Algorithm model = series.algorithm == "native" ? Algorithm::Ring : parse_algorithm(series.algorithm);
  out.calibration = calibrate(fit_points, model, series.world_size);
  out.calibration.source_algorithm = series.algorithm;
  for (size_t i = 0; i < series.bytes.size(); i += 2)
    if (!reproducible(series.seconds[i], tolerance)) out.reproducible_fit = false;
  for (size_t i = 0; i < series.bytes.size(); ++i) {
    const double predicted = predict_allreduce(model, series.world_size, series.bytes[i], out.calibration.link);
    ComparisonRow row = compare("all-reduce", series.bytes[i], predicted, series.seconds[i], tolerance);
    if (i % 2 == 0) row.verdict = Verdict::Fitted;
    else if (!out.reproducible_fit) row.verdict = Verdict::Noisy;
    out.rows.push_back(std::move(row));
  }
  return out;
}

namespace {

void require_same_job(const std::vector<RunMeasurement>& runs) {
  const RunReport& first = runs.front().report;
  for (const RunMeasurement& run : runs) {
    const RunReport& r = run.report;
    if (!r.ok) throw InputError(fmt::format("{}: the run failed (\"ok\": false); it measured nothing to compare", r.origin));
    if (r.backend != first.backend || r.world_size != first.world_size || r.algorithm != first.algorithm ||
        r.hidden != first.hidden || r.bucket_cap_kb != first.bucket_cap_kb ||
        r.first_bucket_kb != first.first_bucket_kb)
      throw InputError(fmt::format("{} ran {} ranks on {} ({} all-reduce) but {} ran {} ranks on {} ({}); compare "
                                   "runs of one job at a time", r.origin, r.world_size, r.backend, r.algorithm,
                                   first.origin, first.world_size, first.backend, first.algorithm));
  }
}

BucketPolicy policy_of(const RunReport& report) {
  BucketPolicy policy;
  if (report.first_bucket_kb > 0) policy.first_bucket_bytes = report.first_bucket_kb * 1024;
  if (report.bucket_cap_kb > 0) policy.cap_bytes = report.bucket_cap_kb * 1024;
  return policy;
}

// The median of one field over every step of every run.
template <typename Field>
double pooled_median(const std::vector<RunMeasurement>& runs, Field field) {
  std::vector<double> v;
  for (const RunMeasurement& run : runs)
    for (const StepSample& s : run.steps) v.push_back(field(s));
  return median_of(v);
}

// Each run's own median of one field: the repeats whose agreement says how noisy it is.
template <typename Field>
Repeated per_run_medians(const std::vector<RunMeasurement>& runs, Field field) {
  std::vector<double> medians;
  for (const RunMeasurement& run : runs) {
    std::vector<double> v;
    for (const StepSample& s : run.steps) v.push_back(field(s));
    medians.push_back(median_of(v));
  }
  return summarize_repeats(medians);
}

}  // namespace

DdpValidation validate_ddp_step(const std::vector<RunMeasurement>& runs, const AllreduceValidation& calibrated,
                                double tolerance) {
  require_tolerance(tolerance);
  if (runs.empty()) throw InputError("no run to compare with");
  require_same_job(runs);
  const RunReport& job = runs.front().report;
  if (job.world_size < 2)
    throw InputError(fmt::format("{}: a run of {} rank communicates nothing; compare runs of 2 or more ranks", job.origin, job.world_size));
  const BenchSeries& bench = calibrated.series;
  if (job.backend != bench.backend || job.world_size != bench.world_size || job.algorithm != bench.algorithm)
    throw InputError(fmt::format("{} ran {} ranks on {} with the '{}' all-reduce, but the link was fitted to {} ranks on "
                                 "{} with '{}'", job.origin, job.world_size, job.backend, job.algorithm,
                                 bench.world_size, bench.backend, bench.algorithm));
  const LinkParams& link = calibrated.calibration.link;
  if (job.algorithm != "ring" && job.algorithm != "native")
    throw InputError(fmt::format("{}: unknown all-reduce algorithm '{}' (expected ring or native)", job.origin, job.algorithm));

  DdpValidation out;
  out.model = model_of_report(job);
  const double measured_bytes = pooled_median(runs, [](const StepSample& s) { return static_cast<double>(s.comm_bytes); });
  if (measured_bytes != static_cast<double>(out.model.total_bytes()))
    throw InputError(fmt::format("{}: the model in the report has {} B of gradients, but the trace's steps all-reduced "
                                 "{} B: report and trace are not of the same run", job.origin, out.model.total_bytes(),
                                 measured_bytes));
  out.compute.forward_s = pooled_median(runs, [](const StepSample& s) { return s.before_backward_s; });
  out.compute.backward_s = pooled_median(runs, [](const StepSample& s) { return s.backward_compute_s; });
  out.compute.optimizer_s = pooled_median(runs, [](const StepSample& s) { return s.after_s; });
  out.model.compute = out.compute;
  // The run's all-reduce is ringlab's ring or the backend's own; the link was calibrated on the
  // same one, and both are lines in n at this world size (see validate_allreduce).
  out.prediction = predict_ddp_step(out.model, job.world_size, link, policy_of(job), out.compute, Algorithm::Ring);
  for (const RunMeasurement& run : runs) out.samples += static_cast<int64_t>(run.steps.size());

  out.step = compare("DDP step", static_cast<double>(out.model.total_bytes()), out.prediction.step_s,
                     per_run_medians(runs, [](const StepSample& s) { return s.step_s; }), tolerance);
  if (!calibrated.reproducible_fit) out.step.verdict = Verdict::Noisy;
  out.allreduce = compare("DDP all-reduce", static_cast<double>(out.model.total_bytes()), out.prediction.comm_s,
                          per_run_medians(runs, [](const StepSample& s) { return s.comm_s; }), tolerance);
  out.allreduce.verdict = Verdict::Shown;
  out.exposed_wait = per_run_medians(runs, [](const StepSample& s) { return std::max(s.exposed_wait_s, 1e-12); });
  return out;
}

}  // namespace ringlab::sim
