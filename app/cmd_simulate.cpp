// `ringlab simulate`: the cost-model simulator. What would this all-reduce, this DDP step, this
// recorded run take with p ranks on another link?
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/commands.h"
#include "engine/core/error.h"
#include "engine/sim/bench_file.h"
#include "engine/sim/calibration.h"
#include "engine/sim/cost_models.h"
#include "engine/sim/ddp_step_model.h"
#include "engine/sim/link_presets.h"
#include "engine/sim/model_presets.h"
#include "engine/sim/run_measurement.h"
#include "engine/export/trace_file.h"
#include "engine/sim/trace_replay.h"
#include "engine/sim/units.h"
#include "engine/sim/validation.h"

namespace ringlab::app {

namespace {

using nlohmann::json;
using namespace ringlab::sim;

constexpr int64_t kMaxRanks = int64_t{1} << 20;

// Numbers are read here rather than by CLI11 so that every bad value is an InputError (exit 2)
// that names the flag.
double parse_number(const std::string& text, const char* flag) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value))
    throw InputError(fmt::format("{} must be a number; got '{}'", flag, text));
  return value;
}

int64_t parse_whole(const std::string& text, const char* flag) {
  const double value = parse_number(text, flag);
  if (value != std::floor(value) || std::fabs(value) > 9e15)
    throw InputError(fmt::format("{} must be a whole number; got '{}'", flag, text));
  return static_cast<int64_t>(value);
}

int count_in_range(const std::string& text, const char* flag, int64_t least) {
  const int64_t value = parse_whole(text, flag);
  if (value < least || value > (int64_t{1} << 30))
    throw InputError(fmt::format("{} must be between {} and {}; got {}", flag, least, int64_t{1} << 30, text));
  return static_cast<int>(value);
}

// The flags as typed; read into numbers by SimulateFlags::read.
struct RawFlags {
  std::string ranks = "8", alpha_us, bandwidth_gbps, gamma_gbps, ps_shards = "1", tree_segments = "1",
              dbt_segments = "0", bucket_cap_mb = "25", compute_ms, tolerance = "0.25";
};

struct SimulateFlags {
  RawFlags raw;
  int64_t ranks = 8;
  std::string bytes;
  std::string model;
  std::string algorithm = "all";
  std::string preset = "this-machine";
  double alpha_us = 0, bandwidth_gbps = 0, gamma_gbps = 0;
  int ps_shards = 1, tree_segments = 1, dbt_segments = 0;
  double bucket_cap_mb = 25, compute_ms = 0;
  std::string calibrate_file, replay_file;
  std::vector<std::string> validate_files, report_files, trace_files;
  double tolerance = 0.25;
  bool json = false, list = false, markdown = false;
  // Which optional flags were given.
  CLI::Option *ranks_opt = nullptr, *alpha_opt = nullptr, *bandwidth_opt = nullptr, *gamma_opt = nullptr,
              *compute_opt = nullptr;

  void read() {
    ranks = parse_whole(raw.ranks, "--ranks");
    if (alpha_opt->count()) alpha_us = parse_number(raw.alpha_us, "--alpha-us");
    if (bandwidth_opt->count()) bandwidth_gbps = parse_number(raw.bandwidth_gbps, "--bandwidth-gbps");
    if (gamma_opt->count()) gamma_gbps = parse_number(raw.gamma_gbps, "--gamma-gbps");
    if (compute_opt->count()) compute_ms = parse_number(raw.compute_ms, "--compute-ms");
    ps_shards = count_in_range(raw.ps_shards, "--ps-shards", 1);
    tree_segments = count_in_range(raw.tree_segments, "--tree-segments", 1);
    dbt_segments = count_in_range(raw.dbt_segments, "--dbt-segments", 0);
    bucket_cap_mb = parse_number(raw.bucket_cap_mb, "--bucket-cap-mb");
    tolerance = parse_number(raw.tolerance, "--tolerance");
    if (!(tolerance > 0) || tolerance > 10)
      throw InputError(fmt::format("--tolerance must be a fraction between 0 and 10 (0.25: within 25%); got {}", raw.tolerance));
  }
};

