// The cost models against hand-computed values, and the DDP step model's bucketing and overlap.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "engine/core/error.h"
#include "engine/sim/cost_models.h"
#include "engine/sim/ddp_step_model.h"
#include "engine/sim/link_presets.h"
#include "engine/sim/model_presets.h"
#include "engine/sim/units.h"

using namespace ringlab;
using namespace ringlab::sim;

namespace {

// alpha = 10 us, n beta = 1 ms and n gamma = 0.1 ms for the n = 1e6 bytes used below.
LinkParams test_link() { return {1e-5, 1e-9, 1e-10}; }
constexpr double kN = 1e6;

LinkParams latency_only() { return {1.0, 0.0, 0.0}; }

}  // namespace

TEST_CASE("one rank has nothing to exchange") {
  for (Algorithm a : all_algorithms()) {
    CAPTURE(to_string(a));
    CHECK(predict_allreduce(a, 1, kN, test_link()) == 0.0);
  }
  CHECK(busbw(kN, 0.0, 1) == 0.0);
}

TEST_CASE("ring: 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma") {
  // p = 2: 2e-5 + 1e-3 + 5e-5
  CHECK(ring_allreduce_s(test_link(), 2, kN) == doctest::Approx(1.07e-3).epsilon(1e-12));
  // p = 4: 6e-5 + 1.5e-3 + 7.5e-5
  CHECK(ring_allreduce_s(test_link(), 4, kN) == doctest::Approx(1.635e-3).epsilon(1e-12));
  // p = 1024: 2046e-5 + 2 (1023/1024) 1e-3 + (1023/1024) 1e-4
  CHECK(ring_allreduce_s(test_link(), 1024, kN) == doctest::Approx(0.02255794921875).epsilon(1e-12));
  CHECK(predict_allreduce(Algorithm::Ring, 4, kN, test_link()) == ring_allreduce_s(test_link(), 4, kN));
}

TEST_CASE("ring busbw equals the link bandwidth for large messages when latency is free") {
  const LinkParams link{0.0, 1.0 / 12.5e9, 0.0};
  for (int64_t p : {2, 3, 8, 1024}) {
    CAPTURE(p);
    const double n = 1e9;
    const double t = ring_allreduce_s(link, p, n);
    CHECK(busbw(n, t, p) == doctest::Approx(12.5e9).epsilon(1e-12));
    CHECK(algbw(n, t) == doctest::Approx(12.5e9 * p / (2.0 * (p - 1))).epsilon(1e-12));
  }
}

TEST_CASE("binary tree: 2 ceil(log2 p) (alpha + n beta) + ceil(log2 p) n gamma") {
  // p = 8: L = 3: 6 (1e-5 + 1e-3) + 3e-4
  CHECK(tree_allreduce_s(test_link(), 8, kN) == doctest::Approx(6.36e-3).epsilon(1e-12));
  // p = 5 needs as many levels as p = 8
  CHECK(tree_allreduce_s(test_link(), 5, kN) == tree_allreduce_s(test_link(), 8, kN));
  // pipelined in 4 segments, p = 8: 2 (3 + 3)(1e-5 + 2.5e-4) + 6 * 2.5e-5
  CHECK(tree_allreduce_s(test_link(), 8, kN, 4) == doctest::Approx(3.27e-3).epsilon(1e-12));
}

TEST_CASE("latency: the tree's grows with log p, the ring's with p") {
  for (int64_t p : {2, 16, 1024}) {
    CAPTURE(p);
    CHECK(tree_allreduce_s(latency_only(), p, kN) == 2.0 * ceil_log2(p));
    CHECK(ring_allreduce_s(latency_only(), p, kN) == 2.0 * (p - 1));
  }
  CHECK(tree_allreduce_s(latency_only(), 1024, 0) == 20.0);
  CHECK(ring_allreduce_s(latency_only(), 1024, 0) == 2046.0);
  CHECK(rhd_allreduce_s(latency_only(), 1024, 0) == 20.0);
}

TEST_CASE("recursive halving-doubling pays two extra full-message steps off a power of two") {
  // p = 4 (power of two): 4e-5 + 1.5e-3 + 7.5e-5
  CHECK(rhd_allreduce_s(test_link(), 4, kN) == doctest::Approx(1.615e-3).epsilon(1e-12));
  // p = 8: 6e-5 + 1.75e-3 + 8.75e-5
  CHECK(rhd_allreduce_s(test_link(), 8, kN) == doctest::Approx(1.8975e-3).epsilon(1e-12));
  // p = 6: the p = 4 core plus the two leftover ranks' send-in and send-back: 2e-5 + 2e-3 + 1e-4
  CHECK(rhd_allreduce_s(test_link(), 6, kN) == doctest::Approx(1.615e-3 + 2.12e-3).epsilon(1e-12));
  CHECK(rhd_allreduce_s(test_link(), 6, kN) > rhd_allreduce_s(test_link(), 8, kN));
  CHECK(floor_pow2(6) == 4);
  CHECK(floor_pow2(1024) == 1024);
  CHECK(floor_pow2(1023) == 512);
}

