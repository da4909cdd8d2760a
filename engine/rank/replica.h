#pragma once
// One rank's replica of the model as the rank loop (rank/trainer.h) drives it: the MLP with its
// optimizer and its DDP reducer, wherever they live. The loop owns everything the backends
// share: the seed's draws, the sampler, the step and epoch structure, faults, uneven inputs with
// Join, stops, checkpoints and the events; a replica owns the memory the model lives in.
//
//   HostReplica (rank/host_replica.h)   nn::Mlp and ddp::DistributedDataParallel, on the CPU
//   CudaReplica (cuda/cuda_trainer.cpp) CudaMlp and CudaDistributedDataParallel, on this rank's
//                                       GPU, in the GPU plugin
//
// Both reducers run their collectives through ddp::CollectiveRunner on spans of their own
// memory, so the check, the flight recorder and the events are the same wherever the model is.
// The loop makes a few calls per step; nothing here is called per element.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/ddp/collective_runner.h"
#include "engine/dist/process_group.h"
#include "engine/job/job_config.h"
#include "engine/rank/trainer.h"

namespace ringlab {

namespace data { struct TensorDataset; }
namespace nn { class Mlp; }

class Replica {
 public:
  virtual ~Replica() = default;

  // Sums host values across the ranks with the buckets' algorithm, check and events (the seed's
  // demo, Join's count of ranks with data); a GPU replica stages them through device memory.
  virtual void allreduce_host(std::span<float> values, const std::string& label) = 0;
  virtual void set_step(int64_t step) = 0;
  // A failure lab's fault for the next synchronised backward.
  virtual void inject(ddp::CollectiveFault fault) = 0;

  // This epoch's sample order, before its first batch.
  virtual void start_epoch(std::span<const int64_t> shard) = 0;
  virtual void zero_grad() = 0;
  // Forward and loss on a batch: its sample indices, which start at `offset` in the epoch's shard.
  virtual void forward(std::span<const int64_t> batch, int64_t offset) = 0;
  // Backward from that loss; with `sync` the gradients are averaged across ranks (no_sync
  // otherwise). Returns when every bucket's all-reduce is done.
  virtual void backward(bool sync) = 0;
  // Join: this rank has no batch and all-reduces zero gradients with the others' buckets.
  virtual void shadow_backward() = 0;
  virtual void optimizer_step() = 0;
  // The last forward's loss (on a GPU, the step's one wait for the device).
  virtual float loss() = 0;

  // Rank `root`'s parameters everywhere (Join's final model sync).
  virtual void broadcast_parameters(int root) = 0;
  virtual std::vector<float> parameters() = 0;
  virtual std::vector<float> momentum() = 0;
  // The whole dataset's MSE, as the seed computes it after an epoch.
  virtual double dataset_mse() = 0;
};

// What a replica is made from, the same for every kind. The loop draws the data and the initial
// weights from the seed exactly as PyTorch would (on the host), and restores a resumed state's
// parameters into `model`; the replica takes the weights from there.
struct ReplicaStart {
  const JobConfig& job;
  ProcessGroup& group;
  const data::TensorDataset& dataset;
  nn::Mlp& model;
  std::span<const float> momentum;  // a resumed optimizer's momentum; empty for none
  ddp::DdpOptions ddp;
};
using MakeReplica = std::function<std::unique_ptr<Replica>(const ReplicaStart&)>;

// The rank loop over any replica: train_rank (rank/trainer.h) with `make` choosing where the
// model lives.
RankOutcome train_rank_with(const MakeReplica& make, const JobConfig& job, ProcessGroup& group, EventSink& events,
                            const TrainerHooks& hooks = {}, const TrainingState* resume = nullptr);

}  // namespace ringlab