// The link every answer uses: a preset, replaced by a calibration if asked, then by explicit flags.
struct LinkChoice {
  LinkParams link;
  std::string name;
  std::string source;
  std::optional<Calibration> calibration;
  std::optional<BenchFile> bench;
};

double gbps(double s_per_byte) { return s_per_byte > 0 ? 1e-9 / s_per_byte : 0.0; }

LinkChoice choose_link(const SimulateFlags& f) {
  LinkChoice c;
  const LinkPreset& preset = find_link_preset(f.preset);
  c.link = preset.link;
  c.name = preset.name;
  c.source = preset.source;
  if (!f.calibrate_file.empty()) {
    c.bench = load_bench_file(f.calibrate_file);
    const double known_gamma = f.gamma_opt->count() ? 1.0 / (f.gamma_gbps * 1e9) : -1.0;
    if (f.gamma_opt->count() && !(f.gamma_gbps > 0))
      throw InputError(fmt::format("--gamma-gbps must be > 0; got {}", f.gamma_gbps));
    c.calibration = calibrate_bench_file(*c.bench, known_gamma);
    c.link = c.calibration->link;
    c.name = fmt::format("calibrated from {}", f.calibrate_file);
    c.source = fmt::format("least-squares fit of {} points ({} backend, {} ranks)", c.calibration->fit.points,
                           c.bench->backend.empty() ? "unknown" : c.bench->backend, c.bench->world_size);
  }
  if (f.alpha_opt->count()) {
    if (!(f.alpha_us >= 0) || !std::isfinite(f.alpha_us))
      throw InputError(fmt::format("--alpha-us must be >= 0; got {}", f.alpha_us));
    c.link.alpha_s = f.alpha_us * 1e-6;
  }
  if (f.bandwidth_opt->count()) {
    if (!(f.bandwidth_gbps > 0) || !std::isfinite(f.bandwidth_gbps))
      throw InputError(fmt::format("--bandwidth-gbps must be > 0 GB/s; got {}", f.bandwidth_gbps));
    c.link.beta_s_per_byte = 1.0 / (f.bandwidth_gbps * 1e9);
  }
  if (f.gamma_opt->count()) {
    if (!(f.gamma_gbps > 0) || !std::isfinite(f.gamma_gbps))
      throw InputError(fmt::format("--gamma-gbps must be > 0 GB/s; got {}", f.gamma_gbps));
    c.link.gamma_s_per_byte = 1.0 / (f.gamma_gbps * 1e9);
  }
  if (f.alpha_opt->count() || f.bandwidth_opt->count() || f.gamma_opt->count()) c.name += " (with overrides)";
  validate_link(c.link);
  return c;
}

json link_json(const LinkChoice& c) {
  json j = {{"name", c.name},
            {"alpha_us", c.link.alpha_s * 1e6},
            {"bandwidth_gbps", gbps(c.link.beta_s_per_byte)},
            {"gamma_gbps", gbps(c.link.gamma_s_per_byte)},
            {"source", c.source}};
  if (c.calibration) {
    j["fit"] = {{"intercept_us", c.calibration->fit.intercept_s * 1e6},
                {"slope_us_per_mib", c.calibration->fit.slope_s_per_byte * 1e6 * 1024 * 1024},
                {"points", c.calibration->fit.points},
                {"rms_relative_error", c.calibration->fit.rms_relative_error},
                {"gamma_separated", c.calibration->gamma_separated}};
  }
  return j;
}

void print_link(const LinkChoice& c) {
  fmt::print("link: {}\n  alpha {} | bandwidth {:.3g} GB/s | reduction {}\n", c.name, format_seconds(c.link.alpha_s),
             gbps(c.link.beta_s_per_byte),
             c.link.gamma_s_per_byte > 0 ? fmt::format("{:.3g} GB/s", gbps(c.link.gamma_s_per_byte)) : "free");
  fmt::print("  source: {}\n", c.source);
  if (c.calibration) {
    const Calibration& k = *c.calibration;
    fmt::print("  fit: t = {} + n x {:.4g} us/MiB over {} points, rms error {:.1f}%{}\n", format_seconds(k.fit.intercept_s),
               k.fit.slope_s_per_byte * 1e6 * 1024 * 1024, k.fit.points, 100 * k.fit.rms_relative_error,
               k.gamma_separated ? "" : "; bandwidth is effective (reduction folded in: beta and gamma cannot be told apart)");
  }
}