TEST_CASE("double binary tree: (2L - 1 + s)(alpha + C/s)") {
  // p = 2, one segment: each tree is one edge (k = 2): 2 (1e-5 + 1e-3 + 5e-5)
  CHECK(dbt_allreduce_s(test_link(), 2, kN, 1) == doctest::Approx(2.12e-3).epsilon(1e-12));
  // p = 8, 4 segments: L = 3, C = 2 n beta + n gamma = 2.1e-3: 9 (1e-5 + 5.25e-4)
  CHECK(dbt_allreduce_s(test_link(), 8, kN, 4) == doctest::Approx(4.815e-3).epsilon(1e-12));
  // The chosen segment count (s* = sqrt(5 * 2.1e-3 / 1e-5) ~ 32.4) beats every other.
  const int best = dbt_best_segments(test_link(), 8, kN);
  CHECK((best == 32 || best == 33));
  const double t_best = dbt_allreduce_s(test_link(), 8, kN);
  for (int s = 1; s <= 200; ++s) CHECK(t_best <= dbt_allreduce_s(test_link(), 8, kN, s) * (1 + 1e-12));
  // Latency grows like the tree's, and large messages approach C = 2 n beta.
  CHECK(dbt_allreduce_s(latency_only(), 1024, 8, 1) == 2.0 * ceil_log2(1024));
  const LinkParams no_latency{0.0, 1e-9, 0.0};
  CHECK(dbt_allreduce_s(no_latency, 1024, 1e9) == doctest::Approx(2.0).epsilon(1e-6));
}

TEST_CASE("parameter server: the servers' links carry p/k of everyone's gradient") {
  // p = 4, k = 1: 2 (4 alpha + 4 n beta) + 3 n gamma
  CHECK(ps_allreduce_s(test_link(), 4, kN, 1) == doctest::Approx(8.38e-3).epsilon(1e-12));
  // p = 4, k = 4: 2 (4 alpha + n beta) + (3/4) n gamma
  CHECK(ps_allreduce_s(test_link(), 4, kN, 4) == doctest::Approx(2.155e-3).epsilon(1e-12));
  // more workers, same servers: time grows with p
  CHECK(ps_allreduce_s(test_link(), 64, kN, 2) > 10 * ps_allreduce_s(test_link(), 4, kN, 2));
  AlgorithmOptions options;
  options.ps_shards = 4;
  CHECK(predict_allreduce(Algorithm::ParameterServer, 4, kN, test_link(), options) == ps_allreduce_s(test_link(), 4, kN, 4));
}

TEST_CASE("bad input to the models is an InputError naming the value") {
  CHECK_THROWS_AS(predict_allreduce(Algorithm::Ring, 0, kN, test_link()), InputError);
  CHECK_THROWS_WITH_AS(predict_allreduce(Algorithm::Ring, -3, kN, test_link()), doctest::Contains("-3"), InputError);
  CHECK_THROWS_AS(predict_allreduce(Algorithm::Ring, 4, -1, test_link()), InputError);
  CHECK_THROWS_AS(predict_allreduce(Algorithm::Ring, 4, std::nan(""), test_link()), InputError);
  AlgorithmOptions no_shards;
  no_shards.ps_shards = 0;
  CHECK_THROWS_AS(predict_allreduce(Algorithm::ParameterServer, 4, kN, test_link(), no_shards), InputError);
  CHECK_THROWS_WITH_AS(parse_algorithm("butterfly"), doctest::Contains("butterfly"), InputError);
  CHECK(parse_algorithm("rhd") == Algorithm::Rhd);
  CHECK_THROWS_WITH_AS(find_link_preset("token-ring"), doctest::Contains("token-ring"), InputError);
  CHECK_THROWS_AS(link_from_units(5, 0, 0), InputError);
  CHECK_THROWS_AS(link_from_units(5, -2, 0), InputError);
  CHECK_THROWS_AS(link_from_units(-1, 10, 0), InputError);
  CHECK_THROWS_AS(validate_link({0, -1e-9, 0}), InputError);
  CHECK_THROWS_WITH_AS(model_preset("7B"), doctest::Contains("7B"), InputError);
}

