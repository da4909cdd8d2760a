#include "engine/cuda/cuda_ddp.h"

#include <fmt/core.h>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/dist/ring_allreduce.h"

namespace ringlab::cuda {
namespace {

constexpr size_t kMaxRecordedValues = 64;

}  // namespace

CudaDistributedDataParallel::CudaDistributedDataParallel(CudaMlp& model, NcclProcessGroup& group,
                                                         ddp::DdpOptions options)
    : model_(model), group_(group), options_(std::move(options)) {
  if (options_.algorithm != "ring" && options_.algorithm != "native")
    throw InputError(fmt::format("unknown all-reduce algorithm '{}' (ring or native)", options_.algorithm));
  if (model_.stream() != group_.stream())
    throw Error({group_.rank(), "ddp.init", -1}, "the GPU model must run on the NCCL group's stream");
  use_buckets(ddp::plan_buckets(model_.parameter_views(), options_.bucket_limits, false));

  // Every replica must start from the same weights: rank 0's win.
  const int64_t t0 = now_ns();
  group_.broadcast(model_.device_parameters(), 0);
  emit(EventKind::CollectiveEnd, t0, next_collective_id_++, -1, model_.device_parameters(), "broadcast");
}

void CudaDistributedDataParallel::use_buckets(std::vector<ddp::Bucket> buckets) {
  buckets_ = std::move(buckets);
  bucket_of_parameter_.assign(model_.parameter_views().size(), -1);
  for (size_t b = 0; b < buckets_.size(); ++b)
    for (int p : buckets_[b].parameters) bucket_of_parameter_[p] = static_cast<int>(b);
  pending_in_bucket_.assign(buckets_.size(), 0);
}

void CudaDistributedDataParallel::backward_batch(bool sync) {
  if (!sync) {
    model_.backward_batch();
    return;
  }
  // PyTorch's rebuild after the first synchronised backward (see core/bucket_assignment.h); the
  // stream orders it after the previous step's all-reduces.
  if (synchronised_once_ && !rebuilt_) {
    use_buckets(ddp::plan_buckets(model_.parameter_views(), options_.bucket_limits, true));
    rebuilt_ = true;
  }
  synchronised_once_ = true;
  for (size_t b = 0; b < buckets_.size(); ++b)
    pending_in_bucket_[b] = static_cast<int>(buckets_[b].parameters.size());
  model_.backward_batch([this](int p) { on_gradient_ready(p); });
}

void CudaDistributedDataParallel::on_gradient_ready(int parameter) {
  // Average by scaling before the sum, as PyTorch's reducer does: grad * (1 / world_size).
  const nn::ParameterView& view = model_.parameter_views()[parameter];
  if (group_.size() > 1) model_.scale_gradients(view.offset, view.numel, static_cast<float>(1.0 / group_.size()));

  const int b = bucket_of_parameter_[parameter];
  if (--pending_in_bucket_[b] > 0) return;
  if (options_.events) {
    Event e;
    e.kind = EventKind::BucketReady;
    e.rank = group_.rank();
    e.t_begin_ns = e.t_end_ns = now_ns();  // when its last gradient was enqueued
    e.step = step_;
    e.bucket = b;
    e.bytes = static_cast<int64_t>(buckets_[b].numel * sizeof(float));
    options_.events->emit(std::move(e));
  }
  const ddp::Bucket& bucket = buckets_[b];
  run_allreduce(model_.device_gradients().subspan(bucket.offset, bucket.numel), b, options_.algorithm);
}

void CudaDistributedDataParallel::allreduce(std::span<float> data, const std::string& label) {
  run_allreduce(data, -1, label);
}

void CudaDistributedDataParallel::run_allreduce(std::span<float> data, int bucket, const std::string& label) {
  const int64_t id = next_collective_id_++;
  const int64_t t0 = now_ns();
  emit(EventKind::CollectiveBegin, t0, id, bucket, data, label);
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
    ring.before_step = options_.before_ring_step;
    ring_allreduce(group_, data, ring);
  }
  emit(EventKind::CollectiveEnd, t0, id, bucket, data, label);
}

void CudaDistributedDataParallel::emit(EventKind kind, int64_t t_begin, int64_t collective_id, int bucket,
                                       std::span<const float> data, const std::string& label) {
  if (!options_.events) return;
  Event e;
  e.kind = kind;
  e.rank = group_.rank();
  e.t_begin_ns = t_begin;
  e.t_end_ns = kind == EventKind::CollectiveBegin ? t_begin : now_ns();
  e.step = step_;
  e.collective_id = collective_id;
  e.bucket = bucket;
  e.bytes = static_cast<int64_t>(data.size_bytes());
  e.text = label;
  // Small tensors travel with their values, read back from the device (a wait, but only for
  // tensors of at most 64 floats, which is the demo, never the model's buckets by default).
  if (!data.empty() && data.size() <= kMaxRecordedValues) {
    e.values.resize(data.size());
    group_.copy_to_host(data, e.values.data());
  }
  options_.events->emit(std::move(e));
}

}  // namespace ringlab::cuda
