#include "engine/ddp/distributed_data_parallel.h"

#include <utility>

#include <fmt/core.h>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/core/limits.h"
#include "engine/ddp/collective_check.h"
#include "engine/dist/ring_allreduce.h"

namespace ringlab::ddp {

DistributedDataParallel::DistributedDataParallel(nn::Mlp& model, ProcessGroup& group, DdpOptions options)
    : model_(model), group_(group), options_(std::move(options)) {
  if (options_.algorithm != "ring" && options_.algorithm != "native")
    throw InputError(fmt::format("unknown all-reduce algorithm '{}' (ring or native)", options_.algorithm));
  use_buckets(plan_buckets(model_.parameter_views(), options_.bucket_limits, false));

  // Every replica must start from the same weights: rank 0's win.
  const int64_t t0 = now_ns();
  FlightRecorder* fr = options_.recorder;
  const int64_t seq = fr ? fr->schedule("broadcast", static_cast<int64_t>(model_.parameters().size()),
                                        group_.backend(), "native", -1)
                         : -1;
  if (options_.check_collectives && group_.backend() != "nccl")
    check_collective(group_, {0, -1, 2, -1, static_cast<int64_t>(model_.parameters().size()), 0, 0});
  if (fr) fr->start(seq);
  group_.broadcast(model_.parameters(), 0);
  if (fr) fr->complete(seq);
  if (options_.events) {
    Event e;
    e.kind = EventKind::CollectiveEnd;
    e.rank = group_.rank();
    e.t_begin_ns = t0;
    e.t_end_ns = now_ns();
    e.collective_id = next_collective_id_++;
    e.bytes = static_cast<int64_t>(model_.parameters().size_bytes());
    e.text = "broadcast";
    options_.events->emit(std::move(e));
  }
  comm_thread_ = start_thread("DDP's communication", [this] { communication_loop(); });
}

DistributedDataParallel::~DistributedDataParallel() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  comm_thread_.join();
}

void DistributedDataParallel::use_buckets(std::vector<Bucket> buckets) {
  buckets_ = std::move(buckets);
  bucket_of_parameter_.assign(model_.parameter_views().size(), -1);
  for (size_t b = 0; b < buckets_.size(); ++b)
    for (int p : buckets_[b].parameters) bucket_of_parameter_[p] = static_cast<int>(b);
  pending_in_bucket_.assign(buckets_.size(), 0);
}

// PyTorch's reducer rebuilds its buckets once, at the first forward after a synchronised
// backward has shown the order gradients become ready in. Every rank rebuilds at the same step
// (they all synchronise the same backwards), so their buckets, and collectives, stay paired.
void DistributedDataParallel::rebuild_buckets_once() {
  if (!synchronised_once_ || rebuilt_) return;
  finish();  // nothing of the old buckets is still being reduced
  use_buckets(plan_buckets(model_.parameter_views(), options_.bucket_limits, true));
  rebuilt_ = true;
}

void DistributedDataParallel::backward(std::span<const float> grad_output, bool sync) {
  if (!sync) {
    model_.backward(grad_output);
    return;
  }
  rebuild_buckets_once();
  synchronised_once_ = true;
  const CollectiveFault fault = std::exchange(fault_, CollectiveFault::None);
  if (fault == CollectiveFault::Skip) {  // this rank silently leaves out its all-reduce
    model_.backward(grad_output);
    return;
  }
  if (fault == CollectiveFault::Extra) {  // one collective the other ranks do not make
    std::vector<float> extra(buckets_.front().numel, 0.0f);
    run_allreduce(extra, -2, "extra");
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_) std::rethrow_exception(error_);
    for (size_t b = 0; b < buckets_.size(); ++b)
      pending_in_bucket_[b] = static_cast<int>(buckets_[b].parameters.size());
  }
  resize_next_ = fault == CollectiveFault::Resize;
  model_.backward(grad_output, [this](int p) { on_gradient_ready(p); });
}

void DistributedDataParallel::shadow_backward() {
  rebuild_buckets_once();
  synchronised_once_ = true;
  model_.zero_grad();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_) std::rethrow_exception(error_);
    for (size_t b = 0; b < buckets_.size(); ++b)
      pending_in_bucket_[b] = static_cast<int>(buckets_[b].parameters.size());
  }
  for (int p = static_cast<int>(model_.parameter_views().size()) - 1; p >= 0; --p) on_gradient_ready(p);
}

