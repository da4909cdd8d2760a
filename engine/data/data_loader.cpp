#include "engine/data/data_loader.h"

#include <algorithm>

#include "engine/core/error.h"

namespace ringlab::data {

int64_t batches_per_epoch(int64_t num_samples, int64_t batch_size, bool drop_last) {
  if (batch_size < 1) throw InputError("batch size must be >= 1");
  return drop_last ? num_samples / batch_size : (num_samples + batch_size - 1) / batch_size;
}

DataLoader::DataLoader(std::vector<int64_t> indices, int64_t batch_size, bool drop_last)
    : indices_(std::move(indices)), batch_size_(batch_size), drop_last_(drop_last) {
  if (batch_size_ < 1) throw InputError("batch size must be >= 1");
}

int64_t DataLoader::num_batches() const {
  return batches_per_epoch(static_cast<int64_t>(indices_.size()), batch_size_, drop_last_);
}

std::span<const int64_t> DataLoader::batch(int64_t b) const {
  const int64_t begin = b * batch_size_;
  const int64_t end = std::min<int64_t>(begin + batch_size_, static_cast<int64_t>(indices_.size()));
  return {indices_.data() + begin, static_cast<size_t>(end - begin)};
}

}  // namespace ringlab::data
