#include "engine/sim/ddp_step_model.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "engine/core/bucket_assignment.h"
#include "engine/core/error.h"

namespace ringlab::sim {

BucketPolicy BucketPolicy::with_cap_mb(double mb) {
  if (!(mb > 0) || !std::isfinite(mb)) throw InputError(fmt::format("bucket cap must be > 0 MB; got {}", mb));
  BucketPolicy policy;
  policy.cap_bytes = std::max<int64_t>(1, static_cast<int64_t>(mb * 1024 * 1024));
  return policy;
}

// The buckets DDP reduces once it has rebuilt them after its first iteration (one rule for the
// live reducer and this model: core/bucket_assignment.h). The first iteration's single bucket is
// left out: a prediction is of the steps that follow.
std::vector<Bucket> assign_buckets(const ModelShape& model, const BucketPolicy& policy) {
  std::vector<int64_t> bytes;
  for (int64_t elements : model.param_elements) bytes.push_back(elements * model.bytes_per_element);
  std::vector<Bucket> buckets;
  for (const std::vector<int>& members : ddp_buckets(bytes, {policy.first_bucket_bytes, policy.cap_bytes}, true)) {
    Bucket b{members.back(), members.front(), 0};  // ready last parameter first: a contiguous range
    for (int p : members) b.bytes += bytes[static_cast<size_t>(p)];
    buckets.push_back(b);
  }
  return buckets;
}

namespace {

void require_time(double seconds, const char* what) {
  if (!std::isfinite(seconds) || seconds < 0)
    throw InputError(fmt::format("{} time must be a finite number of seconds >= 0; got {}", what, seconds));
}

void validate(const ModelShape& model, int64_t world_size, const ComputeTimes& compute) {
  if (world_size < 1) throw InputError(fmt::format("world size must be at least 1; got {}", world_size));
  if (model.param_elements.empty() || model.total_elements() <= 0)
    throw InputError(fmt::format("model '{}' has no parameters", model.name));
  if (model.bytes_per_element <= 0) throw InputError("bytes per element must be > 0");
  require_time(compute.forward_s, "forward");
  require_time(compute.backward_s, "backward");
  require_time(compute.optimizer_s, "optimizer");
}

}  // namespace

DdpStepPrediction predict_ddp_step(const ModelShape& model, int64_t world_size,
                                   const LinkParams& link, const BucketPolicy& policy,
                                   const ComputeTimes& compute, Algorithm algorithm,
                                   const AlgorithmOptions& options) {
  validate(model, world_size, compute);
  validate_link(link);
  return predict_ddp_step(model, world_size, policy, compute, [&](double bytes) {
    return predict_allreduce(algorithm, world_size, bytes, link, options);
  });
}

DdpStepPrediction predict_ddp_step(const ModelShape& model, int64_t world_size, const BucketPolicy& policy,
                                   const ComputeTimes& compute, const AllreduceTime& allreduce_s) {
  validate(model, world_size, compute);
  DdpStepPrediction out;
  out.world_size = world_size;
  out.compute = compute;
  out.compute_s = compute.total_s();

  // Backward spends its time on the parameters in reverse order, in proportion to their size:
  // parameter i is ready once every parameter registered after it (and itself) is done.
  // after[i] = elements of parameters i..end, so param i is ready at
  // forward + backward * after[i] / total.
  const auto& sizes = model.param_elements;
  std::vector<int64_t> after(sizes.size() + 1, 0);
  for (size_t i = sizes.size(); i-- > 0;) after[i] = after[i + 1] + sizes[i];
  const double total = static_cast<double>(after[0]);
  auto ready_at = [&](int param) {
    return compute.forward_s + compute.backward_s * static_cast<double>(after[param]) / total;
  };

  double link_free = 0.0;  // one all-reduce at a time: a bucket queues behind the previous one
  for (const Bucket& bucket : assign_buckets(model, policy)) {
    BucketTiming t;
    t.bytes = bucket.bytes;
    t.tensors = bucket.last_param - bucket.first_param + 1;
    t.ready_s = ready_at(bucket.first_param);  // its first-registered parameter is its last ready
    t.start_s = std::max(t.ready_s, link_free);
    t.end_s = t.start_s + allreduce_s(static_cast<double>(bucket.bytes));
    link_free = t.end_s;
    out.comm_s += t.end_s - t.start_s;
    out.buckets.push_back(t);
  }

  // The optimizer runs once backward is over and every bucket is reduced (DDP's finalize waits).
  const double backward_end = compute.forward_s + compute.backward_s;
  out.step_s = std::max(backward_end, link_free) + compute.optimizer_s;
  out.exposed_comm_s = out.step_s - out.compute_s;
  // Weak scaling: each rank keeps its batch, so one rank's step (no communication) is the ideal.
  out.efficiency = out.step_s > 0 ? out.compute_s / out.step_s : 1.0;
  return out;
}

}  // namespace ringlab::sim
