#pragma once
// The replica on the CPU: nn::Mlp, nn::Sgd and ddp::DistributedDataParallel (see rank/replica.h).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/ddp/distributed_data_parallel.h"
#include "engine/nn/mlp.h"
#include "engine/nn/sgd.h"
#include "engine/rank/replica.h"

namespace ringlab {

class HostReplica final : public Replica {
 public:
  // Trains `start.model` itself; the reducer broadcasts rank 0's weights.
  explicit HostReplica(const ReplicaStart& start);

  void allreduce_host(std::span<float> values, const std::string& label) override { ddp_.allreduce(values, label); }
  void set_step(int64_t step) override { ddp_.set_step(step); }
  void inject(ddp::CollectiveFault fault) override { ddp_.inject(fault); }

  void start_epoch(std::span<const int64_t> /*shard*/) override {}  // batches are gathered per step
  void zero_grad() override { model_.zero_grad(); }
  void forward(std::span<const int64_t> batch, int64_t offset) override;
  void backward(bool sync) override;
  void shadow_backward() override;
  void optimizer_step() override { optimizer_.step(model_.parameters(), model_.gradients()); }
  float loss() override { return loss_; }

  void broadcast_parameters(int root) override { group_.broadcast(model_.parameters(), root); }
  std::vector<float> parameters() override { return {model_.parameters().begin(), model_.parameters().end()}; }
  std::vector<float> momentum() override { return optimizer_.momentum_buffer(); }
  double dataset_mse() override;

 private:
  const JobConfig& job_;
  ProcessGroup& group_;
  const data::TensorDataset& dataset_;
  nn::Mlp& model_;
  nn::Sgd optimizer_;
  ddp::DistributedDataParallel ddp_;
  // A step's batch, prediction gradient and loss: reused, so a step allocates nothing.
  std::vector<float> bx_, by_, grad_pred_;
  float loss_ = 0.0f;
};

std::unique_ptr<Replica> make_host_replica(const ReplicaStart& start);

}  // namespace ringlab
