#pragma once
// The DDP options a job asks for: the one rank loop (trainer.cpp) hands them to whichever
// replica it runs, the CPU's (host_replica.cpp) or the GPU's (cuda/cuda_trainer.cpp).
#include <chrono>
#include <cstdint>

#include "engine/ddp/distributed_data_parallel.h"
#include "engine/dist/ring_allreduce.h"
#include "engine/job/job_config.h"
#include "engine/rank/trainer.h"

namespace ringlab {

inline ddp::DdpOptions ddp_options_for(const JobConfig& job, EventSink& events, const TrainerHooks& hooks) {
  ddp::DdpOptions options;
  options.algorithm = job.algorithm;
  options.bucket_limits = job.bucket_limits();
  // A large bucket's ring is cut as the backend's tuning says (the bench's); a bucket whose
  // chunks fit in one segment, as the seed's does, goes in whole chunks either way.
  const RingTuning tuned = ring_tuning_for(job.backend);
  options.segment_elems = tuned.segment_elems;
  options.pipeline_depth = tuned.pipeline_depth;
  options.timeout = std::chrono::milliseconds(static_cast<int64_t>(job.timeout_s * 1000));
  options.events = &events;
  options.before_ring_step = hooks.before_ring_step;
  options.check_collectives = job.check_collectives;
  options.recorder = hooks.recorder;
  return options;
}

}  // namespace ringlab
