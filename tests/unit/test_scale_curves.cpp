// What the Scale view draws: the algorithm curves and the DDP step bar (scale_curves), and the
// live run's measured all-reduces with the link fitted to them (live_calibration).
#include <doctest/doctest.h>

#include <cmath>

#include "engine/core/error.h"
#include "engine/view_model/collective_log.h"
#include "engine/view_model/live_calibration.h"
#include "engine/sim/scale_curves.h"

using namespace ringlab;
using namespace ringlab::sim;

namespace {

// alpha 10 us, 1 GB/s, free reduction: easy to compute by hand.
const LinkParams kSimpleLink{1e-5, 1e-9, 0.0};
// The gloo-over-loopback level of docs/reference-measurements.md: alpha 50 us, 2.5 GB/s.
const LinkParams kLoopback{50e-6, 1.0 / 2.5e9, 0.0};

ScaleQuery query(int64_t p, const std::string& model, const LinkParams& link) {
  ScaleQuery q;
  q.world_size = p;
  q.model = model;
  q.link = link;
  return q;
}

// A collective rank r entered at begin_ns[r] and left at end_ns[r] (after the id's millisecond),
// optionally held at the step-through gate.
void add_collective(view_model::CollectiveLog& log, int generation, int64_t id, const std::string& label, int64_t bytes,
                    std::vector<int64_t> begin_ns, std::vector<int64_t> end_ns, int64_t gate_wait_ns = 0) {
  const int world = static_cast<int>(begin_ns.size());
  const int64_t t0 = 1'000'000'000 * id;
  for (int r = 0; r < world; ++r) {
    Event b;
    b.kind = EventKind::CollectiveBegin;
    b.rank = r;
    b.collective_id = id;
    b.bytes = bytes;
    b.text = label;
    b.t_begin_ns = b.t_end_ns = t0 + begin_ns[r];
    log.consume(b, generation, world);
    if (gate_wait_ns > 0) {
      Event g;
      g.kind = EventKind::GateWait;
      g.rank = r;
      g.collective_id = id;
      g.t_begin_ns = b.t_begin_ns;
      g.t_end_ns = b.t_begin_ns + gate_wait_ns;
      log.consume(g, generation, world);
    }
    Event e = b;
    e.kind = EventKind::CollectiveEnd;
    e.t_end_ns = t0 + end_ns[r];
    log.consume(e, generation, world);
  }
}

}  // namespace

TEST_CASE("the curves: five algorithms, 4 B to 1 GiB doubling, each point the model's time") {
  const ScaleData d = compute_scale_data(query(64, "124M", kLoopback));
  REQUIRE(d.curves.size() == 5);
  CHECK(d.curves[0].algorithm == Algorithm::Ring);
  CHECK(d.curves[4].algorithm == Algorithm::ParameterServer);
  for (const AlgorithmCurve& c : d.curves) {
    CAPTURE(to_string(c.algorithm));
    REQUIRE(c.points.size() == 29);  // 2^2 .. 2^30
    CHECK(c.points.front().bytes == 4.0);
    CHECK(c.points.back().bytes == double(int64_t{1} << 30));
    CHECK(c.points[10].seconds == predict_allreduce(c.algorithm, 64, c.points[10].bytes, kLoopback));
  }
  // Ring at 64 ranks, 4 KiB: 2*63*50 us + 2*(63/64)*4096 B / 2.5 GB/s.
  CHECK(d.curves[0].points[10].bytes == 4096.0);
  CHECK(d.curves[0].points[10].seconds == doctest::Approx(6.3e-3 + 2 * 63.0 / 64 * 4096 / 2.5e9).epsilon(1e-12));
  CHECK(d.reference.empty());
}

TEST_CASE("the reference curve is the ring at the live run's world size, on the same link") {
  ScaleQuery q = query(1024, "seed", kLoopback);
  q.reference_world_size = 4;
  const ScaleData d = compute_scale_data(q);
  REQUIRE(d.reference.size() == 29);
  for (const CurvePoint& pt : d.reference)
    CHECK(pt.seconds == ring_allreduce_s(kLoopback, 4, pt.bytes));
  CHECK_FALSE(q == query(1024, "seed", kLoopback));
}