std::vector<Algorithm> chosen_algorithms(const std::string& name) {
  if (name == "all") return all_algorithms();
  return {parse_algorithm(name)};
}

AlgorithmOptions algorithm_options(const SimulateFlags& f) {
  if (f.ps_shards < 1) throw InputError(fmt::format("--ps-shards must be >= 1; got {}", f.ps_shards));
  if (f.tree_segments < 1) throw InputError(fmt::format("--tree-segments must be >= 1; got {}", f.tree_segments));
  if (f.dbt_segments < 0) throw InputError(fmt::format("--dbt-segments must be >= 0 (0: best); got {}", f.dbt_segments));
  return {f.tree_segments, f.dbt_segments, f.ps_shards};
}

// --bytes: one all-reduce, every chosen algorithm.
void simulate_allreduce(const SimulateFlags& f, const LinkChoice& c, int64_t ranks) {
  const int64_t bytes = parse_byte_size(f.bytes.empty() ? "64M" : f.bytes, "--bytes");
  const AlgorithmOptions options = algorithm_options(f);
  json rows = json::array();
  if (!f.json) {
    print_link(c);
    fmt::print("all-reduce of {} ({} bytes) over {} ranks\n\n", format_bytes(static_cast<double>(bytes)), bytes, ranks);
    fmt::print("{:<10} {:>12} {:>14} {:>14}\n", "algorithm", "time", "algbw (GB/s)", "busbw (GB/s)");
  }
  for (Algorithm a : chosen_algorithms(f.algorithm)) {
    const double t = predict_allreduce(a, ranks, static_cast<double>(bytes), c.link, options);
    const double alg = algbw(static_cast<double>(bytes), t), bus = busbw(static_cast<double>(bytes), t, ranks);
    rows.push_back({{"algorithm", to_string(a)}, {"time_us", t * 1e6}, {"algbw_gbps", alg * 1e-9}, {"busbw_gbps", bus * 1e-9}});
    if (!f.json) fmt::print("{:<10} {:>12} {:>14.3f} {:>14.3f}\n", to_string(a), format_seconds(t), alg * 1e-9, bus * 1e-9);
  }
  if (f.json)
    fmt::print("{}\n", json{{"mode", "allreduce"}, {"ranks", ranks}, {"bytes", bytes}, {"link", link_json(c)}, {"results", rows}}.dump(2));
}

