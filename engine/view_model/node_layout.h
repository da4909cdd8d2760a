#pragma once
// Which ranks share a node (host), for the views that draw node boundaries: the ring's node
// bands and the ring links that cross the network between nodes, the timeline's lane groups.
//
// Ranks are numbered node by node (torchrun's RANK = node_rank * nproc_per_node + local_rank),
// so a node's ranks are neighbours on the ring, and a ring over N > 1 nodes crosses the network
// on exactly N of its links: the last rank of each node sends to the first rank of the next.
#include <vector>

#include "engine/job/job_config.h"
#include "engine/view_model/run_model.h"

namespace ringlab::view_model {

struct NodeGroup {
  int node = 0;
  int first_rank = 0;
  int ranks = 0;
  int last_rank() const { return first_rank + ranks - 1; }
};

struct NodeLayout {
  int world_size = 0;
  std::vector<NodeGroup> nodes;  // in rank order; one group when every rank is on one node
  bool multi_node() const { return nodes.size() > 1; }
  int node_of(int rank) const;   // 0 for a rank outside the world
  // The ring's link from `src` to src + 1 (mod the world) joins two nodes: its bytes go over
  // the network. Never on one node.
  bool ring_link_crosses(int src) const;
  int crossing_ring_links() const;
};

// `world_size` ranks as `job` places them. A job whose node split does not add up to
// `world_size` (the world was changed after the scenario set it) is drawn as one node.
NodeLayout node_layout(const JobConfig& job, int world_size);

// The node layout of generation `generation` of a run (its workers' job), or, before its
// workers have said what they run, of `planned` (the job Start launches).
NodeLayout node_layout_of(const RunModel& model, int generation, int world_size, const JobConfig& planned);

}  // namespace ringlab::view_model