TEST_CASE("link presets carry their sources and sensible numbers") {
  for (const LinkPreset& p : link_presets()) {
    CAPTURE(p.name);
    CHECK(!p.source.empty());
    CHECK(p.link.beta_s_per_byte > 0);
    CHECK(p.link.alpha_s > 0);
  }
  CHECK(find_link_preset("nvlink4").link.beta_s_per_byte == doctest::Approx(1.0 / 450e9));
  CHECK(find_link_preset("ib-ndr").link.beta_s_per_byte == doctest::Approx(1.0 / 50e9));
  CHECK(find_link_preset("100gbe").link.beta_s_per_byte == doctest::Approx(1.0 / 12.5e9));
  CHECK(find_link_preset("this-machine").link.alpha_s == doctest::Approx(50e-6));
}

TEST_CASE("sizes with suffixes") {
  CHECK(parse_byte_size("4096") == 4096);
  CHECK(parse_byte_size("64K") == 65536);
  CHECK(parse_byte_size("64M") == 67108864);
  CHECK(parse_byte_size("16MiB") == 16777216);
  CHECK(parse_byte_size("1g") == 1073741824);
  CHECK(parse_byte_size("1.5K") == 1536);
  CHECK(parse_byte_size("12B") == 12);
  for (const char* bad : {"", "0", "-4", "abc", "12Q", "1.3", "0.5K0"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_byte_size(bad, "--bytes"), InputError);
  }
  CHECK_THROWS_WITH_AS(parse_byte_size("-4", "--bytes"), doctest::Contains("--bytes '-4'"), InputError);
  CHECK(format_bytes(64.0 * 1024 * 1024) == "64 MiB");
  CHECK(format_seconds(12.5e-6) == "12.5 us");
}

TEST_CASE("model presets have the published parameter counts") {
  CHECK(seed_mlp().total_elements() == 2737);
  CHECK(seed_mlp().param_elements.size() == 6);
  CHECK(mlp_25m().total_elements() == 25'190'400);
  const ModelShape gpt2 = gpt2_small_124m();
  CHECK(gpt2.total_elements() == 124'439'808);
  CHECK(gpt2.param_elements.size() == 148);
  CHECK(gpt2.compute.backward_s == doctest::Approx(2 * gpt2.compute.forward_s));
  // 6 N tokens / FLOP/s = 6 * 124,439,808 * 16,384 / 125e12
  CHECK(gpt2.compute.total_s() == doctest::Approx(0.0978634).epsilon(1e-5));
}

TEST_CASE("buckets follow PyTorch: 1 MiB first bucket, then the cap, reduced in reverse") {
  ModelShape m;
  m.name = "ten";
  m.param_elements.assign(10, 262144);  // ten 1 MiB float32 tensors
  BucketPolicy policy;
  policy.cap_bytes = 2 << 20;
  const std::vector<Bucket> buckets = assign_buckets(m, policy);
  // registration order: {0} (1 MiB first bucket), {1,2}, {3,4}, {5,6}, {7,8}, {9}; then reversed
  REQUIRE(buckets.size() == 6);
  CHECK(buckets.front().first_param == 9);
  CHECK(buckets.front().bytes == 1 << 20);
  CHECK(buckets[1].first_param == 7);
  CHECK(buckets[1].last_param == 8);
  CHECK(buckets.back().first_param == 0);
  CHECK(buckets.back().last_param == 0);

  // DDP's default (25 MiB) keeps the seed's 2,737 floats in one bucket.
  CHECK(assign_buckets(seed_mlp(), BucketPolicy{}).size() == 1);
  // GPT-2 small: the 154 MB token embedding, registered first, is ready last: it joins the
  // bucket reduced last, with the tensors ready just before it (the bucket overshoots its cap).
  const std::vector<Bucket> gpt2 = assign_buckets(gpt2_small_124m(), BucketPolicy{});
  CHECK(gpt2.back().first_param == 0);
  CHECK(gpt2.back().last_param > 0);
  CHECK(gpt2.back().bytes > int64_t{50257} * 768 * 4);
  int64_t total = 0;
  for (const Bucket& b : gpt2) total += b.bytes;
  CHECK(total == gpt2_small_124m().total_bytes());
  CHECK(BucketPolicy::with_cap_mb(50).cap_bytes == 50 << 20);
  CHECK_THROWS_AS(BucketPolicy::with_cap_mb(0), InputError);
  CHECK_THROWS_AS(BucketPolicy::with_cap_mb(-1), InputError);
}

