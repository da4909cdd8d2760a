// All-reduce over several nodes (engine/sim/node_models): the flat ring and the hierarchical
// all-reduce checked against values worked out by hand, their one-node case against the ring of
// cost_models, and the Scale view's data for a cluster (scale_curves).
#include <doctest/doctest.h>

#include "engine/core/error.h"
#include "engine/sim/link_presets.h"
#include "engine/sim/node_models.h"
#include "engine/sim/scale_curves.h"

using namespace ringlab;
using namespace ringlab::sim;

namespace {

// Round numbers for working by hand: within a node alpha 2 us and 100 GB/s (beta 0.01 ns/B);
// between nodes alpha 10 us and 1 GB/s (beta 1 ns/B), a hundred times slower.
const LinkParams kFast{2e-6, 1e-11, 0.0};
const LinkParams kSlow{1e-5, 1e-9, 0.0};
constexpr double kN = 8e6;  // bytes

Cluster cluster(int64_t nodes, int64_t per_node, LinkParams intra = kFast, LinkParams inter = kSlow) {
  return Cluster{nodes, per_node, intra, inter};
}

}  // namespace

TEST_CASE("one node: both algorithms are the ring over the node's link, to the last bit") {
  const LinkParams with_gamma{3e-6, 2e-10, 5e-11};
  for (int64_t p : {1, 2, 3, 8, 64}) {
    const Cluster c = cluster(1, p, with_gamma, kSlow);
    CHECK(flat_ring_allreduce_s(c, kN) == ring_allreduce_s(with_gamma, p, kN));
    CHECK(hierarchical_allreduce_s(c, kN) == ring_allreduce_s(with_gamma, p, kN));
  }
  // The ring's own formula, 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma, at p = 8:
  // 14 * 3 us + 1.75 * 8e6 * 0.2 ns + 0.875 * 8e6 * 0.05 ns = 42 us + 2.8 ms + 0.35 ms.
  CHECK(flat_ring_allreduce_s(cluster(1, 8, with_gamma, kSlow), kN) == doctest::Approx(3.192e-3).epsilon(1e-12));
}

TEST_CASE("2 nodes x 4 ranks, worked by hand") {
  const Cluster c = cluster(2, 4);
  // Flat ring over p = 8: 14 steps of m = 1 MB; each waits for the slow link:
  // 10 us + 1e6 B * 1 ns/B = 1.01 ms, so T = 14 * 1.01 ms = 14.14 ms.
  CHECK(flat_ring_allreduce_s(c, kN) == doctest::Approx(14.14e-3).epsilon(1e-12));
  // Hierarchical: the ring in the node (P = 4) on 8 MB: 6 * 2 us + 1.5 * 8e6 * 0.01 ns = 0.132 ms;
  // the ring across the nodes (N = 2) on 2 MB: 2 * 10 us + 1 * 2e6 * 1 ns = 2.02 ms; T = 2.152 ms.
  CHECK(hierarchical_allreduce_s(c, kN) == doctest::Approx(2.152e-3).epsilon(1e-12));
  // Each link between the nodes carries 2(p-1)/p n = 14 MB in the flat ring, 2(N-1)/N n/P = 2 MB
  // in the hierarchical all-reduce.
  CHECK(inter_node_bytes_per_link(NodeAlgorithm::FlatRing, c, kN) == doctest::Approx(14e6));
  CHECK(inter_node_bytes_per_link(NodeAlgorithm::Hierarchical, c, kN) == doctest::Approx(2e6));
  CHECK(inter_node_bytes_per_link(NodeAlgorithm::FlatRing, cluster(1, 8), kN) == 0.0);
}

TEST_CASE("2 nodes x 4 ranks with a reduction cost: each rank adds (p-1)/p n bytes in both") {
  LinkParams fast = kFast;
  fast.gamma_s_per_byte = 1e-12;  // 1 TB/s of reduction, on the ranks
  const Cluster c = cluster(2, 4, fast, kSlow);
  // 7/8 * 8e6 B * 1e-12 s/B = 7 us more in each.
  CHECK(flat_ring_allreduce_s(c, kN) == doctest::Approx(14.147e-3).epsilon(1e-12));
  CHECK(hierarchical_allreduce_s(c, kN) == doctest::Approx(2.159e-3).epsilon(1e-12));
}

TEST_CASE("one rank per node: both are a ring over the network") {
  const Cluster c = cluster(4, 1);
  CHECK(flat_ring_allreduce_s(c, kN) == doctest::Approx(ring_allreduce_s(kSlow, 4, kN)).epsilon(1e-12));
  CHECK(hierarchical_allreduce_s(c, kN) == doctest::Approx(ring_allreduce_s(kSlow, 4, kN)).epsilon(1e-12));
}

