#include "engine/rank/host_replica.h"

#include "engine/data/tensor_dataset.h"
#include "engine/nn/mse.h"

namespace ringlab {

HostReplica::HostReplica(const ReplicaStart& start)
    : job_(start.job),
      group_(start.group),
      dataset_(start.dataset),
      model_(start.model),
      optimizer_(start.job.lr, start.job.momentum, start.job.weight_decay),
      ddp_(start.model, start.group, start.ddp) {
  if (!start.momentum.empty()) optimizer_.set_momentum_buffer({start.momentum.begin(), start.momentum.end()});
}

void HostReplica::forward(std::span<const int64_t> batch, int64_t /*offset*/) {
  dataset_.gather(batch, bx_, by_);
  const std::span<const float> pred = model_.forward(bx_, static_cast<int64_t>(batch.size()));
  grad_pred_.resize(pred.size());
  loss_ = nn::mse_loss(pred, by_, grad_pred_);
}

void HostReplica::backward(bool sync) {
  ddp_.backward(grad_pred_, sync);
  ddp_.finish();
}

void HostReplica::shadow_backward() {
  ddp_.shadow_backward();
  ddp_.finish();
}

double HostReplica::dataset_mse() { return whole_dataset_mse(model_, dataset_, eval_block_rows(job_)); }

std::unique_ptr<Replica> make_host_replica(const ReplicaStart& start) { return std::make_unique<HostReplica>(start); }

}  // namespace ringlab
