#pragma once
// How DDP groups gradients into buckets. Parameters are visited in REVERSE order, because
// backward produces the last layer's gradients first; a bucket closes as soon as it holds at
// least its byte limit. With flat gradient storage, each bucket is one contiguous range.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/nn/mlp.h"

namespace ringlab::ddp {

inline constexpr size_t kDefaultFirstBucketBytes = 1024 * 1024;       // PyTorch's first bucket
inline constexpr size_t kDefaultBucketBytes = 25 * 1024 * 1024;       // bucket_cap_mb=25

struct Bucket {
  std::vector<int> parameters;  // parameter indices, in the order they become ready
  size_t offset = 0;            // first float of the bucket in the flat gradient buffer
  size_t numel = 0;
};

// cap_bytes < 0: PyTorch's defaults (1 MiB first bucket, then 25 MiB). Otherwise every bucket,
// the first included, is capped at cap_bytes (PyTorch keeps its first at 1 MiB even then; for
// a model this small that would hide the overlap a smaller cap is meant to show).
std::vector<Bucket> plan_buckets(const std::vector<nn::ParameterView>& params, int64_t cap_bytes);

}  // namespace ringlab::ddp
