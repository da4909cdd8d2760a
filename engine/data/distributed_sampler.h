#pragma once
// torch.utils.data.DistributedSampler: which dataset indices rank r sees in an epoch.
//
// All ranks compute the same (shuffled) order of 0..n-1 from seed + epoch, pad it by
// repeating from the start until it divides evenly (or cut it, with drop_last), and then rank r
// takes every world_size-th index starting at r. Nothing is communicated: agreement comes from
// the shared seed. That is also why forgetting set_epoch repeats the same order every epoch.
#include <cstdint>
#include <vector>

namespace ringlab::data {

struct SamplerOptions {
  int64_t dataset_size = 0;
  int num_replicas = 1;
  int rank = 0;
  bool shuffle = true;
  uint64_t seed = 0;
  bool drop_last = false;
};

class DistributedSampler {
 public:
  explicit DistributedSampler(SamplerOptions options);

  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }
  int64_t num_samples() const { return num_samples_; }  // len(sampler): indices per rank
  int64_t total_size() const { return total_size_; }

  // This rank's indices for the current epoch (what iter(sampler) yields).
  std::vector<int64_t> indices() const;
  // The padded global order before it is split among ranks.
  std::vector<int64_t> global_order() const;

 private:
  SamplerOptions options_;
  int64_t epoch_ = 0;
  int64_t num_samples_ = 0;
  int64_t total_size_ = 0;
};

}  // namespace ringlab::data
