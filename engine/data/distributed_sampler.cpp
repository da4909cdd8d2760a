#include "engine/data/distributed_sampler.h"

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/core/generator.h"

namespace ringlab::data {

DistributedSampler::DistributedSampler(SamplerOptions options) : options_(options) {
  const int64_t n = options_.dataset_size;
  const int64_t r = options_.num_replicas;
  if (r < 1) throw InputError(fmt::format("DistributedSampler: num_replicas must be >= 1, got {}", r));
  if (options_.rank < 0 || options_.rank >= r)
    throw InputError(fmt::format("DistributedSampler: rank must be in [0, {}), got {}", r, options_.rank));
  if (n < 0) throw InputError("DistributedSampler: dataset size must be >= 0");
  if (options_.drop_last && n % r != 0) {
    // Cut the tail so every rank gets the same number without repeating anything.
    num_samples_ = (n - r + r - 1) / r;  // ceil((n - r) / r)
  } else {
    num_samples_ = (n + r - 1) / r;  // ceil(n / r)
  }
  total_size_ = num_samples_ * r;
}

std::vector<int64_t> DistributedSampler::global_order() const {
  const int64_t n = options_.dataset_size;
  std::vector<int64_t> order;
  if (options_.shuffle) {
    Generator g(options_.seed + static_cast<uint64_t>(epoch_));
    order = g.randperm(n);
  } else {
    order.resize(n);
    for (int64_t i = 0; i < n; ++i) order[i] = i;
  }
  if (!options_.drop_last) {
    // Pad by repeating the list from its start (as often as needed when padding exceeds n).
    const int64_t padding = total_size_ - n;
    for (int64_t k = 0; k < padding && n > 0; ++k) order.push_back(order[k % n]);
  } else {
    order.resize(total_size_);
  }
  return order;
}

std::vector<int64_t> DistributedSampler::indices() const {
  const std::vector<int64_t> order = global_order();
  std::vector<int64_t> mine;
  mine.reserve(num_samples_);
  for (int64_t i = options_.rank; i < total_size_; i += options_.num_replicas) mine.push_back(order[i]);
  return mine;
}

}  // namespace ringlab::data
