#include "engine/ddp/bucket_plan.h"

#include <algorithm>

namespace ringlab::ddp {

std::vector<Bucket> plan_buckets(const std::vector<nn::ParameterView>& params, int64_t cap_bytes) {
  std::vector<Bucket> buckets;
  Bucket current;
  size_t current_bytes = 0;
  auto limit = [&] {
    if (cap_bytes >= 0) return static_cast<size_t>(cap_bytes);
    return buckets.empty() ? kDefaultFirstBucketBytes : kDefaultBucketBytes;
  };
  for (int p = static_cast<int>(params.size()) - 1; p >= 0; --p) {
    current.parameters.push_back(p);
    current_bytes += params[p].numel * sizeof(float);
    if (current_bytes >= limit()) {
      buckets.push_back(std::move(current));
      current = Bucket{};
      current_bytes = 0;
    }
  }
  if (!current.parameters.empty()) buckets.push_back(std::move(current));
  // Parameters were visited backwards, so a bucket's range starts at its last-listed parameter.
  for (Bucket& b : buckets) {
    const int first = *std::min_element(b.parameters.begin(), b.parameters.end());
    const int last = *std::max_element(b.parameters.begin(), b.parameters.end());
    b.offset = params[first].offset;
    b.numel = params[last].offset + params[last].numel - b.offset;
  }
  return buckets;
}

}  // namespace ringlab::ddp
