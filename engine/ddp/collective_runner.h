#pragma once
// Every collective a DDP reducer makes, on the host (ddp/distributed_data_parallel.h) or on a
// GPU (cuda/cuda_ddp.h), goes through one CollectiveRunner, so each kind of reducer gets the
// same behaviour around it:
//
//   numbering    each collective takes the rank's next collective id (the events' pairing key)
//   the check    the fingerprint exchange with the ring neighbours (ddp/collective_check.h),
//                on the ring's first message when the ring runs on host memory
//   the recorder scheduled, started, every ring step, completed (events/flight_recorder.h)
//   the events   CollectiveBegin / CollectiveEnd, small tensors with their values
//   the algorithm ring (dist/ring_allreduce.h, chunk events, the step-through gate) or the
//                backend's native all-reduce
//   faults       the failure labs' Skip / Extra / Resize, taken once per synchronised backward
//
// The runner never touches the data itself: it hands spans to the process group's own entry
// points (broadcast, allreduce_native, and the ring's point-to-point and memory hooks), so a span
// may hold host memory for a CPU group or device memory for the NCCL group. Values for the
// events are read with the group's copy_to_host.
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "engine/core/bucket_assignment.h"
#include "engine/dist/process_group.h"
#include "engine/events/collective_fingerprint.h"
#include "engine/events/event.h"
#include "engine/events/flight_recorder.h"

namespace ringlab::ddp {

struct DdpOptions {
  std::string algorithm = "ring";  // ring: ringlab's instrumented ring; native: the backend's own
  BucketLimits bucket_limits;      // PyTorch's: a 1 MiB first bucket, then 25 MiB
  size_t segment_elems = 0;        // ring segmenting (0: whole chunks)
  size_t pipeline_depth = 0;       // ring segments received ahead (0: the ring's default)
  std::chrono::milliseconds timeout{60000};
  EventSink* events = nullptr;
  // Gated step-through: called before every ring step of every bucket; may block.
  std::function<void(RingPhase, int ring_step)> before_ring_step;
  bool check_collectives = true;        // fingerprint exchange before each collective
  FlightRecorder* recorder = nullptr;   // where each collective is recorded
};

// Faults a rank can inject into its own next synchronised backward (failure labs).
enum class CollectiveFault { None, Skip, Extra, Resize };

class CollectiveRunner {
 public:
  // Throws InputError for an algorithm other than ring or native.
  CollectiveRunner(ProcessGroup& group, DdpOptions options);
  CollectiveRunner(const CollectiveRunner&) = delete;  // the ring's hooks point back at it
  CollectiveRunner& operator=(const CollectiveRunner&) = delete;

  const DdpOptions& options() const { return options_; }
  ProcessGroup& group() const { return group_; }

  // Rank `root`'s values everywhere, through the backend's broadcast: DDP's start.
  void broadcast(std::span<float> data, int root);
  // Sums `data` across the ranks in place with the job's algorithm. `bucket` is a gradient
  // bucket (>= 0) or one of events/collective_fingerprint.h's kDemoBucket, kExtraBucket.
  void allreduce(std::span<float> data, int bucket, const std::string& label);
  // A gradient bucket's all-reduce: the one above, one element short after a Resize fault.
  void allreduce_bucket(std::span<float> gradients, int bucket);
  // The event that says bucket `bucket` (`numel` floats) has all its gradients.
  void emit_bucket_ready(int bucket, size_t numel) const;

  void set_step(int64_t step) { step_ = step; }
  int64_t step() const { return step_; }
  int64_t collectives() const { return next_collective_id_; }

  void inject(CollectiveFault fault) { fault_ = fault; }
  // At the start of a synchronised backward: the fault injected for it, now cleared. Skip and
  // Extra are the reducer's to act on; a Resize is kept here for the next bucket's all-reduce.
  CollectiveFault take_fault();

 private:
  CollectiveFingerprint fingerprint(int32_t op, int64_t id, int bucket, size_t numel) const;
  void check(int32_t op, int64_t id, int bucket, size_t numel) const;
  // Whether an all-reduce's check travels on the ring's first message rather than its own.
  bool fingerprint_rides_on_ring() const;
  void run_ring(std::span<float> data, int64_t id, int bucket, int64_t seq, bool check_on_ring);
  Event collective_event(EventKind kind, int64_t id, int64_t t0, std::span<const float> data, int bucket,
                         const std::string& label) const;
  // The event with the values of a small tensor.
  void emit(EventKind kind, int64_t id, int64_t t0, std::span<const float> data, int bucket,
            const std::string& label) const;

  ProcessGroup& group_;
  DdpOptions options_;
  int64_t step_ = -1;
  int64_t next_collective_id_ = 0;
  CollectiveFault fault_ = CollectiveFault::None;
  bool resize_next_ = false;
};

}  // namespace ringlab::ddp
