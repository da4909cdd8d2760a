#include "engine/ddp/distributed_data_parallel.h"

#include <utility>

#include <fmt/core.h>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/core/limits.h"
#include "engine/events/collective_fingerprint.h"

namespace ringlab::ddp {

DistributedDataParallel::DistributedDataParallel(nn::Mlp& model, ProcessGroup& group, DdpOptions options)
    : model_(model), group_(group), runner_(group, std::move(options)) {
  use_buckets(plan_buckets(model_.parameter_views(), runner_.options().bucket_limits, false));
  runner_.broadcast(model_.parameters(), 0);  // every replica must start from the same weights: rank 0's
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
  bucket_of_parameter_ = bucket_of_each_parameter(buckets_, model_.parameter_views().size());
  pending_in_bucket_.assign(buckets_.size(), 0);
}

// PyTorch's reducer rebuilds its buckets once, at the first forward after a synchronised
// backward has shown the order gradients become ready in. Every rank rebuilds at the same step
// (they all synchronise the same backwards), so their buckets, and collectives, stay paired.
void DistributedDataParallel::rebuild_buckets_once() {
  if (!synchronised_once_ || rebuilt_) return;
  finish();  // nothing of the old buckets is still being reduced
  use_buckets(plan_buckets(model_.parameter_views(), runner_.options().bucket_limits, true));
  rebuilt_ = true;
}

void DistributedDataParallel::expect_all_buckets() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_) std::rethrow_exception(error_);
  for (size_t b = 0; b < buckets_.size(); ++b) pending_in_bucket_[b] = static_cast<int>(buckets_[b].parameters.size());
}

void DistributedDataParallel::backward(std::span<const float> grad_output, bool sync) {
  if (!sync) {
    model_.backward(grad_output);
    return;
  }
  rebuild_buckets_once();
  synchronised_once_ = true;
  const CollectiveFault fault = runner_.take_fault();
  if (fault == CollectiveFault::Skip) {  // this rank silently leaves out its all-reduce
    model_.backward(grad_output);
    return;
  }
  if (fault == CollectiveFault::Extra) {  // one collective the other ranks do not make
    std::vector<float> extra(buckets_.front().numel, 0.0f);
    runner_.allreduce_bucket(extra, kExtraBucket);  // a ring (or native) all-reduce like the others, of a bucket they lack
  }
  expect_all_buckets();
  model_.backward(grad_output, [this](int p) { on_gradient_ready(p); });
}

void DistributedDataParallel::shadow_backward() {
  rebuild_buckets_once();
  synchronised_once_ = true;
  model_.zero_grad();
  expect_all_buckets();
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
  runner_.emit_bucket_ready(b, buckets_[b].numel);
  if (last) {
    finish();
    allreduce_bucket(static_cast<size_t>(b));
    return;
  }
  cv_.notify_all();
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
  runner_.allreduce_bucket(model_.gradients().subspan(bucket.offset, bucket.numel), static_cast<int>(b));
}

void DistributedDataParallel::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  const std::chrono::milliseconds timeout = runner_.options().timeout;
  const bool done = cv_.wait_for(lock, timeout, [this] { return completed_ == launched_; });
  if (error_) std::rethrow_exception(error_);
  if (!done)
    throw TimeoutError(ErrorContext{group_.rank(), "ddp.finish", runner_.step()},
                       fmt::format("{} of {} gradient buckets still not all-reduced after {} ms",
                                   launched_ - completed_, launched_, timeout.count()));
}

void DistributedDataParallel::allreduce(std::span<float> data, const std::string& label) {
  finish();
  runner_.allreduce(data, kDemoBucket, label);
}

}  // namespace ringlab::ddp
