#pragma once
// DistributedDataParallel for the GPU model, over the NCCL process group: the same contract as
// engine/ddp (rank 0's parameters broadcast at construction; during backward each gradient is
// scaled by 1/world size the moment it is ready and a bucket is all-reduced as soon as its
// last gradient is; the same bucket plan, the same events), on device memory.
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
#include "engine/ddp/bucket_plan.h"
#include "engine/ddp/distributed_data_parallel.h"
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

  // A one-off all-reduce (the seed's demo) of a DEVICE span, with the buckets' algorithm and events.
  void allreduce(std::span<float> data, const std::string& label);

  const std::vector<ddp::Bucket>& buckets() const { return buckets_; }
  void set_step(int64_t step) { step_ = step; }

 private:
  void use_buckets(std::vector<ddp::Bucket> buckets);
  void on_gradient_ready(int parameter);
  void run_allreduce(std::span<float> data, int bucket, const std::string& label);
  void emit(EventKind kind, int64_t t_begin, int64_t collective_id, int bucket, std::span<const float> data,
            const std::string& label);

  CudaMlp& model_;
  NcclProcessGroup& group_;
  ddp::DdpOptions options_;
  std::vector<ddp::Bucket> buckets_;
  std::vector<int> bucket_of_parameter_;
  std::vector<int> pending_in_bucket_;
  bool synchronised_once_ = false;
  bool rebuilt_ = false;
  int64_t step_ = -1;
  int64_t next_collective_id_ = 0;
};

}  // namespace ringlab::cuda
