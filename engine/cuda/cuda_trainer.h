#pragma once
// What one rank does on the NCCL backend: train_rank (engine/rank/trainer.h) with the model,
// its data and its gradients on this rank's GPU (a Replica, rank/replica.h). The loop is the CPU
// run's own, so the same seed gives the same data, initial weights and sampler order, the same
// events are reported (faults, uneven inputs with Join, the collective check and the flight
// recorder included), and the outcome has the same shape: `ringlab run --backend nccl` prints
// the report the CPU backends print.
#include "engine/cuda/nccl/nccl_process_group.h"
#include "engine/rank/trainer.h"

namespace ringlab {

RankOutcome train_rank_cuda(const JobConfig& job, NcclProcessGroup& group, EventSink& events,
                            const TrainerHooks& hooks = {}, const TrainingState* resume = nullptr);

}  // namespace ringlab
