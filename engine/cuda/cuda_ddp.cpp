#include "engine/cuda/cuda_ddp.h"

#include <utility>

#include "engine/core/error.h"
#include "engine/cuda/cuda_check.h"
#include "engine/events/collective_fingerprint.h"

namespace ringlab::cuda {

CudaDistributedDataParallel::CudaDistributedDataParallel(CudaMlp& model, NcclProcessGroup& group,
                                                         ddp::DdpOptions options)
    : model_(model), group_(group), runner_(group, std::move(options)) {
  if (model_.stream() != group_.stream())
    throw Error({group_.rank(), "ddp.init", -1}, "the GPU model must run on the NCCL group's stream");
  use_buckets(ddp::plan_buckets(model_.parameter_views(), runner_.options().bucket_limits, false));
  runner_.broadcast(model_.device_parameters(), 0);  // every replica must start from rank 0's weights
}

void CudaDistributedDataParallel::use_buckets(std::vector<ddp::Bucket> buckets) {
  buckets_ = std::move(buckets);
  bucket_of_parameter_ = ddp::bucket_of_each_parameter(buckets_, model_.parameter_views().size());
  pending_in_bucket_.assign(buckets_.size(), 0);
}

// The stream orders a rebuild after the previous step's all-reduces (see core/bucket_assignment.h).
void CudaDistributedDataParallel::start_synchronised_backward() {
  if (synchronised_once_ && !rebuilt_) {
    use_buckets(ddp::plan_buckets(model_.parameter_views(), runner_.options().bucket_limits, true));
    rebuilt_ = true;
  }
  synchronised_once_ = true;
  for (size_t b = 0; b < buckets_.size(); ++b)
    pending_in_bucket_[b] = static_cast<int>(buckets_[b].parameters.size());
}

void CudaDistributedDataParallel::backward_batch(bool sync) {
  if (sync) start_synchronised_backward();
  switch (sync ? runner_.take_fault() : ddp::CollectiveFault::Skip) {
    case ddp::CollectiveFault::Skip:  // no_sync, or this rank silently leaves out its all-reduce
      model_.backward_batch();
      return;
    case ddp::CollectiveFault::Extra:  // one collective the other ranks do not make
      allreduce_zeros();
      break;
    default:
      break;
  }
  model_.backward_batch([this](int p) { on_gradient_ready(p); });
}

void CudaDistributedDataParallel::shadow_backward() {
  start_synchronised_backward();
  model_.zero_grad();
  for (int p = static_cast<int>(model_.parameter_views().size()) - 1; p >= 0; --p) on_gradient_ready(p);
}

void CudaDistributedDataParallel::allreduce_zeros() {
  const size_t numel = buckets_.front().numel;
  zeros_.reserve_bytes(numel * sizeof(float));  // earlier all-reduces of it have completed: it may move
  RINGLAB_CUDA_CHECK(cudaMemsetAsync(zeros_.data(), 0, numel * sizeof(float), group_.stream()));
  runner_.allreduce_bucket({zeros_.floats(), numel}, kExtraBucket);  // labelled as the others are
}

void CudaDistributedDataParallel::on_gradient_ready(int parameter) {
  // Average by scaling before the sum, as PyTorch's reducer does: grad * (1 / world_size).
  const nn::ParameterView& view = model_.parameter_views()[parameter];
  if (group_.size() > 1) model_.scale_gradients(view.offset, view.numel, static_cast<float>(1.0 / group_.size()));

  const int b = bucket_of_parameter_[parameter];
  if (--pending_in_bucket_[b] > 0) return;
  runner_.emit_bucket_ready(b, buckets_[b].numel);
  const ddp::Bucket& bucket = buckets_[b];
  runner_.allreduce_bucket(model_.device_gradients().subspan(bucket.offset, bucket.numel), b);
}

void CudaDistributedDataParallel::allreduce(std::span<float> data, const std::string& label) {
  runner_.allreduce(data, kDemoBucket, label);
}

}  // namespace ringlab::cuda
