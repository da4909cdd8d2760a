#pragma once
// torch.utils.data.DataLoader over a sampler's indices: consecutive batches of batch_size,
// the last one shorter unless the loader's own drop_last drops it.
#include <cstdint>
#include <span>
#include <vector>

namespace ringlab::data {

class DataLoader {
 public:
  DataLoader(std::vector<int64_t> indices, int64_t batch_size, bool drop_last = false);

  int64_t num_batches() const;  // len(loader)
  std::span<const int64_t> batch(int64_t b) const;

 private:
  std::vector<int64_t> indices_;
  int64_t batch_size_;
  bool drop_last_;
};

// len(loader) for a rank holding `num_samples` indices.
int64_t batches_per_epoch(int64_t num_samples, int64_t batch_size, bool drop_last = false);

}  // namespace ringlab::data
