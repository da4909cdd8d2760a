#include "engine/ddp/collective_runner.h"

#include <utility>

#include <fmt/core.h>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/ddp/collective_check.h"
#include "engine/dist/ring_allreduce.h"
#include "engine/events/collective_fingerprint.h"

namespace ringlab::ddp {
namespace {

constexpr int32_t kAllreduceOp = 1, kBroadcastOp = 2;  // CollectiveFingerprint::op
constexpr size_t kMaxRecordedValues = 64;               // tensors this small travel with their values

}  // namespace

CollectiveRunner::CollectiveRunner(ProcessGroup& group, DdpOptions options)
    : group_(group), options_(std::move(options)) {
  if (options_.algorithm != "ring" && options_.algorithm != "native")
    throw InputError(fmt::format("unknown all-reduce algorithm '{}' (ring or native)", options_.algorithm));
}

CollectiveFault CollectiveRunner::take_fault() {
  const CollectiveFault fault = std::exchange(fault_, CollectiveFault::None);
  resize_next_ = fault == CollectiveFault::Resize;
  return fault;
}

CollectiveFingerprint CollectiveRunner::fingerprint(int32_t op, int64_t id, int bucket, size_t numel) const {
  return {id, step_, op, bucket, static_cast<int64_t>(numel), 0, 0};
}

void CollectiveRunner::check(int32_t op, int64_t id, int bucket, size_t numel) const {
  if (options_.check_collectives) check_collective(group_, fingerprint(op, id, bucket, numel));
}

bool CollectiveRunner::fingerprint_rides_on_ring() const {
  // The ring assembles its first message on the CPU: host memory only (not NCCL's).
  return options_.check_collectives && options_.algorithm == "ring" && group_.size() > 1 &&
         group_.backend() != "nccl";
}

void CollectiveRunner::broadcast(std::span<float> data, int root) {
  const int64_t id = next_collective_id_++;
  const int64_t t0 = now_ns();
  FlightRecorder* fr = options_.recorder;
  const int64_t seq = fr ? fr->schedule("broadcast", static_cast<int64_t>(data.size()), group_.backend(), "native", step_)
                         : -1;
  check(kBroadcastOp, id, kDemoBucket, data.size());
  if (fr) fr->start(seq);
  group_.broadcast(data, root);
  if (fr) fr->complete(seq);
  // Only the end is reported, and without values: the weights are not a tensor to show.
  if (options_.events) options_.events->emit(collective_event(EventKind::CollectiveEnd, id, t0, data, kDemoBucket, "broadcast"));
}

void CollectiveRunner::allreduce(std::span<float> data, int bucket, const std::string& label) {
  const int64_t id = next_collective_id_++;
  const int64_t t0 = now_ns();
  FlightRecorder* fr = options_.recorder;
  const int64_t seq = fr ? fr->schedule("allreduce", static_cast<int64_t>(data.size()), group_.backend(),
                                        options_.algorithm, step_)
                         : -1;
  emit(EventKind::CollectiveBegin, id, t0, data, bucket, label);
  const bool rides = fingerprint_rides_on_ring();
  if (!rides) check(kAllreduceOp, id, bucket, data.size());
  if (fr) fr->start(seq);
  if (group_.size() == 1) {
    // The sum over one rank is the tensor itself: nothing to send.
  } else if (options_.algorithm == "native") {
    group_.allreduce_native(data);
  } else {
    run_ring(data, id, bucket, seq, rides);
  }
  if (fr) fr->complete(seq);
  emit(EventKind::CollectiveEnd, id, t0, data, bucket, label);
}

void CollectiveRunner::allreduce_bucket(std::span<float> gradients, int bucket) {
  // A resized collective (failure lab): this rank offers one element fewer than its peers.
  const bool shorten = std::exchange(resize_next_, false) && gradients.size() > 1;
  allreduce(shorten ? gradients.first(gradients.size() - 1) : gradients, bucket, options_.algorithm);
}

void CollectiveRunner::run_ring(std::span<float> data, int64_t id, int bucket, int64_t seq, bool check_on_ring) {
  RingAllreduceOptions ring;
  ring.timeout = options_.timeout;
  ring.segment_elems = options_.segment_elems;
  ring.pipeline_depth = options_.pipeline_depth;
  ring.events = options_.events;
  ring.collective_id = id;
  ring.step = step_;
  ring.bucket = bucket;
  const int world = group_.size();
  // The recorder counts ring steps across both phases: 0 .. 2(N-1)-1.
  ring.before_step = [this, seq, world](RingPhase phase, int s) {
    if (options_.recorder) options_.recorder->ring_step(seq, phase == RingPhase::AllGather ? world - 1 + s : s);
    if (options_.before_ring_step) options_.before_ring_step(phase, s);
  };
  // The check, riding on the ring's first message: the ring hands over the left neighbour's
  // fingerprint before it adds anything, and a mismatch thrown here stops it there.
  const CollectiveFingerprint mine = fingerprint(kAllreduceOp, id, bucket, data.size());
  const auto header = fingerprint_as_floats(mine);
  if (check_on_ring) {
    ring.header = header;
    ring.check_header = [this, &mine](std::span<const float> left) { compare_with_left(group_, mine, left); };
  }
  ring_allreduce(group_, data, ring);
}

void CollectiveRunner::emit_bucket_ready(int bucket, size_t numel) const {
  if (!options_.events) return;
  Event e;
  e.kind = EventKind::BucketReady;
  e.rank = group_.rank();
  e.t_begin_ns = e.t_end_ns = now_ns();  // on a GPU: when its last gradient's kernels were enqueued
  e.step = step_;
  e.bucket = bucket;
  e.bytes = static_cast<int64_t>(numel * sizeof(float));
  options_.events->emit(std::move(e));
}

Event CollectiveRunner::collective_event(EventKind kind, int64_t id, int64_t t0, std::span<const float> data,
                                         int bucket, const std::string& label) const {
  Event e;
  e.kind = kind;
  e.rank = group_.rank();
  e.t_begin_ns = t0;
  e.t_end_ns = now_ns();
  e.step = step_;
  e.collective_id = id;
  e.bucket = bucket;
  e.bytes = static_cast<int64_t>(data.size_bytes());
  e.text = label;
  return e;
}

void CollectiveRunner::emit(EventKind kind, int64_t id, int64_t t0, std::span<const float> data, int bucket,
                            const std::string& label) const {
  if (!options_.events) return;
  Event e = collective_event(kind, id, t0, data, bucket, label);
  // Read through the group: on a GPU this waits for the stream, which only tensors this small pay.
  if (!data.empty() && data.size() <= kMaxRecordedValues) {
    e.values.resize(data.size());
    group_.copy_to_host(data, e.values.data());
  }
  options_.events->emit(std::move(e));
}

}  // namespace ringlab::ddp
