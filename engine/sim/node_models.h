#pragma once
// All-reduce over several nodes (hosts): N nodes of P ranks each, p = N P ranks in all, numbered
// node by node. Two kinds of link, each with its own latency and bandwidth (cost_models.h's
// alpha + m beta per message):
//
//   intra  between two ranks of one node (NVLink, shared memory): fast
//   inter  between ranks of different nodes (Ethernet, InfiniBand): slow, one NIC per rank
//
// The reduction runs on the ranks, not on the wire, so both models take gamma (seconds per byte
// added) from the intra link: it says what the node's devices add per second.
//
// Two schedules of the same sum:
//
//   Flat ring: one ring over all p ranks, blind to the nodes. Each of its 2(p-1) steps moves
//   n/p bytes over every link at once, and a step ends when its slowest message has arrived,
//   so with N > 1 every step waits for an inter-node link:
//     T = 2(p-1) max_l(alpha_l + n/p beta_l) + (p-1)/p n gamma
//   The N links that join nodes each carry 2(p-1)/p n bytes, nearly twice the buffer.
//
//   Hierarchical (two-level): reduce-scatter within each node (P-1 steps over the intra links),
//   then the P ranks with the same local rank, one per node, all-reduce their n/P-byte shard
//   across the nodes (a ring of N over the inter links; the P such rings run at once, each on
//   its own NIC), then all-gather within each node. The intra phases are one intra-node ring
//   all-reduce split in two, so
//     T = [2(P-1) alpha_intra + 2(P-1)/P n beta_intra + (P-1)/P n gamma]
//       + [2(N-1) alpha_inter + 2(N-1)/N (n/P) beta_inter + (N-1)/N (n/P) gamma]
//       = ring(intra, P, n) + ring(inter, N, n/P)
//   An inter-node link now carries 2(N-1)/N n/P bytes: P times less than in the flat ring.
//   With N = 1 it is the ring over one node's links, exactly; with P = 1, a ring over the network.
//
// Sources: the alpha-beta(-gamma) cost of the ring, Thakur, Rabenseifner & Gropp, "Optimization
// of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005; the two-level
// reduce-scatter / all-reduce / all-gather over nodes, NCCL's documentation (its rings and trees
// cross nodes once per node, NCCL_ALGO, "Massively Scale Your Deep Learning Training with NCCL
// 2.4", 2019), Horovod's hierarchical all-reduce (HOROVOD_HIERARCHICAL_ALLREDUCE; Sergeev &
// Del Balso, arXiv:1802.05799, 2018) and Jia et al., "Highly Scalable Deep Learning Training
// System with Mixed-Precision", arXiv:1807.11205, 2018 (hierarchical all-reduce on 1,024 GPUs).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/sim/cost_models.h"

namespace ringlab::sim {

struct Cluster {
  int64_t nodes = 1;
  int64_t ranks_per_node = 1;
  LinkParams intra;  // between two ranks of one node; its gamma is the ranks' reduction cost
  LinkParams inter;  // between ranks of different nodes, one NIC per rank
  int64_t world_size() const { return nodes * ranks_per_node; }
};

enum class NodeAlgorithm { FlatRing, Hierarchical };

const char* to_string(NodeAlgorithm algorithm);  // "flat-ring", "hierarchical"
const std::vector<NodeAlgorithm>& all_node_algorithms();

// Throws InputError for fewer than one node or one rank per node, or a bad link.
void validate_cluster(const Cluster& cluster);

// The models (seconds); a cluster of one rank takes 0 s.
double flat_ring_allreduce_s(const Cluster& cluster, double bytes);
double hierarchical_allreduce_s(const Cluster& cluster, double bytes);
// Checks the cluster and the size, then picks the model.
double predict_node_allreduce(NodeAlgorithm algorithm, const Cluster& cluster, double bytes);

// Bytes one link between nodes carries in one all-reduce of `bytes` (0 on one node):
// 2(p-1)/p n for the flat ring, 2(N-1)/N n/P for the hierarchical all-reduce.
double inter_node_bytes_per_link(NodeAlgorithm algorithm, const Cluster& cluster, double bytes);

// Time and bandwidth against size, as allreduce_curve (busbw at the cluster's world size).
std::vector<CurvePoint> node_allreduce_curve(NodeAlgorithm algorithm, const Cluster& cluster, double min_bytes,
                                             double max_bytes, double factor = 2.0);

}  // namespace ringlab::sim