// --model: one DDP training step.
void simulate_ddp(const SimulateFlags& f, const LinkChoice& c, int64_t ranks) {
  const ModelShape model = model_preset(f.model);
  ComputeTimes compute = model.compute;
  std::string compute_source = model.compute_source;
  if (f.compute_opt->count()) {
    if (!(f.compute_ms >= 0) || !std::isfinite(f.compute_ms))
      throw InputError(fmt::format("--compute-ms must be >= 0; got {}", f.compute_ms));
    compute = compute_from_total(f.compute_ms * 1e-3);
    compute_source = "--compute-ms";
  }
  const BucketPolicy policy = BucketPolicy::with_cap_mb(f.bucket_cap_mb);
  const AlgorithmOptions options = algorithm_options(f);
  json rows = json::array();
  if (!f.json) {
    print_link(c);
    fmt::print("DDP step of '{}' ({}): {} parameters, {} of gradients, {} ranks\n", model.name, model.description,
               model.total_elements(), format_bytes(static_cast<double>(model.total_bytes())), ranks);
    fmt::print("compute per step: {} (forward {}, backward {}); {}\n", format_seconds(compute.total_s()),
               format_seconds(compute.forward_s), format_seconds(compute.backward_s), compute_source);
    fmt::print("buckets: first {}, then {} (bucket_cap_mb {})\n\n",
               format_bytes(static_cast<double>(policy.first_bucket_bytes)), format_bytes(static_cast<double>(policy.cap_bytes)),
               f.bucket_cap_mb);
    fmt::print("{:<10} {:>8} {:>12} {:>12} {:>12} {:>12} {:>11}\n", "algorithm", "buckets", "step", "compute",
               "all-reduce", "exposed", "efficiency");
  }
  for (Algorithm a : chosen_algorithms(f.algorithm)) {
    const DdpStepPrediction p = predict_ddp_step(model, ranks, c.link, policy, compute, a, options);
    json buckets = json::array();
    for (const BucketTiming& b : p.buckets)
      buckets.push_back({{"bytes", b.bytes}, {"tensors", b.tensors}, {"ready_us", b.ready_s * 1e6},
                         {"start_us", b.start_s * 1e6}, {"end_us", b.end_s * 1e6}});
    rows.push_back({{"algorithm", to_string(a)}, {"step_us", p.step_s * 1e6}, {"compute_us", p.compute_s * 1e6},
                    {"comm_us", p.comm_s * 1e6}, {"exposed_comm_us", p.exposed_comm_s * 1e6},
                    {"efficiency", p.efficiency}, {"buckets", buckets}});
    if (!f.json)
      fmt::print("{:<10} {:>8} {:>12} {:>12} {:>12} {:>12} {:>10.1f}%\n", to_string(a), p.buckets.size(),
                 format_seconds(p.step_s), format_seconds(p.compute_s), format_seconds(p.comm_s),
                 format_seconds(p.exposed_comm_s), 100 * p.efficiency);
  }
  if (f.json)
    fmt::print("{}\n", json{{"mode", "ddp"}, {"ranks", ranks}, {"model", model.name}, {"parameters", model.total_elements()},
                            {"compute_source", compute_source}, {"link", link_json(c)}, {"results", rows}}.dump(2));
}

// --calibrate alone: the fitted model against the very points it was fitted to.
void show_calibration(const SimulateFlags& f, const LinkChoice& c) {
  const BenchFile& bench = *c.bench;
  const Calibration& k = *c.calibration;
  json rows = json::array();
  if (!f.json) {
    print_link(c);
    fmt::print("\n{:>12} {:>14} {:>14} {:>9}\n", "size", "measured", "predicted", "error");
  }
  for (const BenchPoint& p : bench.points) {
    if (p.algorithm != k.source_algorithm) continue;
    const double predicted = predict_allreduce(k.algorithm, bench.world_size, p.bytes, k.link);
    const double error = (predicted - p.seconds) / p.seconds;
    rows.push_back({{"bytes", p.bytes}, {"algorithm", p.algorithm}, {"measured_us", p.seconds * 1e6},
                    {"predicted_us", predicted * 1e6}, {"relative_error", error}});
    if (!f.json)
      fmt::print("{:>12} {:>14} {:>14} {:>8.1f}%\n", format_bytes(p.bytes), format_seconds(p.seconds),
                 format_seconds(predicted), 100 * error);
  }
  if (f.json) fmt::print("{}\n", json{{"mode", "calibration"}, {"link", link_json(c)}, {"points", rows}}.dump(2));
}

