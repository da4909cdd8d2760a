#pragma once
// DistributedDataParallel for the MLP: the same model on every rank, gradients averaged across
// ranks bucket by bucket while backward is still running.
//
//   construction  rank 0's parameters are broadcast, so every replica starts identical
//   backward      each parameter's gradient is scaled by 1/world_size the moment it is ready
//                 (as PyTorch's reducer does while copying into the bucket); when a bucket's last
//                 gradient is ready, the bucket is handed to the communication thread, which
//                 all-reduces (sums) it while backward goes on with earlier layers
//   finish()      waits for every bucket: after it, every rank holds the same averaged gradient,
//                 so one optimizer step keeps the replicas identical
//
// Every collective goes through a CollectiveRunner (ddp/collective_runner.h), as the GPU
// reducer's do (cuda/cuda_ddp.h).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/ddp/bucket_plan.h"
#include "engine/ddp/collective_runner.h"
#include "engine/dist/process_group.h"
#include "engine/nn/mlp.h"

namespace ringlab::ddp {

class DistributedDataParallel {
 public:
  DistributedDataParallel(nn::Mlp& model, ProcessGroup& group, DdpOptions options);
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  // One training step's backward with gradient synchronisation. With sync = false it behaves
  // like PyTorch's no_sync(): gradients only accumulate locally.
  void backward(std::span<const float> grad_output, bool sync = true);
  // Waits until every bucket of the last synchronised backward is all-reduced.
  void finish();
  // PyTorch's Join: a rank out of data takes part in the others' all-reduces with zero
  // gradients, bucket by bucket, so nobody waits for a collective that never comes.
  void shadow_backward();

  // The seed's direct all_reduce demo and any other one-off collective on a host tensor, with
  // the same algorithm and events as the buckets.
  void allreduce(std::span<float> data, const std::string& label);

  // One bucket until the first synchronised backward is over, then PyTorch's rebuilt buckets.
  const std::vector<Bucket>& buckets() const { return buckets_; }
  void set_step(int64_t step) { runner_.set_step(step); }
  void inject(CollectiveFault fault) { runner_.inject(fault); }
  int64_t collectives() const { return runner_.collectives(); }

 private:
  void use_buckets(std::vector<Bucket> buckets);
  void rebuild_buckets_once();
  // Ready-counts for every bucket of a synchronised backward (under the lock).
  void expect_all_buckets();
  void on_gradient_ready(int parameter);
  void communication_loop();
  void allreduce_bucket(size_t bucket);

  nn::Mlp& model_;
  ProcessGroup& group_;
  CollectiveRunner runner_;
  std::vector<Bucket> buckets_;
  std::vector<int> bucket_of_parameter_;
  std::vector<int> pending_in_bucket_;
  bool synchronised_once_ = false;  // a synchronised backward has run: the ready order is known
  bool rebuilt_ = false;

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<size_t> queue_;
  size_t launched_ = 0, completed_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread comm_thread_;
};

}  // namespace ringlab::ddp
