#include "engine/sim/run_measurement.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/input_file.h"

namespace ringlab::sim {

namespace {

using nlohmann::json;

const json& field(const json& doc, const char* key, const std::string& origin) {
  if (!doc.contains(key)) throw InputError(fmt::format("{}: \"{}\" is missing (is this a `ringlab run --report` file?)", origin, key));
  return doc[key];
}

std::string string_field(const json& doc, const char* key, const std::string& origin) {
  const json& v = field(doc, key, origin);
  if (!v.is_string()) throw InputError(fmt::format("{}: \"{}\" must be a string, got {}", origin, key, v.dump()));
  return v.get<std::string>();
}

int64_t whole_field(const json& doc, const char* key, const std::string& origin, int64_t least, int64_t most) {
  const json& v = field(doc, key, origin);
  if (!v.is_number_integer() || v.get<int64_t>() < least || v.get<int64_t>() > most)
    throw InputError(fmt::format("{}: \"{}\" must be a whole number from {} to {}, got {}", origin, key, least, most, v.dump()));
  return v.get<int64_t>();
}

double number_field(const json& doc, const char* key, const std::string& origin) {
  const json& v = field(doc, key, origin);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    throw InputError(fmt::format("{}: \"{}\" must be a number >= 0, got {}", origin, key, v.dump()));
  return v.get<double>();
}

}  // namespace

RunReport parse_run_report(const std::string& text, const std::string& origin) {
  json doc = parse_json_input(text, origin);
  if (!doc.is_object()) throw InputError(fmt::format("{}: expected the JSON object `ringlab run --report` writes", origin));
  RunReport r;
  r.origin = origin;
  const json& ok = field(doc, "ok", origin);
  if (!ok.is_boolean()) throw InputError(fmt::format("{}: \"ok\" must be true or false, got {}", origin, ok.dump()));
  r.ok = ok.get<bool>();
  r.world_size = whole_field(doc, "world_size", origin, 1, 1 << 20);
  r.backend = string_field(doc, "backend", origin);
  r.algorithm = string_field(doc, "algorithm", origin);
  const json& hidden = field(doc, "hidden", origin);
  if (!hidden.is_array()) throw InputError(fmt::format("{}: \"hidden\" must be an array of widths, got {}", origin, hidden.dump()));
  for (const json& width : hidden) {
    if (!width.is_number_integer() || width.get<int64_t>() < 1 || width.get<int64_t>() > (1 << 20))
      throw InputError(fmt::format("{}: \"hidden\" must hold widths from 1 to {}, got {}", origin, 1 << 20, width.dump()));
    r.hidden.push_back(width.get<int>());
  }
  r.bucket_cap_kb = whole_field(doc, "bucket_cap_kb", origin, -1, int64_t{1} << 40);
  if (doc.contains("first_bucket_kb")) r.first_bucket_kb = whole_field(doc, "first_bucket_kb", origin, -1, int64_t{1} << 40);
  r.steps = whole_field(doc, "steps", origin, 0, int64_t{1} << 50);
  r.us_per_step = number_field(doc, "us_per_step", origin);
  return r;
}

RunReport load_run_report(const std::string& path) {
  // A report holds every rank's shard of every epoch and every step's loss: it grows with the run.
  constexpr uint64_t kMaxRunReportBytes = uint64_t{256} << 20;
  return parse_run_report(read_input_file(path, "run report", kMaxRunReportBytes), path);
}

ModelShape model_of_report(const RunReport& report) {
  // The job's input width is fixed at the seed's 6 features (JobConfig::features has no flag).
  ModelShape m = mlp_model(6, report.hidden, 1);
  m.name = "report";
  m.description = fmt::format("the MLP of {}", report.origin);
  m.compute_source = "measured in the run's trace";
  return m;
}

namespace {

// One rank's events of one step, found by time: the step's span holds them.
struct StepEvents {
  const Event* step = nullptr;
  const Event* backward = nullptr;
  double last_ready_ns = -1;
  std::vector<const Event*> collectives;
};

std::map<int, std::vector<StepEvents>> steps_by_rank(const std::vector<Event>& events) {
  std::map<int, std::vector<StepEvents>> by_rank;
  for (const Event& e : events)
    if (e.kind == EventKind::StepEnd && e.t_end_ns > e.t_begin_ns) {
      StepEvents s;
      s.step = &e;
      by_rank[e.rank].push_back(s);
    }
  for (auto& [rank, steps] : by_rank)
    std::sort(steps.begin(), steps.end(), [](const StepEvents& a, const StepEvents& b) { return a.step->t_begin_ns < b.step->t_begin_ns; });
  auto holder = [&](const Event& e) -> StepEvents* {
    auto found = by_rank.find(e.rank);
    if (found == by_rank.end()) return nullptr;
    auto& steps = found->second;
    // The last step that began at or before the event; it holds the event if it ends after it.
    auto after = std::upper_bound(steps.begin(), steps.end(), e.t_begin_ns,
                                  [](int64_t t, const StepEvents& s) { return t < s.step->t_begin_ns; });
    if (after == steps.begin()) return nullptr;
    StepEvents& s = *std::prev(after);
    return e.t_end_ns <= s.step->t_end_ns ? &s : nullptr;
  };
  for (const Event& e : events) {
    if (e.kind != EventKind::Backward && e.kind != EventKind::BucketReady && e.kind != EventKind::CollectiveEnd) continue;
    StepEvents* s = holder(e);
    if (!s) continue;
    if (e.kind == EventKind::Backward) s->backward = &e;
    if (e.kind == EventKind::BucketReady) s->last_ready_ns = std::max(s->last_ready_ns, static_cast<double>(e.t_end_ns));
    if (e.kind == EventKind::CollectiveEnd && e.bucket >= 0) s->collectives.push_back(&e);
  }
  return by_rank;
}

}  // namespace

std::vector<StepSample> step_samples(const std::vector<Event>& events, const std::string& origin) {
  std::vector<StepSample> samples;
  for (const auto& [rank, steps] : steps_by_rank(events)) {
    for (const StepEvents& s : steps) {
      if (!s.backward || s.last_ready_ns < 0) continue;
      const double begin = static_cast<double>(s.step->t_begin_ns), end = static_cast<double>(s.step->t_end_ns);
      const double bw_begin = static_cast<double>(s.backward->t_begin_ns), bw_end = static_cast<double>(s.backward->t_end_ns);
      const double ready = std::clamp(s.last_ready_ns, bw_begin, bw_end);
      StepSample x;
      x.rank = rank;
      x.step = s.step->step;
      x.step_s = (end - begin) * 1e-9;
      x.before_backward_s = (bw_begin - begin) * 1e-9;
      x.backward_compute_s = (ready - bw_begin) * 1e-9;
      x.exposed_wait_s = (bw_end - ready) * 1e-9;
      x.after_s = (end - bw_end) * 1e-9;
      for (const Event* c : s.collectives) {
        x.comm_s += static_cast<double>(c->t_end_ns - c->t_begin_ns) * 1e-9;
        x.comm_bytes += c->bytes;
      }
      x.collectives = static_cast<int>(s.collectives.size());
      samples.push_back(x);
    }
  }
  if (samples.empty())
    throw InputError(fmt::format("{}: no training step with a gradient all-reduce (a \"step\" span holding a "
                                 "\"backward\" span and a \"bucket ready\" mark); was it written by "
                                 "`ringlab run --trace` with --trace-level steps or chunks?", origin));
  return samples;
}

}  // namespace ringlab::sim
