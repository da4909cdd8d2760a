// Calibration: the least-squares fit recovers a known link from synthetic bench points, and the
// bench file reader accepts exactly what `ringlab bench allreduce --json` writes.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <cstdio>
#include <fstream>
#include <random>

#include "engine/core/error.h"
#include "engine/sim/bench_file.h"
#include "engine/sim/calibration.h"
#include "engine/sim/cost_models.h"

using namespace ringlab;
using namespace ringlab::sim;

namespace {

// A sweep like the bench's: 4 B to 64 MiB, doubling, each time from the model times a factor
// drawn around 1 (noise 0 gives the exact model).
std::vector<BenchPoint> synthetic_sweep(Algorithm algorithm, int64_t p, const LinkParams& link, double noise,
                                        unsigned seed = 7) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> jitter(1.0 - noise, 1.0 + noise);
  std::vector<BenchPoint> points;
  for (double n = 4; n <= 64.0 * 1024 * 1024; n *= 2) {
    const double t = predict_allreduce(algorithm, p, n, link) * (noise > 0 ? jitter(gen) : 1.0);
    points.push_back({n, t, to_string(algorithm)});
  }
  return points;
}

// The gloo-over-loopback level of docs/reference-measurements.md.
const LinkParams kLoopback{50e-6, 1.0 / 2.5e9, 0.0};

std::string bench_json(const std::vector<BenchPoint>& points, int64_t p, const std::string& algorithm) {
  std::string results;
  for (const BenchPoint& pt : points) {
    const double algbw = pt.bytes / pt.seconds * 1e-9;
    results += fmt::format("{}{{\"bytes\": {}, \"time_us\": {:.6f}, \"algbw\": {}, \"busbw\": {}}}",
                           results.empty() ? "" : ",\n  ", static_cast<int64_t>(pt.bytes), pt.seconds * 1e6, algbw,
                           algbw * 2.0 * (p - 1) / p);
  }
  return fmt::format("{{\"backend\": \"gloo\", \"world_size\": {}, \"algorithm\": \"{}\",\n \"results\": [{}]}}", p,
                     algorithm, results);
}

}  // namespace

TEST_CASE("the fit recovers alpha and beta exactly from noise-free ring points") {
  for (int64_t p : {2, 4, 7}) {
    CAPTURE(p);
    const Calibration c = calibrate(synthetic_sweep(Algorithm::Ring, p, kLoopback, 0), Algorithm::Ring, p);
    CHECK(c.link.alpha_s == doctest::Approx(kLoopback.alpha_s).epsilon(1e-9));
    CHECK(c.link.beta_s_per_byte == doctest::Approx(kLoopback.beta_s_per_byte).epsilon(1e-9));
    CHECK(c.link.gamma_s_per_byte == 0.0);
    CHECK(!c.gamma_separated);
    CHECK(c.fit.rms_relative_error < 1e-9);
    CHECK(c.fit.intercept_s == doctest::Approx(2.0 * (p - 1) * kLoopback.alpha_s).epsilon(1e-9));
  }
}

TEST_CASE("the fit recovers alpha and beta from noisy points") {
  for (unsigned seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    const auto points = synthetic_sweep(Algorithm::Ring, 4, kLoopback, 0.10, seed);  // +-10% per point
    const Calibration c = calibrate(points, Algorithm::Ring, 4);
    CHECK(c.link.alpha_s == doctest::Approx(kLoopback.alpha_s).epsilon(0.10));
    CHECK(c.link.beta_s_per_byte == doctest::Approx(kLoopback.beta_s_per_byte).epsilon(0.10));
    CHECK(c.fit.rms_relative_error > 0.01);
    CHECK(c.fit.rms_relative_error < 0.10);
  }
}

TEST_CASE("other algorithms are fitted with their own coefficients") {
  for (Algorithm a : {Algorithm::Tree, Algorithm::Rhd, Algorithm::ParameterServer}) {
    for (int64_t p : {2, 6, 8}) {
      CAPTURE(to_string(a));
      CAPTURE(p);
      const Calibration c = calibrate(synthetic_sweep(a, p, kLoopback, 0), a, p);
      CHECK(c.link.alpha_s == doctest::Approx(kLoopback.alpha_s).epsilon(1e-9));
      CHECK(c.link.beta_s_per_byte == doctest::Approx(kLoopback.beta_s_per_byte).epsilon(1e-9));
    }
  }
}