TEST_CASE("bus bandwidth is algbw x 2(p-1)/p, and the ring's approaches the link's for large messages") {
  for (int64_t p : {2, 8, 1024}) {
    CAPTURE(p);
    const ScaleData d = compute_scale_data(query(p, "124M", kLoopback));
    for (const AlgorithmCurve& c : d.curves)
      for (const CurvePoint& pt : c.points) {
        CHECK(pt.algbw == doctest::Approx(pt.bytes / pt.seconds).epsilon(1e-12));
        CHECK(pt.busbw == doctest::Approx(pt.algbw * 2.0 * (p - 1) / p).epsilon(1e-12));
      }
    // The ring's busbw is n / (p alpha + n beta): the link's 2.5 GB/s once n beta dwarfs p alpha.
    const CurvePoint& gib = d.curves[0].points.back();
    CHECK(gib.busbw == doctest::Approx(gib.bytes / (p * 50e-6 + gib.bytes / 2.5e9)).epsilon(1e-12));
    if (p == 2) CHECK(gib.busbw == doctest::Approx(2.5e9).epsilon(1e-3));
  }
}

TEST_CASE("one rank: nothing is exchanged, nothing is exposed, efficiency 1") {
  for (const char* model : {"seed", "25M", "124M"}) {
    CAPTURE(model);
    const ScaleData d = compute_scale_data(query(1, model, kLoopback));
    CHECK(d.step.comm_s == 0.0);
    CHECK(d.step.exposed_comm_s == 0.0);
    CHECK(d.step.hidden_comm_s == 0.0);
    CHECK(d.step.efficiency == 1.0);
    CHECK(d.step.step_s == doctest::Approx(d.step.compute_s).epsilon(1e-15));
    CHECK(d.curves[0].points[5].seconds == 0.0);
  }
}

TEST_CASE("the seed's one bucket is ready only when backward ends: all its communication is exposed") {
  const ScaleData d = compute_scale_data(query(2, "seed", kSimpleLink));
  // 2,737 float gradients = 10,948 bytes; ring at p = 2: 2 alpha + n beta = 20 us + 10.948 us.
  CHECK(d.step.gradient_bytes == 10948);
  REQUIRE(d.step.buckets.size() == 1);
  CHECK(d.step.comm_s == doctest::Approx(30.948e-6).epsilon(1e-12));
  CHECK(d.step.exposed_comm_s == doctest::Approx(30.948e-6).epsilon(1e-9));
  CHECK(d.step.hidden_comm_s == doctest::Approx(0.0).epsilon(1e-12));
  CHECK(d.step.compute_s == doctest::Approx(534e-6).epsilon(1e-12));
  CHECK(d.step.efficiency == doctest::Approx(534.0 / 564.948).epsilon(1e-9));
}

TEST_CASE("GPT-2 small: many buckets, part of the communication hides under backward") {
  const ScaleData d = compute_scale_data(query(64, "124M", kLoopback));
  CHECK(d.step.buckets.size() > 10);
  CHECK(d.step.largest_bucket_bytes >= int64_t{25} << 20);
  CHECK(d.step.hidden_comm_s > 0.0);
  CHECK(d.step.exposed_comm_s > 0.0);
  CHECK(d.step.hidden_comm_s + d.step.exposed_comm_s == doctest::Approx(d.step.comm_s).epsilon(1e-12));
  CHECK(d.step.step_s == doctest::Approx(d.step.compute_s + d.step.exposed_comm_s).epsilon(1e-12));
  CHECK(d.step.efficiency == doctest::Approx(d.step.compute_s / d.step.step_s).epsilon(1e-12));
  // A faster link loses less of the step.
  const ScaleData ib = compute_scale_data(query(64, "124M", link_from_units(1.5, 50.0, 0.0)));
  CHECK(ib.step.efficiency > d.step.efficiency);
}

TEST_CASE("queries compare by value, and bad ones are refused with a message") {
  CHECK(query(8, "25M", kLoopback) == query(8, "25M", kLoopback));
  CHECK_FALSE(query(8, "25M", kLoopback) == query(16, "25M", kLoopback));
  CHECK_FALSE(query(8, "25M", kLoopback) == query(8, "25M", kSimpleLink));
  CHECK_THROWS_AS(compute_scale_data(query(0, "25M", kLoopback)), InputError);
  CHECK_THROWS_WITH_AS(compute_scale_data(query(8, "7B", kLoopback)), doctest::Contains("unknown model '7B'"), InputError);
  CHECK_THROWS_AS(compute_scale_data(query(8, "seed", LinkParams{-1, 0, 0})), InputError);
}

