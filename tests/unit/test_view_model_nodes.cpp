// Which ranks share a node, as the ring and timeline views draw it: node groups from the job's
// ranks_per_node, the ring links that cross the network, and the job a run's workers announced.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/view_model/node_layout.h"
#include "tests/support/run_events.h"

using namespace ringlab;
using namespace ringlab::view_model;

namespace {

JobConfig job_of(int world, std::vector<int> ranks_per_node) {
  JobConfig job;
  job.world_size = world;
  job.ranks_per_node = std::move(ranks_per_node);
  return job;
}

}  // namespace

TEST_CASE("one node: one group, no ring link crosses the network") {
  const NodeLayout layout = node_layout(job_of(4, {}), 4);
  REQUIRE(layout.nodes.size() == 1);
  CHECK(layout.nodes[0].first_rank == 0);
  CHECK(layout.nodes[0].ranks == 4);
  CHECK_FALSE(layout.multi_node());
  for (int r = 0; r < 4; ++r) CHECK_FALSE(layout.ring_link_crosses(r));
  CHECK(layout.crossing_ring_links() == 0);
}

TEST_CASE("two nodes of two: ranks 0-1 on node 0, 2-3 on node 1; links 1->2 and 3->0 cross") {
  const NodeLayout layout = node_layout(job_of(4, {2, 2}), 4);
  REQUIRE(layout.nodes.size() == 2);
  CHECK(layout.multi_node());
  CHECK(layout.nodes[1].first_rank == 2);
  CHECK(layout.nodes[1].last_rank() == 3);
  CHECK(layout.node_of(0) == 0);
  CHECK(layout.node_of(1) == 0);
  CHECK(layout.node_of(2) == 1);
  CHECK(layout.node_of(3) == 1);
  CHECK_FALSE(layout.ring_link_crosses(0));
  CHECK(layout.ring_link_crosses(1));
  CHECK_FALSE(layout.ring_link_crosses(2));
  CHECK(layout.ring_link_crosses(3));  // the ring closes from the last node back to node 0
  CHECK(layout.crossing_ring_links() == 2);
}

TEST_CASE("uneven nodes: a ring over N nodes crosses the network on N links") {
  const NodeLayout layout = node_layout(job_of(6, {3, 1, 2}), 6);
  REQUIRE(layout.nodes.size() == 3);
  CHECK(layout.node_of(3) == 1);
  CHECK(layout.node_of(4) == 2);
  CHECK(layout.crossing_ring_links() == 3);
  CHECK(layout.ring_link_crosses(2));
  CHECK(layout.ring_link_crosses(3));
  CHECK(layout.ring_link_crosses(5));
}

TEST_CASE("a split that no longer adds up to the world drawn (the world was changed) is one node") {
  const NodeLayout layout = node_layout(job_of(4, {2, 2}), 6);
  CHECK(layout.nodes.size() == 1);
  CHECK(layout.nodes[0].ranks == 6);
  CHECK(layout.crossing_ring_links() == 0);
}

TEST_CASE("a run's generation takes the node split its workers announced; before that, the planned job's") {
  RunModel model;
  const JobConfig planned = job_of(4, {2, 2});
  CHECK(node_layout_of(model, 0, 4, planned).multi_node());  // nothing announced yet: the planned job
  const JobConfig ran = job_of(4, {1, 3});
  for (int r = 0; r < 4; ++r) model.consume(test::run_begin_event(r, ran));
  const int generation = model.current_generation()->index;
  const NodeLayout layout = node_layout_of(model, generation, 4, planned);
  REQUIRE(layout.nodes.size() == 2);
  CHECK(layout.nodes[0].ranks == 1);
  CHECK(layout.nodes[1].ranks == 3);
}
