#pragma once
// What a run needs of this machine, estimated before any process starts, against what the
// machine and this process allow: memory (MemAvailable), the size a checkpoint may have, file
// descriptors (RLIMIT_NOFILE) and processes and threads (RLIMIT_NPROC). A run that cannot fit
// is refused at once with the estimate in the message, instead of failing after minutes: killed
// by the kernel once memory runs out, or waiting for a rank whose store connection was never
// accepted because the controller had no descriptor left.
#include <cstdint>
#include <string>

#include "engine/job/job_config.h"

namespace ringlab {

struct RunFootprint {
  uint64_t parameters = 0;
  uint64_t worker_bytes = 0;        // the peak of one CPU worker: data, sampler, model, activations
  uint64_t controller_bytes = 0;
  uint64_t total_bytes = 0;         // this node's workers and the controller
  std::string worker_breakdown;     // "the dataset 1.2 GB, the sampler's permutation 0.4 GB, ..."
  uint64_t checkpoint_bytes = 0;    // a checkpoint of the model (parameters and momentum)
  int64_t controller_descriptors = 0;
  int64_t worker_descriptors = 0;   // the busiest worker's
  int64_t threads = 0;              // processes and threads the run adds for this user
};

struct RunShape {
  int local_ranks = 1;       // ranks started on this node
  bool checkpoints = false;  // restarts or live changes: the model must fit in a checkpoint
  bool mpirun = false;
};

RunFootprint estimate_footprint(const JobConfig& job, const RunShape& shape);

// "2.3 GB", "512 MB": for messages.
std::string describe_bytes(uint64_t bytes);

// Throws InputError when the job cannot fit in this machine's available memory, or its model in
// a checkpoint that the run needs; Error when the descriptors or threads it needs are beyond this
// process's limits, after raising the soft limits to the hard ones where that is enough (the
// workers inherit them). RINGLAB_SKIP_LIMIT_CHECK=1 skips the descriptor and thread checks
// (tests use it to reach what happens when a limit is hit during the run).
void check_run_fits(const JobConfig& job, const RunShape& shape);

}  // namespace ringlab