// --replay: a recorded run re-timed under the link.
void simulate_replay(const SimulateFlags& f, const LinkChoice& c) {
  const std::vector<Event> events = load_chrome_trace(f.replay_file);
  ReplayOptions options;
  if (f.ranks_opt->count()) options.world_size = f.ranks;
  options.model = f.algorithm == "all" ? Algorithm::Ring : parse_algorithm(f.algorithm);
  options.model_options = algorithm_options(f);
  const ReplayResult r = replay_trace(events, c.link, options);
  json ranks = json::array();
  if (!f.json) {
    print_link(c);
    fmt::print("replay of {}: {} ranks, {} chunk transfers re-timed, {} collectives without chunk detail "
               "re-timed with the {} model\n\n", f.replay_file, r.world_size, r.transfers, r.modelled_collectives,
               to_string(options.model));
    fmt::print("{:<6} {:>6} {:>14} {:>14} {:>14} {:>14}\n", "rank", "steps", "mean step", "mean step",
               "all collectives", "all collectives");
    fmt::print("{:<6} {:>6} {:>14} {:>14} {:>14} {:>14}\n", "", "", "(trace)", "(replay)", "(trace)", "(replay)");
  }
  for (const RankReplay& rank : r.ranks) {
    ranks.push_back({{"rank", rank.rank}, {"steps", rank.steps.size()},
                     {"measured_step_us", rank.mean_measured_step_s() * 1e6},
                     {"replayed_step_us", rank.mean_replayed_step_s() * 1e6},
                     {"measured_comm_us", rank.measured_comm_s * 1e6}, {"replayed_comm_us", rank.replayed_comm_s * 1e6},
                     {"measured_span_us", rank.measured_span_s * 1e6}, {"replayed_span_us", rank.replayed_span_s * 1e6}});
    if (!f.json)
      fmt::print("{:<6} {:>6} {:>14} {:>14} {:>14} {:>14}\n", rank.rank, rank.steps.size(),
                 format_seconds(rank.mean_measured_step_s()), format_seconds(rank.mean_replayed_step_s()),
                 format_seconds(rank.measured_comm_s), format_seconds(rank.replayed_comm_s));
  }
  if (!f.json)
    fmt::print("\nwhole run: {} recorded, {} replayed ({:.2f}x)\n", format_seconds(r.measured_span_s),
               format_seconds(r.replayed_span_s), r.replayed_span_s > 0 ? r.measured_span_s / r.replayed_span_s : 0.0);
  else
    fmt::print("{}\n", json{{"mode", "replay"}, {"trace", f.replay_file}, {"link", link_json(c)}, {"world_size", r.world_size},
                            {"transfers", r.transfers}, {"modelled_collectives", r.modelled_collectives},
                            {"measured_span_us", r.measured_span_s * 1e6}, {"replayed_span_us", r.replayed_span_s * 1e6},
                            {"ranks", ranks}}.dump(2));
}

// --validate: the models against this machine's measurements (engine/sim/validation.h says
// which points are fitted and which predicted). Exit 1 when a judged row is beyond --tolerance.
struct ValidationReport {
  std::string backend;
  int64_t world_size = 0;
  std::vector<AllreduceValidation> allreduce;  // one per algorithm the bench files hold
  std::optional<DdpValidation> ddp;
  std::string ddp_algorithm;
  size_t runs = 0;
};

std::vector<std::string> bench_algorithms(const BenchFile& file, const std::string& wanted) {
  if (wanted != "all") {
    if (wanted != "ring" && wanted != "native")
      throw InputError(fmt::format("--algorithm with --validate must be ring, native or all; got '{}'", wanted));
    return {wanted};
  }
  std::vector<std::string> present;
  for (const char* name : {"ring", "native"})
    for (const BenchPoint& p : file.points)
      if (p.algorithm == name) {
        present.push_back(name);
        break;
      }
  return present;
}

std::vector<RunMeasurement> load_runs(const SimulateFlags& f) {
  if (f.report_files.size() != f.trace_files.size())
    throw InputError(fmt::format("give one --trace per --compare-report (the run's Chrome trace); got {} reports and {} traces",
                                 f.report_files.size(), f.trace_files.size()));
  std::vector<RunMeasurement> runs;
  for (size_t i = 0; i < f.report_files.size(); ++i)
    runs.push_back({load_run_report(f.report_files[i]), step_samples(load_chrome_trace(f.trace_files[i]), f.trace_files[i])});
  return runs;
}

ValidationReport build_validation(const SimulateFlags& f) {
  std::vector<BenchFile> files;
  for (const std::string& path : f.validate_files) files.push_back(load_bench_file(path));
  ValidationReport v;
  v.backend = files[0].backend;
  v.world_size = files[0].world_size;
  for (const std::string& algorithm : bench_algorithms(files[0], f.algorithm))
    v.allreduce.push_back(validate_allreduce(merge_bench_files(files, f.validate_files, algorithm), f.tolerance));
  const std::vector<RunMeasurement> runs = load_runs(f);
  v.runs = runs.size();
  if (runs.empty()) return v;
  const RunReport& job = runs.front().report;
  for (const AllreduceValidation& a : v.allreduce)
    if (a.series.algorithm == job.algorithm) {
      v.ddp = validate_ddp_step(runs, a, f.tolerance);
      v.ddp_algorithm = job.algorithm;
    }
  if (!v.ddp)
    throw InputError(fmt::format("{} used the '{}' all-reduce, which the bench files (as filtered by --algorithm) do not "
                                 "hold", job.origin, job.algorithm));
  return v;
}

