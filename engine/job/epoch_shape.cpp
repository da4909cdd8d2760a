#include "engine/job/epoch_shape.h"

#include <algorithm>

#include "engine/data/data_loader.h"
#include "engine/data/distributed_sampler.h"

namespace ringlab {

EpochShape epoch_shape(const JobConfig& job, int world_size) {
  const data::DistributedSampler sampler(
      {job.samples, std::max(world_size, 1), 0, job.shuffle, job.seed, job.drop_last});
  const int64_t per_rank = sampler.num_samples();
  return {per_rank, data::batches_per_epoch(per_rank, std::max<int64_t>(job.batch_size, 1))};
}

}  // namespace ringlab
