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
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/ddp/bucket_plan.h"
#include "engine/dist/process_group.h"
#include "engine/nn/mlp.h"
#include "engine/events/event.h"
#include "engine/events/flight_recorder.h"

namespace ringlab::ddp {

struct DdpOptions {
  std::string algorithm = "ring";  // ring: ringlab's instrumented ring; native: the backend's own
  BucketLimits bucket_limits;      // PyTorch's: a 1 MiB first bucket, then 25 MiB
  size_t segment_elems = 0;        // ring segmenting (0: whole chunks)
  std::chrono::milliseconds timeout{60000};
  EventSink* events = nullptr;
  // Gated step-through: called before every ring step of every bucket; may block.
  std::function<void(RingPhase, int ring_step)> before_ring_step;
  bool check_collectives = true;        // fingerprint exchange before each collective
  FlightRecorder* recorder = nullptr;   // where each collective is recorded
};

// Faults a rank can inject into its own next synchronised backward (failure labs).
enum class CollectiveFault { None, Skip, Extra, Resize };

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
  void set_step(int64_t step) { step_ = step; }
  void inject(CollectiveFault fault) { fault_ = fault; }
  int64_t collectives() const { return next_collective_id_; }

 private:
  void use_buckets(std::vector<Bucket> buckets);
  void rebuild_buckets_once();
  void on_gradient_ready(int parameter);
  void emit_bucket_ready(int bucket);
  void communication_loop();
  void allreduce_bucket(size_t bucket);
  void run_allreduce(std::span<float> data, int bucket, const std::string& label);
  void emit_collective(EventKind kind, int64_t id, int64_t t0, std::span<const float> data, int bucket,
                       const std::string& label);

  nn::Mlp& model_;
  ProcessGroup& group_;
  DdpOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<int> bucket_of_parameter_;
  std::vector<int> pending_in_bucket_;
  bool synchronised_once_ = false;  // a synchronised backward has run: the ready order is known
  bool rebuilt_ = false;
  int64_t step_ = -1;
  int64_t next_collective_id_ = 0;
  CollectiveFault fault_ = CollectiveFault::None;
  bool resize_next_ = false;

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<size_t> queue_;
  size_t launched_ = 0, completed_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread comm_thread_;
};

}  // namespace ringlab::ddp
