#include "engine/sim/node_models.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"

namespace ringlab::sim {

namespace {

// The reduction happens on the ranks: both models add with the node's gamma.
LinkParams with_ranks_gamma(LinkParams link, const Cluster& cluster) {
  link.gamma_s_per_byte = cluster.intra.gamma_s_per_byte;
  return link;
}

double message_s(const LinkParams& link, double bytes) { return link.alpha_s + bytes * link.beta_s_per_byte; }

}  // namespace

const char* to_string(NodeAlgorithm algorithm) {
  return algorithm == NodeAlgorithm::FlatRing ? "flat-ring" : "hierarchical";
}

const std::vector<NodeAlgorithm>& all_node_algorithms() {
  static const std::vector<NodeAlgorithm> all = {NodeAlgorithm::FlatRing, NodeAlgorithm::Hierarchical};
  return all;
}

void validate_cluster(const Cluster& cluster) {
  if (cluster.nodes < 1) throw InputError(fmt::format("nodes must be at least 1; got {}", cluster.nodes));
  if (cluster.ranks_per_node < 1)
    throw InputError(fmt::format("ranks per node must be at least 1; got {}", cluster.ranks_per_node));
  validate_link(cluster.intra);
  validate_link(cluster.inter);
}

// T = 2(p-1) max(alpha_intra + m beta_intra, alpha_inter + m beta_inter) + (p-1) m gamma, m = n/p.
// One node has no inter-node link: the plain ring over the intra link, to the last bit.
double flat_ring_allreduce_s(const Cluster& cluster, double bytes) {
  const int64_t p = cluster.world_size();
  if (cluster.nodes == 1) return ring_allreduce_s(cluster.intra, p, bytes);
  const double m = bytes / static_cast<double>(p);
  // A node of one rank has no intra-node link in the ring: every link joins two nodes.
  const double slowest = cluster.ranks_per_node == 1 ? message_s(cluster.inter, m)
                                                     : std::max(message_s(cluster.intra, m), message_s(cluster.inter, m));
  const double steps = static_cast<double>(p - 1);
  return 2 * steps * slowest + steps * m * cluster.intra.gamma_s_per_byte;
}

// T = ring(intra, P, n) + ring(inter, N, n/P): reduce-scatter and all-gather within the node
// around an all-reduce of each rank's n/P shard across the nodes.
double hierarchical_allreduce_s(const Cluster& cluster, double bytes) {
  const double shard = bytes / static_cast<double>(cluster.ranks_per_node);
  return ring_allreduce_s(cluster.intra, cluster.ranks_per_node, bytes) +
         ring_allreduce_s(with_ranks_gamma(cluster.inter, cluster), cluster.nodes, shard);
}

double predict_node_allreduce(NodeAlgorithm algorithm, const Cluster& cluster, double bytes) {
  validate_cluster(cluster);
  if (!std::isfinite(bytes) || bytes < 0)
    throw InputError(fmt::format("message size must be a finite number of bytes >= 0; got {}", bytes));
  return algorithm == NodeAlgorithm::FlatRing ? flat_ring_allreduce_s(cluster, bytes)
                                              : hierarchical_allreduce_s(cluster, bytes);
}

double inter_node_bytes_per_link(NodeAlgorithm algorithm, const Cluster& cluster, double bytes) {
  if (cluster.nodes < 2) return 0.0;
  const double p = static_cast<double>(cluster.world_size()), n = static_cast<double>(cluster.nodes);
  if (algorithm == NodeAlgorithm::FlatRing) return 2 * (p - 1) / p * bytes;
  return 2 * (n - 1) / n * bytes / static_cast<double>(cluster.ranks_per_node);
}

std::vector<CurvePoint> node_allreduce_curve(NodeAlgorithm algorithm, const Cluster& cluster, double min_bytes,
                                             double max_bytes, double factor) {
  std::vector<CurvePoint> curve;
  for (double bytes : curve_sizes(min_bytes, max_bytes, factor))
    curve.push_back(curve_point(bytes, predict_node_allreduce(algorithm, cluster, bytes), cluster.world_size()));
  return curve;
}

}  // namespace ringlab::sim
