#pragma once
// Replaying a recorded run under another link: "this run, on NVLink".
//
// Every rank's events become nodes of a dependency graph, and the graph is re-timed:
// - compute (Forward, Backward, OptimizerStep) keeps its measured duration;
// - each chunk transfer is re-timed as alpha + bytes * beta of the new link (+ bytes * gamma for
//   a reduce-scatter chunk, which ringlab records as arrived once it has been added in), and
//   moves only once the sender has posted it (the sender's previous ring step has arrived, plus
//   the sender's measured local work) and the receiver is ready for it (its own previous ring
//   step has arrived, plus its local work); one link carries one chunk at a time;
// - a collective starts once its bucket is ready and the previous collective on the rank is done;
// - compute that waited on communication (the optimizer waits for every bucket) starts once
//   that communication is done; a compute span inside which collectives end (ringlab's Backward
//   span holds DDP's final wait and the last bucket's all-reduce) counts as compute only up to
//   its last BucketReady, then as waiting for those collectives.
// Measured gaps that are not waiting (Python-free overheads, data loading, the time between a
// dependency's end and the next start) are kept as they were. Waiting is what gets recomputed.
//
// Chunk events are read as ringlab's ring writes them (engine/dist/ring_allreduce.cpp): on the
// receiving rank, t_begin = when it had posted its receive and its own send of that ring step,
// t_end = when the chunk had arrived (and been added in).
//
// Limits: stalls inside a transfer (a descheduled process on a loaded machine) are not a
// property of the link and are not reproduced: a replay under the recorded link then comes out
// faster than the recording. A collective recorded without
// its chunks (the event store drops old chunk detail; "native" collectives have none) is re-timed
// with the cost model of ReplayOptions::model. Without BucketReady events a collective cannot
// start earlier than it did, relative to the compute that issued it.
#include <cstdint>
#include <vector>

#include "engine/events/event.h"
#include "engine/sim/cost_models.h"

namespace ringlab::sim {

struct ReplayOptions {
  int64_t world_size = 0;              // 0: from RunBegin's value, else the highest rank + 1
  Algorithm model = Algorithm::Ring;   // for collectives recorded without chunk transfers
  AlgorithmOptions model_options;
};

struct RankReplay {
  int rank = 0;
  std::vector<int64_t> steps;            // training steps found (StepBegin/StepEnd pairs)
  std::vector<double> measured_step_s;   // per step, as recorded
  std::vector<double> replayed_step_s;   // per step, under the new link
  double measured_span_s = 0;            // first event to last event of this rank
  double replayed_span_s = 0;
  double measured_comm_s = 0;            // sum of this rank's collective durations
  double replayed_comm_s = 0;
  double mean_measured_step_s() const;
  double mean_replayed_step_s() const;
};

struct ReplayResult {
  std::vector<RankReplay> ranks;  // by rank
  double measured_span_s = 0;     // whole run: first event to last, over all ranks
  double replayed_span_s = 0;
  int64_t transfers = 0;               // chunk transfers re-timed
  int64_t modelled_collectives = 0;    // collectives re-timed with the cost model
  int64_t world_size = 0;
};

// Throws InputError when the events hold nothing to replay or their dependencies form a cycle
// (timestamps that contradict each other).
ReplayResult replay_trace(const std::vector<Event>& events, const LinkParams& link,
                          const ReplayOptions& options = {});

}  // namespace ringlab::sim
