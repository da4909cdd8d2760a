#pragma once
// The NCCL process group: one process per GPU, as PyTorch's backend="nccl" with
// torch.device("cuda", LOCAL_RANK). Every span it is given holds DEVICE memory (a DDP bucket of
// CudaMlp's gradient buffer, say), so it also overrides the memory hooks: reduce_add is a
// kernel, scratch is cudaMalloc'd and copy_to_host copies from the device.
//
// All work goes on one CUDA stream, stream(). Give the same stream to the model (CudaMlp) and
// every all-reduce is ordered after the backward kernels that produced its gradients.
//
// Point-to-point and the group call. NCCL's ncclSend blocks the GPU until the matching
// ncclRecv runs on the peer. If every rank of a ring issued "send right" and then, separately,
// "receive left", every rank's GPU would sit in its send waiting for a receive queued behind
// the peer's own send: a deadlock. NCCL's cure is the group call: sends and receives issued
// between ncclGroupStart and ncclGroupEnd progress together. So isend/irecv only RECORD the
// operation, and wait() issues it, in a group, with the CUDA events that time it.
//
// Which operations go together. NCCL runs one communicator's groups one after another, and a
// group is finished only when every operation in it is. So a group must never hold an operation
// whose partner the peer issues in a LATER group, or every rank ends up waiting for its
// neighbour's next group. Tags give the rule: a send and the receive it feeds carry the same
// tag (as with gloo and MPI), and the ring numbers its tags in the order its transfers happen
// (step * 1024 + segment). So a wait on a tag-T operation issues every recorded operation with a
// tag up to T: one group per tag, in ascending tag order, the same sequence on every rank, each
// group holding a step's send and receive. That keeps the ring's pipeline (receives posted
// ahead, chunks in segments) free of deadlocks. Checked with the real ring on a model of
// NCCL's in-order groups: world sizes 2-8, sizes 0-4099, pipeline depths 1-8, segments of
// 1-100 floats, all complete and correct, except where a chunk had more than 1024 segments:
// the ring's tags then repeat within one collective, and the rule needs them not to.
// Between a pair, NCCL matches in issue order; tags are not sent.
//
// No endless hang. The communicator is non-blocking (blocking = 0), so creation and every
// operation return at once, and each wait polls the CUDA event and ncclCommGetAsyncError until
// done, an error, or the timeout. On an error or a timeout the communicator is aborted (a GPU
// waiting for a dead peer is released) and the group refuses further work.
//
// Host memory. Point-to-point needs GPU memory (it says so if handed host memory); broadcast
// and allreduce_native also accept host vectors (a vote among ranks, a benchmark's bookkeeping)
// and copy them through a device buffer.
//
// Requests must not outlive their group. The group is meant for one thread at a time (it sets
// its device on entry, so that thread need not be the one that created it).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/cuda/device_buffer.h"
#include "engine/dist/process_group.h"

namespace ringlab {

class StoreClient;

struct NcclOptions {
  std::chrono::milliseconds timeout{60000};
  // Which GPU: local_rank % device count. -1 reads LOCAL_RANK from the environment (torchrun's
  // name), falling back to the rank when it is unset.
  int local_rank = -1;
  // Where rank 0 publishes the NCCL unique id in the store.
  std::string store_key = "nccl/uid";
};

class NcclProcessGroup : public ProcessGroup {
 public:
  // Collective over all `size` ranks: blocks (with the timeout) until every rank has joined.
  NcclProcessGroup(StoreClient& store, int rank, int size, NcclOptions options = {});
  ~NcclProcessGroup() override;
  NcclProcessGroup(const NcclProcessGroup&) = delete;
  NcclProcessGroup& operator=(const NcclProcessGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "nccl"; }

  std::unique_ptr<Request> isend(std::span<const float> data, int dst, int tag) override;
  std::unique_ptr<Request> irecv(std::span<float> data, int src, int tag) override;
  void broadcast(std::span<float> data, int root) override;
  void barrier() override;
  void allreduce_native(std::span<float> data) override;

  void reduce_add(std::span<float> acc, std::span<const float> incoming) override;
  std::span<float> scratch(size_t n) override;
  void copy_to_host(std::span<const float> src, float* dst) override;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  // GPU time, from CUDA events, of the last completed point-to-point group and of the last
  // collective (broadcast, barrier, allreduce_native), in microseconds.
  double last_transfer_gpu_us() const { return last_transfer_gpu_us_; }
  double last_collective_gpu_us() const { return last_collective_gpu_us_; }

 private:
  friend class NcclRequest;
  struct PendingOp;
  struct Batch;

  void use_device() const;
  void ensure_usable(const ErrorContext& ctx) const;
  ErrorContext context(const char* collective) const { return {rank_, collective, -1}; }
  void init_communicator(StoreClient& store, const std::string& key);
  std::unique_ptr<Request> record(bool is_send, float* data, size_t count, int peer, int tag);
  // Issues the recorded operations with tags up to max_tag, one group per tag, ascending.
  void flush_pending(int max_tag);
  void issue_group(const std::vector<std::shared_ptr<PendingOp>>& ops);
  void wait_batch(Batch& batch, std::chrono::milliseconds timeout, const PendingOp& op);
  // Polls until NCCL has finished enqueueing (non-blocking calls may still be working).
  void settle(const ErrorContext& ctx, std::chrono::milliseconds timeout, const std::string& what);
  // Polls `done_event` and the communicator's asynchronous error until done or the timeout.
  void wait_on_gpu(cudaEvent_t done_event, const ErrorContext& ctx, std::chrono::milliseconds timeout,
                   const std::string& what);
  // Runs one collective that `enqueue` puts on the stream, timed and waited for.
  template <typename Enqueue>
  void run_collective(const char* name, Enqueue&& enqueue);
  // Runs body(device pointer) on `data`, staging host memory through a device buffer.
  template <typename Body>
  void on_device(std::span<float> data, const char* what, Body&& body);
  void abort_communicator() noexcept;
  void release() noexcept;
  void synchronize(const char* what);

  int rank_ = 0, size_ = 0, device_ = 0;
  ncclComm_t comm_ = nullptr;
  bool aborted_ = false;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t collective_start_ = nullptr, collective_end_ = nullptr;
  std::vector<std::shared_ptr<PendingOp>> pending_;
  cuda::DeviceBuffer scratch_buffer_;
  cuda::DeviceBuffer barrier_buffer_;
  cuda::DeviceBuffer staging_buffer_;
  double last_transfer_gpu_us_ = 0.0, last_collective_gpu_us_ = 0.0;
};

}  // namespace ringlab