std::vector<std::pair<std::string, const ComparisonRow*>> validation_rows(const ValidationReport& v) {
  std::vector<std::pair<std::string, const ComparisonRow*>> rows;
  for (const AllreduceValidation& a : v.allreduce)
    for (const ComparisonRow& r : a.rows) rows.push_back({a.series.algorithm, &r});
  if (v.ddp) {
    rows.push_back({v.ddp_algorithm, &v.ddp->allreduce});
    rows.push_back({v.ddp_algorithm, &v.ddp->step});
  }
  return rows;
}

json repeated_json(const Repeated& r, double tolerance) {
  json values = json::array();
  for (double x : r.values) values.push_back(x * 1e6);
  return {{"median_us", r.median * 1e6}, {"spread", r.spread}, {"repeats_us", values},
          {"agreeing_repeats", agreeing_repeats(r, tolerance)}};
}

// "4/5": how many repeats lie within the tolerance of their median.
std::string agreement(const Repeated& r, double tolerance) {
  return fmt::format("{}/{}", agreeing_repeats(r, tolerance), r.values.size());
}

json validation_json(const ValidationReport& v, double tolerance) {
  json rows = json::array(), links = json::array();
  for (const auto& [algorithm, r] : validation_rows(v))
    rows.push_back({{"algorithm", algorithm}, {"quantity", r->quantity}, {"bytes", r->bytes},
                    {"predicted_us", r->predicted_s * 1e6}, {"measured", repeated_json(r->measured, tolerance)},
                    {"ratio", r->ratio}, {"verdict", to_string(r->verdict)}});
  for (const AllreduceValidation& a : v.allreduce)
    links.push_back({{"algorithm", a.series.algorithm}, {"alpha_us", a.calibration.link.alpha_s * 1e6},
                     {"bandwidth_gbps", gbps(a.calibration.link.beta_s_per_byte)},
                     {"fit_points", a.calibration.fit.points}, {"rms_relative_error", a.calibration.fit.rms_relative_error}});
  json j = {{"mode", "validate"}, {"backend", v.backend}, {"world_size", v.world_size}, {"tolerance", tolerance},
            {"links", links}, {"rows", rows}, {"runs", v.runs}};
  if (v.ddp)
    j["ddp_compute_us"] = {{"before_backward", v.ddp->compute.forward_s * 1e6}, {"backward", v.ddp->compute.backward_s * 1e6},
                           {"after_backward", v.ddp->compute.optimizer_s * 1e6},
                           {"exposed_wait", v.ddp->exposed_wait.median * 1e6}, {"steps", v.ddp->samples}};
  return j;
}

