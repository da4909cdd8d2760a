// Validation of the cost models against measurements: repeats and their medians, the
// fit-on-half / predict-the-other-half split, step times read back from a run's events, and the
// DDP step comparison, on synthetic measurements whose right answers are known.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/sim/cost_models.h"
#include "engine/sim/run_measurement.h"
#include "engine/sim/validation.h"

using namespace ringlab;
using namespace ringlab::sim;

namespace {

const LinkParams kLink{40e-6, 1.0 / 2e9, 0.0};

// A bench file of the ring over sizes 4 B .. 4 MiB (factor 4), each time the model's times
// `scale`; `odd_factor` multiplies the 2nd, 4th, ... sizes only (the ones validation predicts).
BenchFile ring_bench(int64_t p, double scale = 1.0, double odd_factor = 1.0, const std::string& backend = "gloo") {
  BenchFile f;
  f.backend = backend;
  f.world_size = p;
  f.algorithm = "both";
  int i = 0;
  for (double n = 4; n <= 4.0 * 1024 * 1024; n *= 4, ++i) {
    const double t = ring_allreduce_s(kLink, p, n) * scale * (i % 2 ? odd_factor : 1.0);
    f.points.push_back({n, t, "ring"});
    f.points.push_back({n, t / 2, "native"});
  }
  return f;
}

Event span(EventKind kind, int rank, int64_t begin_us, int64_t end_us) {
  Event e;
  e.kind = kind;
  e.rank = rank;
  e.t_begin_ns = begin_us * 1000;
  e.t_end_ns = end_us * 1000;
  return e;
}

// One DDP step as ringlab's trainer records it, starting at t0 (microseconds): 30 us before
// backward, 20 us of backward compute, one bucket all-reduced in `comm_us` (starting 5 us after
// the bucket is ready, ending 5 us before backward returns), 10 us of optimizer.
void add_step(std::vector<Event>& events, int rank, int64_t step, int64_t t0, int64_t comm_us, int64_t bytes) {
  const int64_t bw = t0 + 30, ready = bw + 20, comm_begin = ready + 5, comm_end = comm_begin + comm_us,
                bw_end = comm_end + 5, end = bw_end + 10;
  Event s = span(EventKind::StepEnd, rank, t0, end);
  s.step = step;
  events.push_back(s);
  events.push_back(span(EventKind::Forward, rank, t0 + 2, t0 + 28));
  events.push_back(span(EventKind::Backward, rank, bw, bw_end));
  Event r = span(EventKind::BucketReady, rank, ready, ready);
  r.bucket = 0;
  r.bytes = bytes;
  events.push_back(r);
  Event c = span(EventKind::CollectiveEnd, rank, comm_begin, comm_end);
  c.bucket = 0;
  c.bytes = bytes;
  events.push_back(c);
  events.push_back(span(EventKind::OptimizerStep, rank, bw_end + 1, end - 1));
}

RunReport seed_report(int64_t p, const std::string& origin = "r.json") {
  RunReport r;
  r.origin = origin;
  r.ok = true;
  r.world_size = p;
  r.backend = "gloo";
  r.algorithm = "ring";
  r.hidden = {48, 48};
  r.steps = 4;
  r.us_per_step = 100;
  return r;
}

constexpr int64_t kSeedBytes = 2737 * 4;

}  // namespace

TEST_CASE("repeats: the median and the median absolute deviation") {
  const Repeated three = summarize_repeats({3e-6, 1e-6, 2e-6});
  CHECK(three.median == doctest::Approx(2e-6));
  CHECK(three.spread == doctest::Approx(0.5));  // deviations 1, 1, 0 us: median 1 us over 2 us
  const Repeated four = summarize_repeats({1.0, 2.0, 4.0, 3.0});
  CHECK(four.median == doctest::Approx(2.5));
  CHECK(four.spread == doctest::Approx(1.0 / 2.5));  // deviations 1.5, 0.5, 1.5, 0.5
  CHECK(summarize_repeats({7.0}).spread == 0.0);
  CHECK(four.values.size() == 4);
  CHECK_THROWS_AS(summarize_repeats({}), InputError);
  CHECK_THROWS_WITH_AS(summarize_repeats({1.0, 0.0}), doctest::Contains("> 0"), InputError);
}

