#pragma once
// What the app's Scale view draws, computed without any UI so it can be tested: each
// all-reduce algorithm's time and bus bandwidth over a range of message sizes at one world size,
// and one DDP training step split into compute and the communication backward could not hide.
// Over several nodes the curves are the flat ring and the hierarchical all-reduce of
// node_models.h, each over the node's link and the link between nodes.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/sim/cost_models.h"
#include "engine/sim/ddp_step_model.h"
#include "engine/sim/node_models.h"

namespace ringlab::sim {

// Everything the Scale view's controls choose. Equal queries give equal answers, so the view
// keeps the last answer and recomputes only when a control moved.
struct ScaleQuery {
  int64_t world_size = 64;                     // every rank, on every node
  std::string model = "124M";                  // a model_presets.h name
  LinkParams link;                             // between the ranks of a node
  // Nodes > 1: world_size / nodes ranks on each (it must divide), joined by `inter_link`; the
  // curves and the step bar are then the cluster's (one node: these fields change nothing).
  int64_t nodes = 1;
  LinkParams inter_link;
  NodeAlgorithm node_step_algorithm = NodeAlgorithm::Hierarchical;  // the step bar's, over nodes
  Algorithm step_algorithm = Algorithm::Ring;  // the all-reduce DDP uses in the step bar
  double min_bytes = 4;                        // the curves' size range, doubling each point
  double max_bytes = double(int64_t{1} << 30);
  // > 1: also the ring's curve at this world size (the live run's), to set its points against.
  int64_t reference_world_size = 0;
};
bool operator==(const ScaleQuery& a, const ScaleQuery& b);

struct AlgorithmCurve {
  Algorithm algorithm = Algorithm::Ring;
  std::vector<CurvePoint> points;  // ascending sizes
};

// One DDP step at the query's world size, as the bar draws it.
struct StepBar {
  ComputeTimes compute;       // forward, backward, optimizer of one rank
  double compute_s = 0;
  double comm_s = 0;          // every bucket's all-reduce, end to end
  double hidden_comm_s = 0;   // the part that ran while backward was still computing
  double exposed_comm_s = 0;  // the part the step waited for: comm_s - hidden_comm_s
  double step_s = 0;
  double efficiency = 1;      // compute_s / step_s: 1 is perfect weak scaling
  int64_t gradient_bytes = 0;
  int64_t largest_bucket_bytes = 0;
  std::vector<BucketTiming> buckets;  // when each bucket's all-reduce ran, for the link row
};

struct NodeCurve {
  NodeAlgorithm algorithm = NodeAlgorithm::FlatRing;
  std::vector<CurvePoint> points;  // ascending sizes
};

struct ScaleData {
  std::vector<AlgorithmCurve> curves;  // one node: one per algorithm, in all_algorithms() order
  std::vector<NodeCurve> node_curves;  // several nodes: in all_node_algorithms() order
  std::vector<CurvePoint> reference;   // the ring at reference_world_size; empty when not asked
  StepBar step;
};

// The cluster a query describes (one node: every rank on `link`).
Cluster cluster_of(const ScaleQuery& query);

// Throws InputError for a world size below 1, an unknown model, a bad link or size range, or
// a world that does not split into `nodes` equal nodes.
ScaleData compute_scale_data(const ScaleQuery& query);

}  // namespace ringlab::sim