TEST_CASE("beta and gamma are told apart only when gamma is known") {
  const LinkParams with_gamma{20e-6, 1.0 / 5e9, 1.0 / 10e9};
  const auto points = synthetic_sweep(Algorithm::Ring, 4, with_gamma, 0);
  // Unknown gamma: the slope gives an effective beta = beta + gamma (p-1)/p / (2(p-1)/p) = beta + gamma/2.
  const Calibration folded = calibrate(points, Algorithm::Ring, 4);
  CHECK(folded.link.beta_s_per_byte == doctest::Approx(with_gamma.beta_s_per_byte + with_gamma.gamma_s_per_byte / 2).epsilon(1e-9));
  CHECK(folded.link.gamma_s_per_byte == 0.0);
  // Both links predict the same times: the data cannot tell them apart.
  for (double n : {1e3, 1e6, 1e8})
    CHECK(ring_allreduce_s(folded.link, 4, n) == doctest::Approx(ring_allreduce_s(with_gamma, 4, n)).epsilon(1e-9));
  // Known gamma: beta itself comes back.
  const Calibration separated = calibrate(points, Algorithm::Ring, 4, with_gamma.gamma_s_per_byte);
  CHECK(separated.gamma_separated);
  CHECK(separated.link.beta_s_per_byte == doctest::Approx(with_gamma.beta_s_per_byte).epsilon(1e-9));
  CHECK(separated.link.alpha_s == doctest::Approx(with_gamma.alpha_s).epsilon(1e-9));
}

TEST_CASE("a bench file round trip: write, read, calibrate, predict") {
  const auto points = synthetic_sweep(Algorithm::Ring, 4, kLoopback, 0);
  const std::string path = "test_sim_calibration_bench.json";
  {
    std::ofstream out(path);
    out << bench_json(points, 4, "ring");
  }
  const BenchFile file = load_bench_file(path);
  std::remove(path.c_str());
  CHECK(file.backend == "gloo");
  CHECK(file.world_size == 4);
  CHECK(file.algorithm == "ring");
  REQUIRE(file.points.size() == points.size());
  CHECK(file.points[3].bytes == 32);
  CHECK(file.points[3].seconds == doctest::Approx(points[3].seconds).epsilon(1e-6));
  const Calibration c = calibrate_bench_file(file);
  CHECK(c.source_algorithm == "ring");
  CHECK(c.link.alpha_s == doctest::Approx(kLoopback.alpha_s).epsilon(1e-5));
  CHECK(c.link.beta_s_per_byte == doctest::Approx(kLoopback.beta_s_per_byte).epsilon(1e-5));
  for (const BenchPoint& p : file.points)
    CHECK(predict_allreduce(Algorithm::Ring, 4, p.bytes, c.link) == doctest::Approx(p.seconds).epsilon(1e-4));
}

TEST_CASE("the backend's own all-reduce ('native') is fitted as a ring; mixed files pick one") {
  const BenchFile native = parse_bench_json(bench_json(synthetic_sweep(Algorithm::Ring, 2, kLoopback, 0), 2, "native"), "n.json");
  const Calibration c = calibrate_bench_file(native);
  CHECK(c.algorithm == Algorithm::Ring);
  CHECK(c.link.alpha_s == doctest::Approx(kLoopback.alpha_s).epsilon(1e-5));

  const std::string mixed = R"({"backend": "mpi", "world_size": 2, "algorithm": "both", "results": [
      {"bytes": 4, "time_us": 110, "algorithm": "ring"}, {"bytes": 4000000, "time_us": 1700, "algorithm": "ring"},
      {"bytes": 4, "time_us": 10, "algorithm": "native"}, {"bytes": 4000000, "time_us": 800, "algorithm": "native"}]})";
  const BenchFile both = parse_bench_json(mixed, "mixed.json");
  const Calibration ring = calibrate_bench_file(both);
  CHECK(ring.source_algorithm == "ring");
  CHECK(ring.fit.intercept_s > 100e-6);
  const Calibration mpi = calibrate_bench_file(both, -1, "native");
  CHECK(mpi.fit.intercept_s < 11e-6);
  CHECK_THROWS_WITH_AS(calibrate_bench_file(both, -1, "tree"), doctest::Contains("tree"), InputError);
}