TEST_CASE("DDP step: buckets start when ready and queue behind each other") {
  ModelShape m;
  m.name = "two";
  m.param_elements = {524288, 524288};  // two 2 MiB tensors: one bucket each
  ComputeTimes compute;
  compute.forward_s = 1.0;
  compute.backward_s = 2.0;
  // p = 2, ring: t = n beta; a 2 MiB bucket takes 1 s
  LinkParams link{0.0, 1.0 / (2 << 20), 0.0};
  DdpStepPrediction p = predict_ddp_step(m, 2, link, BucketPolicy{}, compute);
  REQUIRE(p.buckets.size() == 2);
  CHECK(p.buckets[0].ready_s == doctest::Approx(2.0));  // the last tensor: half of backward done
  CHECK(p.buckets[0].end_s == doctest::Approx(3.0));
  CHECK(p.buckets[1].ready_s == doctest::Approx(3.0));
  CHECK(p.buckets[1].start_s == doctest::Approx(3.0));
  CHECK(p.step_s == doctest::Approx(4.0));
  CHECK(p.exposed_comm_s == doctest::Approx(1.0));
  CHECK(p.efficiency == doctest::Approx(0.75));

  link.beta_s_per_byte = 1.5 / (2 << 20);  // 1.5 s per bucket: the second waits for the first
  p = predict_ddp_step(m, 2, link, BucketPolicy{}, compute);
  CHECK(p.buckets[1].start_s == doctest::Approx(3.5));
  CHECK(p.step_s == doctest::Approx(5.0));
  CHECK(p.comm_s == doctest::Approx(3.0));
}

TEST_CASE("DDP step: cheap communication hides behind backward, dear communication shows") {
  const ModelShape model = mlp_25m();
  const ComputeTimes compute = model.compute;
  const LinkParams cheap = link_from_units(0.0, 1e6, 0);  // 1 PB/s, no latency
  DdpStepPrediction hidden = predict_ddp_step(model, 64, cheap, BucketPolicy{}, compute);
  CHECK(hidden.comm_s > 0);
  CHECK(hidden.exposed_comm_s < 1e-3 * hidden.compute_s);
  CHECK(hidden.efficiency > 0.999);

  const LinkParams dear = link_from_units(50.0, 0.1, 0);  // 100 MB/s
  DdpStepPrediction exposed = predict_ddp_step(model, 64, dear, BucketPolicy{}, compute);
  CHECK(exposed.comm_s > exposed.compute_s);
  CHECK(exposed.exposed_comm_s == doctest::Approx(exposed.step_s - exposed.compute_s));
  CHECK(exposed.exposed_comm_s > 0.5 * exposed.comm_s);
  CHECK(exposed.efficiency < 0.5);
  CHECK(exposed.step_s >= exposed.compute_s + exposed.buckets.back().end_s - exposed.buckets.back().start_s - 1e-12);
}

TEST_CASE("DDP step at one rank is all compute: efficiency 1") {
  for (const std::string& name : model_preset_names()) {
    CAPTURE(name);
    const ModelShape model = model_preset(name);
    const DdpStepPrediction p =
        predict_ddp_step(model, 1, find_link_preset("this-machine").link, BucketPolicy{}, model.compute);
    CHECK(p.efficiency == 1.0);
    CHECK(p.exposed_comm_s == 0.0);
    CHECK(p.step_s == doctest::Approx(model.compute.total_s()));
  }
}

TEST_CASE("DDP step: world sizes up to 1,024 and bad input") {
  const ModelShape model = gpt2_small_124m();
  const LinkParams link = find_link_preset("ib-ndr").link;
  double previous = 0;
  for (int64_t p = 1; p <= 1024; p *= 2) {
    const DdpStepPrediction d = predict_ddp_step(model, p, link, BucketPolicy{}, model.compute);
    CHECK(d.step_s >= previous);  // the ring's latency grows with p: never faster
    previous = d.step_s;
  }
  CHECK_THROWS_AS(predict_ddp_step(model, 0, link, BucketPolicy{}, model.compute), InputError);
  ComputeTimes negative;
  negative.forward_s = -1;
  CHECK_THROWS_AS(predict_ddp_step(model, 4, link, BucketPolicy{}, negative), InputError);
  ModelShape empty;
  CHECK_THROWS_AS(predict_ddp_step(empty, 4, link, BucketPolicy{}, model.compute), InputError);
}

TEST_CASE("curves of time and busbw against size") {
  const auto curve = allreduce_curve(Algorithm::Ring, 8, find_link_preset("100gbe").link, {}, 4, 1 << 30, 4.0);
  REQUIRE(curve.size() == 15);  // 4 B .. 1 GiB in factors of 4
  CHECK(curve.front().bytes == 4);
  CHECK(curve.back().bytes == 1 << 30);
  for (size_t i = 1; i < curve.size(); ++i) {
    CHECK(curve[i].seconds > curve[i - 1].seconds);
    CHECK(curve[i].busbw > curve[i - 1].busbw);
  }
  CHECK(curve.back().busbw < 12.5e9);
  CHECK_THROWS_AS(allreduce_curve(Algorithm::Ring, 8, {}, {}, 4, 64, 1.0), InputError);
}
