#pragma once
// How one epoch of a job divides among its ranks, as torch's DistributedSampler and DataLoader
// divide it: the sampler pads the shuffled order by repeating its start (or, with drop_last,
// cuts its tail) until every rank gets the same number of indices, and each rank's loader
// batches its share, the last batch short. Every rank takes the same number of steps.
#include <cstdint>

#include "engine/job/job_config.h"

namespace ringlab {

struct EpochShape {
  int64_t samples_per_rank = 0;  // len(DistributedSampler)
  int64_t steps = 0;             // batches per epoch: each rank's training steps
};

// At `world_size` ranks (at least 1) and the job's batch size (at least 1).
EpochShape epoch_shape(const JobConfig& job, int world_size);
inline EpochShape epoch_shape(const JobConfig& job) { return epoch_shape(job, job.world_size); }

}  // namespace ringlab
