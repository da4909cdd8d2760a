#include "engine/view_model/node_layout.h"

#include <algorithm>
#include <numeric>

namespace ringlab::view_model {

int NodeLayout::node_of(int rank) const {
  for (const NodeGroup& g : nodes)
    if (rank >= g.first_rank && rank <= g.last_rank()) return g.node;
  return 0;
}

bool NodeLayout::ring_link_crosses(int src) const {
  if (!multi_node() || world_size < 2) return false;
  return node_of(src) != node_of((src + 1) % world_size);
}

int NodeLayout::crossing_ring_links() const {
  int count = 0;
  for (int r = 0; r < world_size; ++r) count += ring_link_crosses(r) ? 1 : 0;
  return count;
}

NodeLayout node_layout(const JobConfig& job, int world_size) {
  NodeLayout layout;
  layout.world_size = world_size;
  const std::vector<int>& split = job.ranks_per_node;
  const bool fits = !split.empty() && std::accumulate(split.begin(), split.end(), 0) == world_size &&
                    std::all_of(split.begin(), split.end(), [](int n) { return n >= 1; });
  if (!fits) {
    layout.nodes.push_back({0, 0, world_size});
    return layout;
  }
  int first = 0;
  for (size_t node = 0; node < split.size(); ++node) {
    layout.nodes.push_back({static_cast<int>(node), first, split[node]});
    first += split[node];
  }
  return layout;
}

NodeLayout node_layout_of(const RunModel& model, int generation, int world_size, const JobConfig& planned) {
  for (const Generation& g : model.generations())
    if (g.index == generation && g.has_job) return node_layout(g.job, world_size);
  return node_layout(planned, world_size);
}

}  // namespace ringlab::view_model
