#pragma once
// Which rank owns each dataset index in one epoch, from the shards the workers reported.
//
// DistributedSampler pads the (shuffled) index list by repeating it from the start until it
// divides evenly, then deals it out round-robin: rank r takes positions r, r+R, r+2R, ...
// So position p of rank r's shard came from position p*R + r of the padded list, and it is
// padding exactly when that position is past the end of the dataset.
#include <cstdint>
#include <vector>

namespace ringlab::view_model {

struct SamplerGrid {
  int64_t dataset_size = 0;
  int world_size = 0;
  int epoch = -1;
  std::vector<int> owner;                      // owner[i]: rank that trains on index i, -1: none
  std::vector<int> copies;                     // copies[i]: how often index i is handed out
  std::vector<std::vector<int64_t>> shards;    // shards[r]: rank r's indices, in order
  std::vector<std::vector<uint8_t>> padded;    // padded[r][p]: that position repeats an index
  int64_t padded_count = 0;
  int64_t unassigned_count = 0;                // indices no rank sees (drop_last)
};

SamplerGrid build_sampler_grid(int64_t dataset_size, int epoch,
                               const std::vector<std::vector<int64_t>>& shards);

// Positions [begin, end) of batch `batch` in a shard of `shard_size` indices.
struct BatchRange {
  int64_t begin = 0;
  int64_t end = 0;
};
BatchRange batch_positions(int64_t shard_size, int64_t batch_size, int64_t batch);

// True when two epochs dealt every rank the same indices in the same order: what happens when
// set_epoch is forgotten.
bool same_order(const std::vector<std::vector<int64_t>>& a, const std::vector<std::vector<int64_t>>& b);

}  // namespace ringlab::view_model
