#pragma once
// The reducer's buckets over the model's flat gradient buffer. The assignment itself is
// PyTorch's (core/bucket_assignment.h); here each bucket becomes one contiguous range, which it
// is because the gradients become ready in reverse registration order.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/core/bucket_assignment.h"
#include "engine/nn/mlp.h"

namespace ringlab::ddp {

struct Bucket {
  std::vector<int> parameters;  // parameter indices, in the order they become ready
  size_t offset = 0;            // first float of the bucket in the flat gradient buffer
  size_t numel = 0;
};

// Before the rebuild (the first synchronised backward): one bucket; after it, PyTorch's sizes.
std::vector<Bucket> plan_buckets(const std::vector<nn::ParameterView>& params, const BucketLimits& limits,
                                 bool rebuilt);
// Which bucket holds each of the `num_parameters` parameters: what a reducer looks up when a
// parameter's gradient becomes ready.
std::vector<int> bucket_of_each_parameter(const std::vector<Bucket>& buckets, size_t num_parameters);

}  // namespace ringlab::ddp
