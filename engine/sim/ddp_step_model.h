#pragma once
// A model of one DistributedDataParallel training step: forward, then backward producing
// gradients from the last layer to the first, gradients packed into buckets, each bucket's
// all-reduce launched the moment its last gradient is ready and queued behind the previous
// bucket's on the link, then the optimizer once every bucket is reduced.
//
//   time ->   | forward |        backward           | optimizer |
//   link  ->                 [bucket 0][bucket 1]    [bucket 2]     <- exposed: the link still
//                                                                     busy after backward ends
//
//   step = max(forward + backward, end of the last bucket's all-reduce) + optimizer
//   bucket b starts at max(its last gradient ready, bucket b-1 done) and takes T_allreduce(bytes_b)
//
// Reference: Li et al., "PyTorch Distributed: Experiences on Accelerating Data Parallel
// Training", PVLDB 13(12), 2020: gradient buckets in reverse parameter order, each all-reduced
// as soon as it is full so communication overlaps the rest of backward.
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/sim/cost_models.h"
#include "engine/sim/model_presets.h"

namespace ringlab::sim {

// PyTorch's bucketing (torch.nn.parallel.DistributedDataParallel, bucket_cap_mb=25): the first
// bucket (dist._DEFAULT_FIRST_BUCKET_BYTES) holds 1 MiB, the others bucket_cap_mb MiB, in the
// order gradients become ready (core/bucket_assignment.h).
struct BucketPolicy {
  int64_t first_bucket_bytes = int64_t{1} << 20;
  int64_t cap_bytes = int64_t{25} << 20;
  // DDP's bucket_cap_mb: cap = mb * 2^20 bytes (the first bucket stays 1 MiB); throws InputError
  // unless mb > 0.
  static BucketPolicy with_cap_mb(double mb);
};

struct Bucket {
  int first_param = 0;  // registration index of its first parameter (the last one to be ready)
  int last_param = 0;   // registration index of its last parameter (inclusive)
  int64_t bytes = 0;
};

// Buckets in the order DDP reduces them after its first iteration: bucket 0 holds the model's
// last parameters. The same rule as the live reducer's (core/bucket_assignment.h).
std::vector<Bucket> assign_buckets(const ModelShape& model, const BucketPolicy& policy);

struct BucketTiming {
  int64_t bytes = 0;
  int tensors = 0;
  double ready_s = 0;  // its last gradient is ready (from the start of the step)
  double start_s = 0;  // its all-reduce starts: ready, and the previous bucket is done
  double end_s = 0;
};

struct DdpStepPrediction {
  int64_t world_size = 1;
  ComputeTimes compute;
  double compute_s = 0;       // forward + backward + optimizer
  double comm_s = 0;          // sum of the buckets' all-reduce times
  double exposed_comm_s = 0;  // step_s - compute_s: communication not hidden behind backward
  double step_s = 0;
  double efficiency = 1;      // weak scaling vs 1 rank: step time at p = 1 / step time at p
  std::vector<BucketTiming> buckets;
};

// Throws InputError for world_size < 1, negative or non-finite compute times, an empty model.
DdpStepPrediction predict_ddp_step(const ModelShape& model, int64_t world_size,
                                   const LinkParams& link, const BucketPolicy& policy,
                                   const ComputeTimes& compute,
                                   Algorithm algorithm = Algorithm::Ring,
                                   const AlgorithmOptions& options = {});
// The same step with any all-reduce model: `allreduce_s(bytes)` is one bucket's all-reduce time
// (node_models.h's over several nodes). Throws as above.
using AllreduceTime = std::function<double(double bytes)>;
DdpStepPrediction predict_ddp_step(const ModelShape& model, int64_t world_size, const BucketPolicy& policy,
                                   const ComputeTimes& compute, const AllreduceTime& allreduce_s);

}  // namespace ringlab::sim