void print_validation_text(const ValidationReport& v, double tolerance) {
  fmt::print("validation: {} ranks on {}; tolerance {:.0f}%\n", v.world_size, v.backend, 100 * tolerance);
  for (const AllreduceValidation& a : v.allreduce) {
    const Calibration& k = a.calibration;
    fmt::print("  {} link, fitted to the 1st, 3rd, ... of {} sizes ({} points): alpha {}, bandwidth {:.3g} GB/s "
               "(effective: reduction folded in), rms error of the fit {:.1f}%\n",
               a.series.algorithm, a.series.bytes.size(), k.fit.points, format_seconds(k.link.alpha_s),
               gbps(k.link.beta_s_per_byte), 100 * k.fit.rms_relative_error);
    if (!a.reproducible_fit)
      fmt::print("    a fitted size's repeats disagree: this link is not a measurement, and nothing predicted with it is "
                 "judged\n");
  }
  fmt::print("\n{:<8} {:<15} {:>10} {:>11} {:>11} {:>7} {:>7}  {}\n", "algo", "quantity", "size", "predicted", "measured",
             "ratio", "agree", "verdict");
  for (const auto& [algorithm, r] : validation_rows(v))
    fmt::print("{:<8} {:<15} {:>10} {:>11} {:>11} {:>7.2f} {:>7}  {}\n", algorithm, r->quantity, format_bytes(r->bytes),
               format_seconds(r->predicted_s), format_seconds(r->measured.median), r->ratio,
               agreement(r->measured, tolerance), to_string(r->verdict));
  if (v.ddp) {
    const DdpValidation& d = *v.ddp;
    fmt::print("\nDDP: {} runs, {} steps; measured per step (medians): before backward {}, backward {}, after backward "
               "{}, waiting for the all-reduce {}\n", v.runs, d.samples, format_seconds(d.compute.forward_s),
               format_seconds(d.compute.backward_s), format_seconds(d.compute.optimizer_s),
               format_seconds(d.exposed_wait.median));
  }
  fmt::print("measured: median of the repeats (each a median over iterations or steps); agree: repeats within {:.0f}% of "
             "that median (noisy, not judged: under two thirds agree, here or at a fitted size); ratio: predicted / "
             "measured\n", 100 * tolerance);
}

// The predictions as a Markdown table for the README: the sizes the fit did not see, and DDP.
void print_validation_markdown(const ValidationReport& v, double tolerance) {
  fmt::print("| backend | ranks | all-reduce | quantity | size | predicted | measured | ratio | agree | verdict |\n"
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const auto& [algorithm, r] : validation_rows(v))
    if (r->verdict != Verdict::Fitted)
      fmt::print("| {} | {} | {} | {} | {} | {} | {} | {:.2f} | {} | {} |\n", v.backend, v.world_size, algorithm,
                 r->quantity, format_bytes(r->bytes), format_seconds(r->predicted_s), format_seconds(r->measured.median),
                 r->ratio, agreement(r->measured, tolerance), to_string(r->verdict));
}

void validate_models(const SimulateFlags& f) {
  if (!f.calibrate_file.empty()) throw InputError("--validate fits its own link: give --validate or --calibrate, not both");
  if (f.validate_files.empty() && !f.report_files.empty())
    throw InputError("--compare-report needs --validate BENCH.json: the link is calibrated from the bench");
  const ValidationReport v = build_validation(f);
  if (f.json)
    fmt::print("{}\n", validation_json(v, f.tolerance).dump(2));
  else if (f.markdown)
    print_validation_markdown(v, f.tolerance);
  else
    print_validation_text(v, f.tolerance);
  for (const auto& [algorithm, r] : validation_rows(v))
    if (r->verdict == Verdict::Beyond) set_exit_code(1);
}

void list_presets() {
  fmt::print("link presets (--preset):\n");
  for (const LinkPreset& p : link_presets())
    fmt::print("  {:<17} alpha {:>8}, {:>7.4g} GB/s  {}\n    source: {}\n", p.name, format_seconds(p.link.alpha_s),
               gbps(p.link.beta_s_per_byte), p.description, p.source);
  fmt::print("models (--model):\n");
  for (const std::string& name : model_preset_names()) {
    const ModelShape m = model_preset(name);
    fmt::print("  {:<6} {:>11} parameters, compute {} per step  {}\n", m.name, m.total_elements(),
               format_seconds(m.compute.total_s()), m.description);
  }
}

