#include "engine/cuda/cuda_trainer.h"

#include <chrono>
#include <memory>

#include "engine/cuda/cuda_check.h"
#include "engine/cuda/cuda_ddp.h"
#include "engine/cuda/cuda_mlp.h"
#include "engine/cuda/device_buffer.h"
#include "engine/data/tensor_dataset.h"
#include "engine/nn/mlp.h"
#include "engine/rank/replica.h"

// The rank loop is train_rank's own (rank/replica.h); what changes is where the work runs. The
// host only enqueues: gathering the batch, forward, loss, backward, the all-reduces and the
// optimizer step all go on the group's stream, and the host waits once per step, for the loss
// the report prints. Forward, Backward and OptimizerStep events therefore mark when the host
// enqueued the work; StepEnd, which follows the loss read-back, marks when the GPU had got that far.

namespace ringlab {
namespace {

class CudaReplica final : public Replica {
 public:
  CudaReplica(const ReplicaStart& start, NcclProcessGroup& group)
      : group_(group),
        model_(start.job.features, start.job.hidden, 1, group.stream()),
        lr_(static_cast<float>(start.job.lr)),
        momentum_(static_cast<float>(start.job.momentum)),
        weight_decay_(static_cast<float>(start.job.weight_decay)),
        ddp_(upload(start), group, start.ddp) {}

  // Host values through a device buffer on the group's stream: NCCL's ring moves device memory.
  void allreduce_host(std::span<float> values, const std::string& label) override {
    staging_.reserve_bytes(values.size_bytes());
    const std::span<float> device{staging_.floats(), values.size()};
    RINGLAB_CUDA_CHECK(cudaMemcpyAsync(device.data(), values.data(), values.size_bytes(), cudaMemcpyHostToDevice,
                                       group_.stream()));
    ddp_.allreduce(device, label);
    group_.copy_to_host(device, values.data());  // waits for the stream, with the timeout
  }
  void set_step(int64_t step) override { ddp_.set_step(step); }
  void inject(ddp::CollectiveFault fault) override { ddp_.inject(fault); }

  // Once per epoch; each step gathers its rows on the GPU.
  void start_epoch(std::span<const int64_t> shard) override { model_.upload_epoch_indices(shard); }
  void zero_grad() override { model_.zero_grad(); }
  void forward(std::span<const int64_t> batch, int64_t offset) override {
    model_.forward_batch(offset, static_cast<int64_t>(batch.size()));
  }
  void backward(bool sync) override { ddp_.backward_batch(sync); }
  void shadow_backward() override { ddp_.shadow_backward(); }
  void optimizer_step() override { model_.sgd_step(lr_, momentum_, weight_decay_); }
  float loss() override { return model_.read_loss(); }

  void broadcast_parameters(int root) override { group_.broadcast(model_.device_parameters(), root); }
  std::vector<float> parameters() override {
    std::vector<float> host(model_.num_parameters());
    model_.download_parameters(host);
    return host;
  }
  std::vector<float> momentum() override { return model_.download_momentum_buffer(); }
  double dataset_mse() override { return model_.dataset_mse(); }

 private:
  // The model's starting state and data, on the device before the reducer broadcasts.
  cuda::CudaMlp& upload(const ReplicaStart& start) {
    model_.set_timeout(start.ddp.timeout);
    model_.upload_parameters(start.model.parameters());
    if (!start.momentum.empty()) model_.upload_momentum_buffer(start.momentum);
    model_.upload_dataset(start.dataset.x, start.dataset.y, start.dataset.size);
    return model_;
  }

  NcclProcessGroup& group_;
  cuda::CudaMlp model_;
  const float lr_, momentum_, weight_decay_;
  cuda::CudaDistributedDataParallel ddp_;
  cuda::DeviceBuffer staging_;
};

}  // namespace

RankOutcome train_rank_cuda(const JobConfig& job, NcclProcessGroup& group, EventSink& events,
                            const TrainerHooks& hooks, const TrainingState* resume) {
  const MakeReplica on_gpu = [&group](const ReplicaStart& start) -> std::unique_ptr<Replica> {
    return std::make_unique<CudaReplica>(start, group);
  };
  return train_rank_with(on_gpu, job, group, events, hooks, resume);
}

}  // namespace ringlab
