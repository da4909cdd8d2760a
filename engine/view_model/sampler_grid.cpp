#include "engine/view_model/sampler_grid.h"

#include <algorithm>

namespace ringlab::view_model {
namespace {

// The position rule holds for DistributedSampler's equal-length shards; for anything else the
// second and later appearances of an index count as the repeats.
bool dealt_round_robin(const std::vector<std::vector<int64_t>>& shards) {
  if (shards.empty()) return false;
  for (const auto& s : shards)
    if (s.size() != shards.front().size()) return false;
  return true;
}

}  // namespace

SamplerGrid build_sampler_grid(int64_t dataset_size, int epoch,
                               const std::vector<std::vector<int64_t>>& shards) {
  SamplerGrid grid;
  grid.dataset_size = std::max<int64_t>(dataset_size, 0);
  grid.world_size = static_cast<int>(shards.size());
  grid.epoch = epoch;
  grid.shards = shards;
  grid.owner.assign(grid.dataset_size, -1);
  grid.copies.assign(grid.dataset_size, 0);
  grid.padded.resize(shards.size());

  const bool round_robin = dealt_round_robin(shards);
  const int64_t ranks = grid.world_size;
  // Visit positions in the order of the padded list so that "first appearance" means the same
  // thing as in the sampler.
  const size_t longest = shards.empty() ? 0 : std::max_element(shards.begin(), shards.end(), [](auto& a, auto& b) {
                                                  return a.size() < b.size();
                                                })->size();
  for (int r = 0; r < grid.world_size; ++r) grid.padded[r].assign(shards[r].size(), 0);
  for (size_t p = 0; p < longest; ++p) {
    for (int r = 0; r < grid.world_size; ++r) {
      if (p >= shards[r].size()) continue;
      const int64_t index = shards[r][p];
      if (index < 0 || index >= grid.dataset_size) continue;
      const bool is_padding = round_robin ? static_cast<int64_t>(p) * ranks + r >= grid.dataset_size
                                          : grid.copies[index] > 0;
      ++grid.copies[index];
      if (is_padding) {
        grid.padded[r][p] = 1;
        ++grid.padded_count;
      } else if (grid.owner[index] < 0) {
        grid.owner[index] = r;
      }
    }
  }
  for (int64_t i = 0; i < grid.dataset_size; ++i)
    if (grid.copies[i] == 0) ++grid.unassigned_count;
  return grid;
}

BatchRange batch_positions(int64_t shard_size, int64_t batch_size, int64_t batch) {
  if (batch_size <= 0 || batch < 0) return {};
  const int64_t begin = std::min(batch * batch_size, shard_size);
  return {begin, std::min(begin + batch_size, shard_size)};
}

bool same_order(const std::vector<std::vector<int64_t>>& a, const std::vector<std::vector<int64_t>>& b) {
  return !a.empty() && a == b;
}

}  // namespace ringlab::view_model