TEST_CASE("hierarchical beats the flat ring when the links between nodes are much slower") {
  const Cluster c = cluster(8, 8, find_link_preset("nvlink4").link, find_link_preset("100gbe").link);
  for (double n : {1e3, 1e6, 1e8, 1e9}) {
    const double flat = flat_ring_allreduce_s(c, n), hier = hierarchical_allreduce_s(c, n);
    CHECK(hier < flat);
  }
  // For large messages the time is the slow links' bytes: 2(p-1)/p n against 2(N-1)/N n/P, a
  // ratio of (63/32) / (7/32) = 9 at most; the hierarchical all-reduce's own NVLink phases
  // (4.7 ms of its 22.4 ms at 1 GB) keep it at 7.1 (159 ms against 22.4 ms).
  const double ratio = flat_ring_allreduce_s(c, 1e9) / hierarchical_allreduce_s(c, 1e9);
  CHECK(ratio > 7.0);
  CHECK(ratio < 9.0);
}

TEST_CASE("the flat ring is as fast as its slowest link: equal links make both close") {
  const Cluster same = cluster(2, 4, kFast, kFast);
  // Same bytes per rank, but the hierarchical pays 2(P-1) + 2(N-1) = 8 latencies against 14.
  CHECK(hierarchical_allreduce_s(same, kN) < flat_ring_allreduce_s(same, kN));
  CHECK(flat_ring_allreduce_s(same, kN) == doctest::Approx(ring_allreduce_s(kFast, 8, kN)).epsilon(1e-12));
}

TEST_CASE("a cluster is checked") {
  CHECK_THROWS_AS(predict_node_allreduce(NodeAlgorithm::FlatRing, cluster(0, 4), kN), InputError);
  CHECK_THROWS_WITH_AS(predict_node_allreduce(NodeAlgorithm::Hierarchical, cluster(2, 0), kN),
                       doctest::Contains("ranks per node"), InputError);
  CHECK_THROWS_AS(predict_node_allreduce(NodeAlgorithm::FlatRing, cluster(2, 4, kFast, LinkParams{-1, 0, 0}), kN),
                  InputError);
  CHECK_THROWS_AS(predict_node_allreduce(NodeAlgorithm::FlatRing, cluster(2, 4), -1), InputError);
}

TEST_CASE("Scale data for one node is what it was: the cluster fields change nothing") {
  ScaleQuery plain;
  plain.world_size = 64;
  plain.model = "124M";
  plain.link = find_link_preset("this-machine").link;
  ScaleQuery one_node = plain;
  one_node.nodes = 1;
  one_node.inter_link = kSlow;
  one_node.node_step_algorithm = NodeAlgorithm::FlatRing;
  const ScaleData a = compute_scale_data(plain), b = compute_scale_data(one_node);
  REQUIRE(a.curves.size() == b.curves.size());
  for (size_t i = 0; i < a.curves.size(); ++i) {
    REQUIRE(a.curves[i].points.size() == b.curves[i].points.size());
    for (size_t k = 0; k < a.curves[i].points.size(); ++k) CHECK(a.curves[i].points[k].seconds == b.curves[i].points[k].seconds);
  }
  CHECK(b.node_curves.empty());
  CHECK(a.step.step_s == b.step.step_s);
  CHECK(a.step.exposed_comm_s == b.step.exposed_comm_s);
}

TEST_CASE("Scale data for 2 nodes x 4 ranks: the two node curves and a step bar over the cluster") {
  ScaleQuery q;
  q.world_size = 8;
  q.nodes = 2;
  q.model = "25M";
  q.link = kFast;
  q.inter_link = kSlow;
  q.min_bytes = 1e6;
  q.max_bytes = 8e6;
  q.node_step_algorithm = NodeAlgorithm::Hierarchical;
  const ScaleData d = compute_scale_data(q);
  CHECK(d.curves.empty());  // the single-link algorithms know nothing of nodes
  REQUIRE(d.node_curves.size() == 2);
  CHECK(d.node_curves[0].algorithm == NodeAlgorithm::FlatRing);
  CHECK(d.node_curves[1].algorithm == NodeAlgorithm::Hierarchical);
  REQUIRE(d.node_curves[1].points.size() == 4);  // 1, 2, 4, 8 MB
  CHECK(d.node_curves[0].points[3].seconds == doctest::Approx(14.14e-3).epsilon(1e-12));
  CHECK(d.node_curves[1].points[3].seconds == doctest::Approx(2.152e-3).epsilon(1e-12));
  // The step bar's buckets are timed by the hierarchical model.
  for (const BucketTiming& b : d.step.buckets)
    CHECK(b.end_s - b.start_s == doctest::Approx(hierarchical_allreduce_s(cluster(2, 4), double(b.bytes))).epsilon(1e-9));
  q.node_step_algorithm = NodeAlgorithm::FlatRing;
  CHECK(compute_scale_data(q).step.comm_s > d.step.comm_s);
  q.world_size = 9;  // 9 ranks do not split into 2 equal nodes
  CHECK_THROWS_WITH_AS(compute_scale_data(q), doctest::Contains("nodes"), InputError);
}