TEST_CASE("a prediction is judged only when the repeats agree within the tolerance") {
  const Repeated steady = summarize_repeats({100.0, 101.0, 99.0});
  CHECK(judge(124.0, steady, 0.25) == Verdict::Within);
  CHECK(judge(76.0, steady, 0.25) == Verdict::Within);
  CHECK(judge(126.0, steady, 0.25) == Verdict::Beyond);
  CHECK(judge(74.0, steady, 0.25) == Verdict::Beyond);
  // 4 ms, 8 ms, 16 ms: neither other repeat within 25% of the median.
  const Repeated scattered = summarize_repeats({4.0, 8.0, 16.0});
  CHECK(agreeing_repeats(scattered, 0.25) == 1);
  CHECK(judge(8.0, scattered, 0.25) == Verdict::Noisy);
  // Two regimes, three repeats against two: the median is a quiet one, but only 3 of 5 agree
  // with it (the median absolute deviation alone, 0, would call this steady).
  const Repeated two_regimes = summarize_repeats({0.2, 0.21, 0.2, 4.0, 4.1});
  CHECK(two_regimes.median == doctest::Approx(0.21));
  CHECK(two_regimes.spread == doctest::Approx(0.01 / 0.21));
  CHECK(agreeing_repeats(two_regimes, 0.25) == 3);
  CHECK(judge(0.21, two_regimes, 0.25) == Verdict::Noisy);
  // Four of five agree: judged, the outlier does not move the median far.
  const Repeated one_outlier = summarize_repeats({0.2, 0.21, 0.2, 0.22, 4.0});
  CHECK(judge(0.21, one_outlier, 0.25) == Verdict::Within);
  CHECK(judge(0.4, one_outlier, 0.25) == Verdict::Beyond);
  CHECK(std::string(to_string(Verdict::Beyond)) == "BEYOND");
  CHECK_THROWS_WITH_AS(judge(1.0, steady, 0.0), doctest::Contains("tolerance"), InputError);
}

TEST_CASE("bench files of one configuration merge into per-size medians") {
  const BenchSeries s = merge_bench_files({ring_bench(2, 1.0), ring_bench(2, 3.0), ring_bench(2, 1.2)},
                                          {"a.json", "b.json", "c.json"}, "ring");
  CHECK(s.backend == "gloo");
  CHECK(s.world_size == 2);
  REQUIRE(s.bytes.size() == 11);
  CHECK(s.bytes.front() == 4);
  CHECK(s.bytes.back() == 4.0 * 1024 * 1024);
  CHECK(s.seconds[5].median == doctest::Approx(1.2 * ring_allreduce_s(kLink, 2, s.bytes[5])));
  CHECK(s.seconds[5].values.size() == 3);

  CHECK_THROWS_WITH_AS(merge_bench_files({ring_bench(2), ring_bench(4)}, {"a.json", "b.json"}, "ring"),
                       doctest::Contains("b.json"), InputError);
  CHECK_THROWS_WITH_AS(merge_bench_files({ring_bench(2), ring_bench(2, 1, 1, "mpi")}, {"a.json", "b.json"}, "ring"),
                       doctest::Contains("mpi"), InputError);
  CHECK_THROWS_WITH_AS(merge_bench_files({ring_bench(2)}, {"a.json"}, "tree"), doctest::Contains("tree"), InputError);
  BenchFile short_sweep = ring_bench(2);
  short_sweep.points.resize(4);
  CHECK_THROWS_WITH_AS(merge_bench_files({ring_bench(2), short_sweep}, {"a.json", "b.json"}, "ring"),
                       doctest::Contains("1 of the 2"), InputError);
}