void DistributedDataParallel::on_gradient_ready(int parameter) {
  // Average by scaling before the sum, as PyTorch's reducer does: grad * (1 / world_size).
  const float scale = static_cast<float>(1.0 / group_.size());
  const nn::ParameterView& view = model_.parameter_views()[parameter];
  float* g = model_.gradients().data() + view.offset;
  if (group_.size() > 1)
    for (size_t i = 0; i < view.numel; ++i) g[i] = g[i] * scale;

  const int b = bucket_of_parameter_[parameter];
  // The last bucket becomes ready when backward is over: nothing is left to overlap with, so
  // it is all-reduced right here once the buckets before it are done (saving a thread hand-off;
  // with one bucket, as for the seed's small model by default, no hand-off happens at all).
  const bool last = static_cast<size_t>(b) + 1 == buckets_.size();
  bool ready = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ready = --pending_in_bucket_[b] == 0;
    if (ready && !last) {
      queue_.push_back(static_cast<size_t>(b));
      ++launched_;
    }
  }
  if (!ready) return;
  emit_bucket_ready(b);
  if (last) {
    finish();
    allreduce_bucket(static_cast<size_t>(b));
    return;
  }
  cv_.notify_all();
}

void DistributedDataParallel::emit_bucket_ready(int b) {
  if (options_.events) {
    Event e;
    e.kind = EventKind::BucketReady;
    e.rank = group_.rank();
    e.t_begin_ns = e.t_end_ns = now_ns();
    e.step = step_;
    e.bucket = b;
    e.bytes = static_cast<int64_t>(buckets_[b].numel * sizeof(float));
    options_.events->emit(std::move(e));
  }
}

void DistributedDataParallel::communication_loop() {
  for (;;) {
    size_t bucket = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      bucket = queue_.front();
      queue_.pop_front();
    }
    try {
      allreduce_bucket(bucket);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++completed_;
    }
    cv_.notify_all();
  }
}

void DistributedDataParallel::allreduce_bucket(size_t b) {
  const Bucket& bucket = buckets_[b];
  // A resized collective (failure lab): this rank offers one element fewer than its peers.
  const size_t numel = std::exchange(resize_next_, false) && bucket.numel > 1 ? bucket.numel - 1 : bucket.numel;
  std::span<float> grads = model_.gradients().subspan(bucket.offset, numel);
  run_allreduce(grads, static_cast<int>(b), options_.algorithm);
}

void DistributedDataParallel::emit_collective(EventKind kind, int64_t id, int64_t t0, std::span<const float> data,
                                              int bucket, const std::string& label) {
  if (!options_.events) return;
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
  if (data.size() <= 64) e.values.assign(data.begin(), data.end());
  options_.events->emit(std::move(e));
}

void DistributedDataParallel::run_allreduce(std::span<float> data, int bucket, const std::string& label) {
  const int64_t id = next_collective_id_++;
  const int64_t t0 = now_ns();
  FlightRecorder* fr = options_.recorder;
  const int64_t seq = fr ? fr->schedule("allreduce", static_cast<int64_t>(data.size()), group_.backend(),
                                        options_.algorithm, step_)
                         : -1;
  emit_collective(EventKind::CollectiveBegin, id, t0, data, bucket, label);
  if (options_.check_collectives && group_.backend() != "nccl")
    check_collective(group_, {id, step_, 1, bucket, static_cast<int64_t>(data.size()), 0, 0});
  if (fr) fr->start(seq);
  if (group_.size() == 1) {
    // The sum over one rank is the tensor itself: nothing to send.
  } else if (options_.algorithm == "native") {
    group_.allreduce_native(data);
  } else {
    RingAllreduceOptions ring;
    ring.timeout = options_.timeout;
    ring.segment_elems = options_.segment_elems;
    ring.events = options_.events;
    ring.collective_id = id;
    ring.step = step_;
    ring.bucket = bucket;
    const int world = group_.size();
    ring.before_step = [this, fr, seq, world](RingPhase phase, int s) {
      if (fr) fr->ring_step(seq, phase == RingPhase::AllGather ? world - 1 + s : s);
      if (options_.before_ring_step) options_.before_ring_step(phase, s);
    };
    ring_allreduce(group_, data, ring);
  }
  if (fr) fr->complete(seq);
  emit_collective(EventKind::CollectiveEnd, id, t0, data, bucket, label);
}

void DistributedDataParallel::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool done = cv_.wait_for(lock, options_.timeout, [this] { return completed_ == launched_; });
  if (error_) std::rethrow_exception(error_);
  if (!done)
    throw TimeoutError(ErrorContext{group_.rank(), "ddp.finish", step_},
                       fmt::format("{} of {} gradient buckets still not all-reduced after {} ms",
                                   launched_ - completed_, launched_, options_.timeout.count()));
}

void DistributedDataParallel::allreduce(std::span<float> data, const std::string& label) {
  finish();
  run_allreduce(data, -1, label);
}

}  // namespace ringlab::ddp
