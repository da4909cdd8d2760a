#include "engine/view_model/sampler_history.h"

#include "engine/job/job_config.h"

#include <algorithm>

namespace ringlab::view_model {

SamplerHistory::SamplerHistory(size_t max_indices) : max_indices_(max_indices) {}

void SamplerHistory::clear() {
  held_indices_ = 0;
  shards_.clear();
  first_step_.clear();
  batches_.clear();
}

std::vector<EpochKey> SamplerHistory::epochs() const {
  std::vector<EpochKey> keys;
  for (const auto& [key, value] : shards_) keys.push_back(key);
  return keys;
}

const std::vector<std::vector<int64_t>>* SamplerHistory::shards(const EpochKey& key) const {
  auto it = shards_.find(key);
  return it == shards_.end() ? nullptr : &it->second;
}

RankBatch SamplerHistory::current_batch(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(batches_.size())) return {};
  return batches_[rank];
}

void SamplerHistory::forget_oldest() {
  while (held_indices_ > max_indices_ && shards_.size() > 1) {
    for (const auto& shard : shards_.begin()->second) held_indices_ -= shard.size();
    shards_.erase(shards_.begin());
  }
}

void SamplerHistory::consume(const Event& event, int generation) {
  if (event.rank < 0 || event.rank >= kMaxWorldSize) return;
  if (event.kind == EventKind::SamplerShard && event.epoch >= 0) {
    auto& ranks = shards_[{generation, event.epoch}];
    if (static_cast<int>(ranks.size()) <= event.rank) ranks.resize(event.rank + 1);
    std::vector<int64_t>& shard = ranks[event.rank];
    if (first_piece(event)) {  // a long shard comes in pieces, each appended to the first
      held_indices_ -= shard.size();
      shard.clear();
    } else if (static_cast<int64_t>(shard.size()) != piece_offset(event)) {
      return;  // its beginning was forgotten already
    }
    shard.insert(shard.end(), event.indices.begin(), event.indices.end());
    held_indices_ += event.indices.size();
    forget_oldest();
  } else if (event.kind == EventKind::StepBegin && event.epoch >= 0 && event.step >= 0) {
    const EpochKey key{generation, event.epoch};
    auto [it, inserted] = first_step_.try_emplace({key, event.rank}, event.step);
    if (static_cast<int>(batches_.size()) <= event.rank) batches_.resize(event.rank + 1);
    batches_[event.rank] = {generation, event.epoch, event.step - it->second};
    if (first_step_.size() > 65536) first_step_.erase(first_step_.begin());
  }
}

int reported_ranks(const std::vector<std::vector<int64_t>>& shards) {
  int reported = 0;
  for (const auto& shard : shards) reported += shard.empty() ? 0 : 1;
  return reported;
}

std::vector<std::vector<int64_t>> shards_of_world(const std::vector<std::vector<int64_t>>& shards, int world) {
  std::vector<std::vector<int64_t>> all = shards;
  if (world > static_cast<int>(all.size())) all.resize(static_cast<size_t>(world));
  return all;
}

EpochKey SamplerHistory::newest_trained(int generation) const {
  EpochKey newest{generation, -1};
  for (const RankBatch& b : batches_)
    if (b.generation == generation && b.epoch > newest.epoch) newest.epoch = b.epoch;
  return newest;
}

int followed_epoch(const SamplerHistory& history, const std::vector<EpochKey>& epochs, int world, bool live) {
  const int newest = static_cast<int>(epochs.size()) - 1;
  if (newest < 1) return newest;
  if (!live) {
    // A run stopped between epochs drew the next epoch's shards and took no step in it: the
    // status names the epoch of its last step, and so does the sampler.
    const EpochKey trained = history.newest_trained(epochs[newest].generation);
    if (trained.epoch < 0) return newest;
    const auto after = std::upper_bound(epochs.begin(), epochs.end(), trained);
    return after == epochs.begin() ? newest : static_cast<int>(after - epochs.begin()) - 1;
  }
  if (world <= 0) return newest;
  const auto complete = [&](int slot) {
    const auto* shards = history.shards(epochs[slot]);
    return shards && reported_ranks(*shards) >= world;
  };
  for (int slot = newest; slot >= 0 && epochs[slot].generation == epochs[newest].generation; --slot)
    if (complete(slot)) return slot;
  return newest;
}

}  // namespace ringlab::view_model