TEST_CASE("all-reduce validation fits every other size and predicts the rest") {
  // An exact line: every held-out size is predicted exactly.
  const AllreduceValidation exact = validate_allreduce(merge_bench_files({ring_bench(4)}, {"a.json"}, "ring"), 0.25);
  CHECK(exact.calibration.fit.points == 6);
  CHECK(exact.calibration.link.alpha_s == doctest::Approx(kLink.alpha_s).epsilon(1e-6));
  REQUIRE(exact.rows.size() == 11);
  for (size_t i = 0; i < exact.rows.size(); ++i) {
    CAPTURE(i);
    CHECK(exact.rows[i].verdict == (i % 2 ? Verdict::Within : Verdict::Fitted));
    CHECK(exact.rows[i].ratio == doctest::Approx(1.0).epsilon(1e-6));
  }
  // The held-out sizes measured 1.5x slower: the fit never saw them, so the link is unchanged
  // and every prediction is a third too low, beyond 25%.
  const AllreduceValidation off = validate_allreduce(merge_bench_files({ring_bench(4, 1.0, 1.5)}, {"a.json"}, "ring"), 0.25);
  CHECK(off.calibration.link.alpha_s == doctest::Approx(kLink.alpha_s).epsilon(1e-6));
  CHECK(off.calibration.link.beta_s_per_byte == doctest::Approx(kLink.beta_s_per_byte).epsilon(1e-6));
  for (size_t i = 1; i < off.rows.size(); i += 2) {
    CHECK(off.rows[i].ratio == doctest::Approx(1.0 / 1.5).epsilon(1e-6));
    CHECK(off.rows[i].verdict == Verdict::Beyond);
  }
  // ... but within a 50% tolerance.
  const AllreduceValidation loose = validate_allreduce(merge_bench_files({ring_bench(4, 1.0, 1.5)}, {"a.json"}, "ring"), 0.5);
  CHECK(loose.rows[1].verdict == Verdict::Within);
  // The backend's own all-reduce is fitted as a line too.
  const AllreduceValidation native = validate_allreduce(merge_bench_files({ring_bench(2)}, {"a.json"}, "native"), 0.25);
  CHECK(native.calibration.link.alpha_s == doctest::Approx(kLink.alpha_s / 2).epsilon(1e-6));

  BenchSeries tiny = merge_bench_files({ring_bench(2)}, {"a.json"}, "ring");
  tiny.bytes.resize(3);
  tiny.seconds.resize(3);
  CHECK_THROWS_WITH_AS(validate_allreduce(tiny, 0.25), doctest::Contains("at least 4 sizes"), InputError);
}

TEST_CASE("a fit through sizes whose repeats disagree judges nothing") {
  // Five sweeps; in two of them the 64 B point (a fitted one) is 20x slower, in a third 3x: no
  // two repeats agree there, so the line's latency is not a measurement.
  std::vector<BenchFile> sweeps;
  for (double slow_64 : {1.0, 1.0, 3.0, 20.0, 20.0}) {
    BenchFile f = ring_bench(2);
    for (BenchPoint& p : f.points)
      if (p.bytes == 64) p.seconds *= slow_64;
    sweeps.push_back(f);
  }
  const AllreduceValidation v =
      validate_allreduce(merge_bench_files(sweeps, {"1", "2", "3", "4", "5"}, "ring"), 0.25);
  CHECK(!v.reproducible_fit);
  for (size_t i = 0; i < v.rows.size(); ++i) CHECK(v.rows[i].verdict == (i % 2 ? Verdict::Noisy : Verdict::Fitted));
  std::vector<Event> events;
  add_step(events, 0, 0, 1000, 100, kSeedBytes);
  const DdpValidation d = validate_ddp_step({{seed_report(2), step_samples(events, "t.json")}}, v, 0.25);
  CHECK(d.step.verdict == Verdict::Noisy);
  // Three of five agreeing is not enough; four of five is.
  sweeps[2] = ring_bench(2);
  CHECK(validate_allreduce(merge_bench_files(sweeps, {"1", "2", "3", "4", "5"}, "ring"), 0.25).reproducible_fit == false);
  sweeps[3] = ring_bench(2);
  CHECK(validate_allreduce(merge_bench_files(sweeps, {"1", "2", "3", "4", "5"}, "ring"), 0.25).reproducible_fit);
}

