#include "engine/ddp/bucket_plan.h"

#include <algorithm>

namespace ringlab::ddp {

std::vector<Bucket> plan_buckets(const std::vector<nn::ParameterView>& params, const BucketLimits& limits,
                                 bool rebuilt) {
  std::vector<int64_t> bytes;
  for (const nn::ParameterView& p : params) bytes.push_back(static_cast<int64_t>(p.numel * sizeof(float)));
  std::vector<Bucket> buckets;
  for (std::vector<int>& members : ddp_buckets(bytes, limits, rebuilt)) {
    Bucket b;
    b.parameters = std::move(members);
    // Parameters were visited backwards, so a bucket's range starts at its last-listed parameter.
    const auto [first, last] = std::minmax_element(b.parameters.begin(), b.parameters.end());
    b.offset = params[*first].offset;
    b.numel = params[*last].offset + params[*last].numel - b.offset;
    buckets.push_back(std::move(b));
  }
  return buckets;
}

std::vector<int> bucket_of_each_parameter(const std::vector<Bucket>& buckets, size_t num_parameters) {
  std::vector<int> bucket_of(num_parameters, -1);
  for (size_t b = 0; b < buckets.size(); ++b)
    for (int p : buckets[b].parameters) bucket_of[p] = static_cast<int>(b);
  return bucket_of;
}

}  // namespace ringlab::ddp