void run_simulate(SimulateFlags& f) {
  if (f.list) return list_presets();
  f.read();
  if (!f.validate_files.empty() || !f.report_files.empty()) return validate_models(f);
  if (!f.trace_files.empty())
    throw InputError("--trace goes with --compare-report REPORT.json (each report's trace, in the same order), "
                     "which goes with --validate BENCH.json");
  if (f.ranks < 1 || f.ranks > kMaxRanks)
    throw InputError(fmt::format("--ranks must be between 1 and {}; got {}", kMaxRanks, f.ranks));
  if (!f.bytes.empty() && !f.model.empty()) throw InputError("give --bytes or --model, not both");
  if (f.algorithm != "all") parse_algorithm(f.algorithm);  // fail early on a typo
  if (!(f.bucket_cap_mb > 0) || !std::isfinite(f.bucket_cap_mb))
    throw InputError(fmt::format("--bucket-cap-mb must be > 0; got {}", f.bucket_cap_mb));
  const LinkChoice link = choose_link(f);
  if (!f.replay_file.empty()) return simulate_replay(f, link);
  // With a bench file and nothing else to answer, show how well the fit explains it; otherwise
  // predict at the bench's world size unless --ranks says otherwise.
  int64_t ranks = f.ranks;
  if (link.bench && !f.ranks_opt->count()) ranks = link.bench->world_size;
  if (link.bench && f.bytes.empty() && f.model.empty()) return show_calibration(f, link);
  if (!f.model.empty()) return simulate_ddp(f, link, ranks);
  simulate_allreduce(f, link, ranks);
}

}  // namespace

void add_simulate_command(CLI::App& root) {
  auto flags = std::make_shared<SimulateFlags>();
  auto* cmd = root.add_subcommand(
      "simulate", "cost-model simulator: all-reduce algorithms, a DDP step, or a recorded run, at up to 1,048,576 ranks");
  SimulateFlags& f = *flags;
  f.ranks_opt = cmd->add_option("--ranks", f.raw.ranks, "world size, 1..1048576 (default 8)");
  cmd->add_option("--bytes", f.bytes, "all-reduce size in bytes, K/M/G suffixes (powers of 1024; default 64M)");
  cmd->add_option("--model", f.model, "predict a DDP step instead: seed | 25M | 124M");
  cmd->add_option("--algorithm", f.algorithm, "ring | tree | rhd | dbt | ps | all (default all)");
  cmd->add_option("--preset", f.preset, "link preset (default this-machine; --list shows them)");
  f.alpha_opt = cmd->add_option("--alpha-us", f.raw.alpha_us, "link latency per message, microseconds");
  f.bandwidth_opt = cmd->add_option("--bandwidth-gbps", f.raw.bandwidth_gbps,
                                    "link bandwidth per direction in GB/s (10^9 bytes/s, as nccl-tests prints)");
  f.gamma_opt = cmd->add_option("--gamma-gbps", f.raw.gamma_gbps, "reduction throughput in GB/s (bytes added per second)");
  cmd->add_option("--ps-shards", f.raw.ps_shards, "parameter-server shards k (default 1)");
  cmd->add_option("--tree-segments", f.raw.tree_segments, "binary tree pipelining segments (default 1: none)");
  cmd->add_option("--dbt-segments", f.raw.dbt_segments, "double binary tree segments (default 0: the fastest)");
  cmd->add_option("--bucket-cap-mb", f.raw.bucket_cap_mb, "DDP bucket_cap_mb (default 25; the first bucket stays 1 MiB)");
  f.compute_opt = cmd->add_option("--compute-ms", f.raw.compute_ms, "compute per step on one rank, ms (default: the model's)");
  cmd->add_option("--calibrate", f.calibrate_file, "fit the link to a `ringlab bench allreduce --json` file and use it");
  cmd->add_option("--replay", f.replay_file, "re-time a recorded run (a --trace Chrome trace) under the link");
  cmd->add_option("--validate", f.validate_files,
                  "predicted vs measured: fit the link to every other size of these `ringlab bench allreduce --json` "
                  "files (repeat the flag for repeated sweeps of one backend and world size), predict the others");
  cmd->add_option("--compare-report", f.report_files,
                  "with --validate: also predict the DDP step of this `ringlab run --report` file (repeatable)");
  cmd->add_option("--trace", f.trace_files, "the `ringlab run --trace` file of each --compare-report, in the same order");
  cmd->add_option("--tolerance", f.raw.tolerance, "with --validate: the agreement asked for, a fraction (default 0.25)");
  cmd->add_flag("--markdown", f.markdown, "with --validate: print the comparison as a Markdown table");
  cmd->add_flag("--json", f.json, "machine-readable output");
  cmd->add_flag("--list", f.list, "list the link presets and models, with their sources");
  cmd->callback([flags] { run_simulate(*flags); });
}

}  // namespace ringlab::app