TEST_CASE("step samples: compute, exposed wait and communication of every step, read from the events") {
  std::vector<Event> events;
  add_step(events, 0, 0, 1000, 200, kSeedBytes);
  add_step(events, 0, 1, 2000, 300, kSeedBytes);
  add_step(events, 1, 0, 1001, 210, kSeedBytes);
  // A no_sync step (gradient accumulation): backward without a bucket; left out.
  Event quiet = span(EventKind::StepEnd, 1, 3000, 3100);
  quiet.step = 1;
  events.push_back(quiet);
  events.push_back(span(EventKind::Backward, 1, 3010, 3090));
  const std::vector<StepSample> s = step_samples(events, "t.json");
  REQUIRE(s.size() == 3);
  CHECK(s[0].rank == 0);
  CHECK(s[0].step == 0);
  CHECK(s[0].step_s == doctest::Approx(270e-6));  // 30 + 20 + 5 + 200 + 5 + 10
  CHECK(s[0].before_backward_s == doctest::Approx(30e-6));
  CHECK(s[0].backward_compute_s == doctest::Approx(20e-6));
  CHECK(s[0].exposed_wait_s == doctest::Approx(210e-6));
  CHECK(s[0].after_s == doctest::Approx(10e-6));
  CHECK(s[0].comm_s == doctest::Approx(200e-6));
  CHECK(s[0].comm_bytes == kSeedBytes);
  CHECK(s[0].collectives == 1);
  CHECK(s[1].comm_s == doctest::Approx(300e-6));
  CHECK(s[2].rank == 1);
  CHECK(s[2].comm_s == doctest::Approx(210e-6));

  std::vector<Event> no_ddp = {span(EventKind::StepEnd, 0, 0, 10)};
  CHECK_THROWS_WITH_AS(step_samples(no_ddp, "t.json"), doctest::Contains("t.json"), InputError);
}

TEST_CASE("a DDP step predicted from the run's own compute and the calibrated link") {
  const double allreduce_us = ring_allreduce_s(kLink, 2, kSeedBytes) * 1e6;
  std::vector<Event> events;
  for (int rank = 0; rank < 2; ++rank)
    for (int64_t step = 0; step < 5; ++step)
      add_step(events, rank, step, 1000 * (step + 1), static_cast<int64_t>(allreduce_us + 0.5), kSeedBytes);
  const std::vector<RunMeasurement> runs = {{seed_report(2), step_samples(events, "t.json")}};
  const AllreduceValidation link = validate_allreduce(merge_bench_files({ring_bench(2)}, {"a.json"}, "ring"), 0.25);
  REQUIRE(link.calibration.link.alpha_s == doctest::Approx(kLink.alpha_s).epsilon(1e-6));
  const DdpValidation v = validate_ddp_step(runs, link, 0.25);
  CHECK(v.model.total_bytes() == kSeedBytes);
  CHECK(v.samples == 10);
  CHECK(v.compute.forward_s == doctest::Approx(30e-6));
  CHECK(v.compute.backward_s == doctest::Approx(20e-6));
  CHECK(v.compute.optimizer_s == doctest::Approx(10e-6));
  // One bucket, ready when backward's compute ends: the step is compute plus one all-reduce.
  REQUIRE(v.prediction.buckets.size() == 1);
  CHECK(v.step.predicted_s == doctest::Approx(60e-6 + allreduce_us * 1e-6));
  CHECK(v.allreduce.ratio == doctest::Approx(1.0).epsilon(0.01));
  CHECK(v.allreduce.verdict == Verdict::Shown);
  // The measured step also holds the two 5 us hand-offs between DDP's thread and the trainer.
  CHECK(v.step.measured.median == doctest::Approx(70e-6 + static_cast<int64_t>(allreduce_us + 0.5) * 1e-6));
  CHECK(v.step.verdict == Verdict::Within);
  CHECK(v.exposed_wait.median == doctest::Approx((10 + static_cast<int64_t>(allreduce_us + 0.5)) * 1e-6));

  // A link four times slower predicts a step beyond the tolerance.
  const AllreduceValidation slow = validate_allreduce(merge_bench_files({ring_bench(2, 4.0)}, {"a.json"}, "ring"), 0.25);
  const DdpValidation v_slow = validate_ddp_step(runs, slow, 0.25);
  CHECK(v_slow.allreduce.ratio == doctest::Approx(4.0).epsilon(0.02));
  CHECK(v_slow.step.verdict == Verdict::Beyond);
}

