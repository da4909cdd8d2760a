#pragma once
// DistributedDataParallel for the GPU model, over the NCCL process group: the same contract as
// engine/ddp (rank 0's parameters broadcast at construction; during backward each gradient is
// scaled by 1/world size the moment it is ready and a bucket is all-reduced as soon as its
// last gradient is; the same bucket plan, the same events), on device memory. Its collectives
// go through ddp::CollectiveRunner, as the CPU reducer's do, so the collective check, the
// flight recorder, the failure labs' faults and Join's shadow backward work here the same way.
//
// Where the CPU reducer hands buckets to a communication thread, here the model and the group
// share one CUDA stream and a bucket's all-reduce is issued from the ready callback itself: the
// stream orders it after the kernels that produced the bucket's gradients, which is the
// ordering DDP needs. What this gives up is overlap: the ring is driven by the host, which
// waits for each step before it enqueues the backward of earlier layers. For the seed's model
// one bucket holds every gradient, so there is nothing to overlap; overlapping buckets on the
// GPU would need a second stream and a second communicator.
#include <span>
#include <string>
#include <vector>

#include "engine/cuda/cuda_mlp.h"
#include "engine/cuda/device_buffer.h"
#include "engine/ddp/bucket_plan.h"
#include "engine/ddp/collective_runner.h"
#include "engine/cuda/nccl/nccl_process_group.h"

namespace ringlab::cuda {

class CudaDistributedDataParallel {
 public:
  // model must enqueue on group.stream().
  CudaDistributedDataParallel(CudaMlp& model, NcclProcessGroup& group, ddp::DdpOptions options);

  // The backward of the model's last forward_batch, gradients synchronised across ranks when
  // `sync` (otherwise they only accumulate locally, like PyTorch's no_sync()). When it returns,
  // every bucket's all-reduce has completed on the GPU.
  void backward_batch(bool sync = true);
  // PyTorch's Join: a rank out of data all-reduces zero gradients with the others' buckets.
  void shadow_backward();

  // A one-off all-reduce (the seed's demo) of a DEVICE span, with the buckets' algorithm and events.
  void allreduce(std::span<float> data, const std::string& label);

  const std::vector<ddp::Bucket>& buckets() const { return buckets_; }
  void set_step(int64_t step) { runner_.set_step(step); }
  void inject(ddp::CollectiveFault fault) { runner_.inject(fault); }

 private:
  void use_buckets(std::vector<ddp::Bucket> buckets);
  // PyTorch's rebuild after the first synchronised backward, then every bucket waits for all
  // its gradients again.
  void start_synchronised_backward();
  void on_gradient_ready(int parameter);
  // The failure lab's extra collective: zeros the size of the first bucket.
  void allreduce_zeros();

  CudaMlp& model_;
  NcclProcessGroup& group_;
  ddp::CollectiveRunner runner_;
  std::vector<ddp::Bucket> buckets_;
  std::vector<int> bucket_of_parameter_;
  std::vector<int> pending_in_bucket_;
  bool synchronised_once_ = false;
  bool rebuilt_ = false;
  DeviceBuffer zeros_;
};

}  // namespace ringlab::cuda