TEST_CASE("the live run's all-reduces: gradients only, timed from the last rank's arrival") {
  view_model::CollectiveLog log;
  add_collective(log, 1, 0, "broadcast", 10948, {0, 0}, {900'000, 900'000});
  add_collective(log, 1, 1, "demo", 12, {0, 0}, {5'000'000, 5'000'000});
  // Rank 0 arrives 1 ms early and waits for rank 1: the all-reduce itself took 0.4 ms.
  add_collective(log, 1, 2, "ring", 10948, {0, 1'000'000}, {1'350'000, 1'400'000});
  add_collective(log, 1, 3, "native", 4096, {50'000, 0}, {250'000, 240'000});
  add_collective(log, 1, 4, "ring", 10948, {0, 0}, {700'000, 600'000}, 500'000);  // held at the gate
  add_collective(log, 1, 5, "native", 0, {0, 0}, {100'000, 100'000});              // an empty tensor
  const std::vector<MeasuredAllreduce> m = measured_allreduces(log);
  REQUIRE(m.size() == 2);
  CHECK(m[0].algorithm == "ring");
  CHECK(m[0].world_size == 2);
  CHECK(m[0].generation == 1);
  CHECK(m[0].bytes == 10948.0);
  CHECK(m[0].seconds == doctest::Approx(400e-6).epsilon(1e-12));
  CHECK(m[1].algorithm == "native");
  CHECK(m[1].bytes == 4096.0);
  CHECK(m[1].seconds == doctest::Approx(200e-6).epsilon(1e-12));
}

TEST_CASE("one message size: the point is kept, no fit, compared against a preset's curve") {
  std::vector<MeasuredAllreduce> m;
  for (double t : {1.0e-3, 1.2e-3, 0.9e-3, 9.0e-3, 1.1e-3})  // one outlier
    m.push_back({1, 4, "ring", 10948, t});
  const LiveCalibration live = calibrate_live(m);
  CHECK(live.any());
  CHECK_FALSE(live.fitted);
  REQUIRE(live.sizes.size() == 1);
  CHECK(live.sizes[0].median_s == 1.1e-3);
  CHECK(live.sizes[0].samples == 5);
  const std::vector<MeasuredVsModel> vs = compare_with_model(live, kSimpleLink);
  REQUIRE(vs.size() == 1);
  // Ring at p = 4: 6 alpha + 1.5 n beta = 60 us + 16.422 us.
  CHECK(vs[0].model_s == doctest::Approx(76.422e-6).epsilon(1e-12));
  CHECK(vs[0].ratio == doctest::Approx(1.1e-3 / 76.422e-6).epsilon(1e-12));
}

TEST_CASE("several message sizes: the fit recovers alpha and beta from synthetic points") {
  std::vector<MeasuredAllreduce> m;
  // An older generation at another world size must not mix in.
  m.push_back({1, 2, "ring", 1e6, 5.0});
  for (double n : {1152.0, 4096.0, 9216.0, 65536.0, 1048576.0})
    for (double noise : {1.0, 3.0, 1.0})  // the median ignores the one slow repeat
      m.push_back({2, 4, "ring", n, ring_allreduce_s(kLoopback, 4, n) * noise});
  const LiveCalibration live = calibrate_live(m);
  CHECK(live.generation == 2);
  CHECK(live.world_size == 4);
  REQUIRE(live.sizes.size() == 5);
  CHECK(live.sizes[0].samples == 3);
  REQUIRE(live.fitted);
  CHECK(live.usable());
  CHECK(live.calibration.link.alpha_s == doctest::Approx(50e-6).epsilon(1e-9));
  CHECK(live.calibration.link.beta_s_per_byte == doctest::Approx(1.0 / 2.5e9).epsilon(1e-9));
  CHECK(live.calibration.link.gamma_s_per_byte == 0.0);
  CHECK_FALSE(live.calibration.gamma_separated);
  CHECK(live.calibration.fit.rms_relative_error < 1e-9);
  for (const MeasuredVsModel& v : compare_with_model(live, live.calibration.link))
    CHECK(v.ratio == doctest::Approx(1.0).epsilon(1e-9));
}

TEST_CASE("larger sizes that were not slower: fitted, but no bandwidth seen, so not offered as a link") {
  std::vector<MeasuredAllreduce> m = {{1, 4, "ring", 1152, 4.8e-3}, {1, 4, "ring", 9600, 2.9e-3}};
  const LiveCalibration live = calibrate_live(m);
  CHECK(live.fitted);
  CHECK(live.calibration.link.beta_s_per_byte == 0.0);
  CHECK(live.calibration.link.alpha_s > 0.0);
  CHECK_FALSE(live.usable());
}

TEST_CASE("nothing measured yet, or only one rank") {
  CHECK_FALSE(calibrate_live({}).any());
  CHECK(compare_with_model(calibrate_live({}), kSimpleLink).empty());
  view_model::CollectiveLog log;
  add_collective(log, 1, 0, "ring", 10948, {0}, {300'000});
  CHECK(measured_allreduces(log).empty());
}