TEST_CASE("DDP comparisons refuse runs that cannot be compared") {
  std::vector<Event> events;
  add_step(events, 0, 0, 1000, 100, kSeedBytes);
  const std::vector<StepSample> steps = step_samples(events, "t.json");
  const AllreduceValidation kLink = validate_allreduce(merge_bench_files({ring_bench(2)}, {"a.json"}, "ring"), 0.25);
  // A link fitted to another backend or world size.
  const AllreduceValidation mpi_link = validate_allreduce(merge_bench_files({ring_bench(2, 1, 1, "mpi")}, {"m.json"}, "ring"), 0.25);
  CHECK_THROWS_WITH_AS(validate_ddp_step({{seed_report(2), steps}}, mpi_link, 0.25), doctest::Contains("mpi"), InputError);
  const AllreduceValidation native_link = validate_allreduce(merge_bench_files({ring_bench(2)}, {"a.json"}, "native"), 0.25);
  CHECK_THROWS_WITH_AS(validate_ddp_step({{seed_report(2), steps}}, native_link, 0.25), doctest::Contains("native"), InputError);
  RunReport failed = seed_report(2);
  failed.ok = false;
  CHECK_THROWS_WITH_AS(validate_ddp_step({{failed, steps}}, kLink, 0.25), doctest::Contains("failed"), InputError);
  RunReport wider = seed_report(2, "wide.json");
  wider.hidden = {64, 64};
  CHECK_THROWS_WITH_AS(validate_ddp_step({{wider, steps}}, kLink, 0.25), doctest::Contains("wide.json"), InputError);
  RunReport other = seed_report(4, "four.json");
  CHECK_THROWS_WITH_AS(validate_ddp_step({{seed_report(2), steps}, {other, steps}}, kLink, 0.25),
                       doctest::Contains("four.json"), InputError);
  CHECK_THROWS_WITH_AS(validate_ddp_step({{seed_report(1), steps}}, kLink, 0.25), doctest::Contains("communicates nothing"),
                       InputError);
  CHECK_THROWS_AS(validate_ddp_step({}, kLink, 0.25), InputError);
}

TEST_CASE("run reports: the fields the comparison needs, and clear errors") {
  const std::string good = R"({"ok": true, "world_size": 4, "backend": "mpi", "algorithm": "ring", "hidden": [48, 48],
      "bucket_cap_kb": -1, "steps": 64, "us_per_step": 812.5, "samples": 256})";
  const RunReport r = parse_run_report(good, "r.json");
  CHECK(r.ok);
  CHECK(r.world_size == 4);
  CHECK(r.backend == "mpi");
  CHECK(r.hidden == std::vector<int>{48, 48});
  CHECK(r.us_per_step == doctest::Approx(812.5));
  CHECK(model_of_report(r).total_elements() == 2737);  // 6*48+48 + 48*48+48 + 48+1
  CHECK(model_of_report(r).param_elements == seed_mlp().param_elements);
  CHECK(mlp_model(3, {}, 2).param_elements == std::vector<int64_t>{6, 2});
  CHECK_THROWS_WITH_AS(mlp_model(6, {48, 0}, 1), doctest::Contains("width 0"), InputError);

  CHECK_THROWS_WITH_AS(parse_run_report("{oops", "bad.json"), doctest::Contains("bad.json"), InputError);
  CHECK_THROWS_WITH_AS(parse_run_report(R"({"ok": true})", "r.json"), doctest::Contains("world_size"), InputError);
  CHECK_THROWS_WITH_AS(parse_run_report(R"({"ok": "yes", "world_size": 2})", "r.json"), doctest::Contains("\"ok\""),
                       InputError);
  std::string negative = good;
  negative.replace(negative.find("812.5"), 5, "-1");
  CHECK_THROWS_WITH_AS(parse_run_report(negative, "r.json"), doctest::Contains("us_per_step"), InputError);
  std::string zero_width = good;
  zero_width.replace(zero_width.find("[48, 48]"), 8, "[48, 0]");
  CHECK_THROWS_WITH_AS(parse_run_report(zero_width, "r.json"), doctest::Contains("hidden"), InputError);
  CHECK_THROWS_WITH_AS(load_run_report("/nonexistent/report.json"), doctest::Contains("/nonexistent/report.json"),
                       InputError);
}