TEST_CASE("the bench's own layout: one row per size with ring and native results") {
  // As `ringlab bench allreduce --algorithm both --json` writes it (engine/dist/allreduce_bench.cpp).
  const std::string text = R"({"benchmark": "allreduce", "backend": "mpi", "world_size": 2, "algorithm": "both",
      "iters": 20, "warmup_iters": 5, "check": true, "segment_bytes": 0, "rows": [
      {"size": 4, "count": 1, "type": "float", "redop": "sum",
       "ring": {"time_us": 30.0, "algbw_gbps": 0.0001, "busbw_gbps": 0.0001, "wrong": 0},
       "native": {"time_us": 8.0, "algbw_gbps": 0.0005, "busbw_gbps": 0.0005, "wrong": 0}, "ring_over_native_busbw": 0.27},
      {"size": 16777216, "count": 4194304, "type": "float", "redop": "sum",
       "ring": {"time_us": 3030.0, "algbw_gbps": 5.5, "busbw_gbps": 5.5, "wrong": 0},
       "native": {"time_us": 3008.0, "algbw_gbps": 5.6, "busbw_gbps": 5.6, "wrong": 0}, "ring_over_native_busbw": 0.99}]})";
  const BenchFile file = parse_bench_json(text, "mpi2.json");
  CHECK(file.backend == "mpi");
  CHECK(file.world_size == 2);
  REQUIRE(file.points.size() == 4);
  CHECK(file.points[0].algorithm == "ring");
  CHECK(file.points[1].algorithm == "native");
  CHECK(file.points[2].bytes == 16777216);
  CHECK(file.points[2].seconds == doctest::Approx(3030e-6));
  // p = 2 ring: t = 2 alpha + n beta, through the two ring points exactly.
  const Calibration ring = calibrate_bench_file(file);
  CHECK(ring.source_algorithm == "ring");
  const double beta = (3030e-6 - 30e-6) / (16777216.0 - 4.0);
  CHECK(ring.link.beta_s_per_byte == doctest::Approx(beta).epsilon(1e-9));
  CHECK(ring.link.alpha_s == doctest::Approx((30e-6 - 4 * beta) / 2).epsilon(1e-9));
  const Calibration native = calibrate_bench_file(file, -1, "native");
  CHECK(native.link.alpha_s == doctest::Approx((8e-6 - 4 * (3000e-6 / (16777216.0 - 4.0))) / 2).epsilon(1e-6));

  CHECK_THROWS_WITH_AS(parse_bench_json(R"({"world_size": 2, "rows": [{"size": 4}]})", "r.json"),
                       doctest::Contains("rows[0]"), InputError);
  CHECK_THROWS_WITH_AS(parse_bench_json(R"({"world_size": 2, "rows": [{"size": 4, "ring": {"time_us": 0}}]})", "r.json"),
                       doctest::Contains("rows[0].ring"), InputError);
  CHECK_THROWS_WITH_AS(parse_bench_json(R"({"world_size": 2, "rows": 7})", "r.json"), doctest::Contains("rows"), InputError);
}

TEST_CASE("bad bench files and bad fits are InputErrors naming what is wrong") {
  CHECK_THROWS_WITH_AS(parse_bench_json("{not json", "bad.json"), doctest::Contains("bad.json"), InputError);
  CHECK_THROWS_WITH_AS(parse_bench_json("[]", "a.json"), doctest::Contains("a.json"), InputError);
  CHECK_THROWS_WITH_AS(parse_bench_json(R"({"world_size": 2})", "b.json"), doctest::Contains("results"), InputError);
  CHECK_THROWS_WITH_AS(parse_bench_json(R"({"results": []})", "c.json"), doctest::Contains("world_size"), InputError);
  CHECK_THROWS_WITH_AS(parse_bench_json(R"({"world_size": 0, "results": []})", "d.json"), doctest::Contains("world_size"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_bench_json(R"({"world_size": 2, "results": [{"bytes": "4", "time_us": 1}]})", "e.json"),
                       doctest::Contains("results[0]"), InputError);
  CHECK_THROWS_WITH_AS(parse_bench_json(R"({"world_size": 2, "results": [{"bytes": 4, "time_us": -1}]})", "f.json"),
                       doctest::Contains("time_us"), InputError);
  CHECK_THROWS_WITH_AS(parse_bench_json(R"({"world_size": 2, "results": [{"bytes": 4}]})", "g.json"),
                       doctest::Contains("time_us"), InputError);
  CHECK_THROWS_WITH_AS(load_bench_file("/nonexistent/bench.json"), doctest::Contains("/nonexistent/bench.json"), InputError);

  std::vector<BenchPoint> one_size = {{1024, 1e-3, "ring"}, {1024, 1.1e-3, "ring"}};
  CHECK_THROWS_WITH_AS(fit_line(one_size), doctest::Contains("two different"), InputError);
  CHECK_THROWS_AS(fit_line({{4, 0.0, "ring"}, {8, 1e-3, "ring"}}), InputError);
  const auto good = synthetic_sweep(Algorithm::Ring, 2, kLoopback, 0);
  CHECK_THROWS_AS(calibrate(good, Algorithm::Ring, 1), InputError);
  CHECK_THROWS_WITH_AS(calibrate(good, Algorithm::Dbt, 4), doctest::Contains("double binary tree"), InputError);
}

TEST_CASE("a fit never returns negative latency or bandwidth") {
  // Times that fall with size: the slope would be negative; it is pinned at 0.
  const std::vector<BenchPoint> falling = {{4, 2e-3, "ring"}, {4096, 1e-3, "ring"}};
  const LineFit f = fit_line(falling);
  CHECK(f.slope_s_per_byte == 0.0);
  CHECK(f.intercept_s > 0);
  // Pure bandwidth (t proportional to n) with a little noise: the intercept may not go negative.
  const std::vector<BenchPoint> proportional = {{1e3, 0.9e-6, "ring"}, {1e6, 1e-3, "ring"}, {1e7, 1e-2, "ring"}};
  const LineFit g = fit_line(proportional);
  CHECK(g.intercept_s >= 0.0);
  CHECK(g.slope_s_per_byte > 0.0);
}
