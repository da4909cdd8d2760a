#pragma once
// How DistributedDataParallel groups gradients into buckets: PyTorch 1.13's own rule, written
// once here and used by the DDP reducer (ddp/bucket_plan.h) and the simulator's step model
// (sim/ddp_step_model.h), so the Scale view predicts the buckets the live run reduces.
//
// PyTorch 1.13, find_unused_parameters=False (distributed.py, _ddp_init_helper; reducer.cpp,
// compute_bucket_assignment_by_size and rebuild_buckets):
//   - iteration 1 reduces every gradient in ONE bucket (the bucket limit is sys.maxsize: the
//     order gradients become ready is not known yet);
//   - during that backward the reducer writes down the order the gradients became ready; before
//     iteration 2 it rebuilds the buckets in that order: the first bucket closes once it holds
//     at least dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB), every later one at bucket_cap_mb
//     (25 MiB by default). A bucket may overshoot its limit by one tensor.
// A feed-forward model's gradients become ready last parameter first, so bucket 0 holds the last
// layer and is reduced while backward still computes the first layers' gradients. Small models
// (the seed's 10.7 KiB) fit in the 1 MiB first bucket whatever bucket_cap_mb is; a script that
// wants them split lowers dist._DEFAULT_FIRST_BUCKET_BYTES as well (ringlab: --first-bucket-kb).
#include <cstdint>
#include <span>
#include <vector>

namespace ringlab {

inline constexpr int64_t kDefaultFirstBucketBytes = int64_t{1} << 20;  // dist._DEFAULT_FIRST_BUCKET_BYTES
inline constexpr int64_t kDefaultBucketCapBytes = int64_t{25} << 20;   // bucket_cap_mb=25

struct BucketLimits {
  int64_t first_bytes = kDefaultFirstBucketBytes;
  int64_t cap_bytes = kDefaultBucketCapBytes;
};

// compute_bucket_assignment_by_size for one dtype and device: the tensors visited in `order`,
// each added to the open bucket, which closes once it holds at least its limit. Returns each
// bucket's tensor indices in visiting order. Throws InputError for a limit <= 0.
std::vector<std::vector<int>> assign_buckets_by_size(std::span<const int64_t> tensor_bytes, std::span<const int> order,
                                                     const BucketLimits& limits);

// DDP's buckets for a model whose gradients become ready in reverse registration order: before
// the rebuild (iteration 1) one bucket of every tensor; after it, assign_buckets_by_size in that
// order. Buckets are listed in the order they are reduced.
std::vector<std::vector<int>> ddp_buckets(std::span<const int64_t> tensor_bytes, const BucketLimits& limits,
                                          bool rebuilt);

}  // namespace ringlab
