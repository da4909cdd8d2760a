#pragma once
// The dependency graph trace replay re-times (see trace_replay.h for the rules). Built once from
// the events; evaluated for any link.
#include <cstdint>
#include <map>
#include <vector>

#include "engine/events/event.h"

namespace ringlab::sim {

enum class ReplayNodeKind { Compute, Instant, BucketReady, CollectiveBegin, CollectiveEnd, Transfer };

// Which moment of a dependency a node waits for.
enum class ReplayAnchor {
  Start,     // its start
  End,       // its end
  WireFree,  // a transfer's start plus its bytes * beta: the link is free for the next chunk
};

struct ReplayDep {
  int node = 0;
  ReplayAnchor anchor = ReplayAnchor::End;
  double offset_s = 0;  // measured work between the dependency and this node, kept as it was
};

struct ReplayNode {
  ReplayNodeKind kind = ReplayNodeKind::Instant;
  int rank = 0;
  double t0 = 0, t1 = 0;  // measured start and end, seconds from the first event of the run
  double bytes = 0;       // transfers and collectives
  bool modelled = false;  // a collective end without chunk detail: re-timed with a cost model
  bool reduces = false;   // a reduce-scatter chunk: arrived once added in (bytes * gamma more)
  std::vector<ReplayDep> deps;  // none: the node starts at its measured time
};

struct ReplayStepMarks {
  int rank = 0;
  int64_t step = 0;
  int begin_node = -1;
  int end_node = -1;
};

struct ReplayCollective {
  int rank = 0;
  int begin_node = -1;
  int end_node = -1;
};

struct ReplayGraph {
  std::vector<ReplayNode> nodes;
  std::vector<ReplayStepMarks> steps;
  std::vector<ReplayCollective> collectives;
  std::map<int, std::vector<int>> nodes_of_rank;
  int64_t world_size = 0;  // from RunBegin, else highest rank + 1
  int64_t transfers = 0;
};

// Throws InputError when no event can be replayed.
ReplayGraph build_replay_graph(const std::vector<Event>& events);

}  // namespace ringlab::sim
