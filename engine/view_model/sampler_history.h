#pragma once
// The shards every rank reported, per epoch, and which batch each rank is training on now.
// Bounded: once more than `max_indices` indices are held, the oldest epochs are forgotten.
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "engine/view_model/sampler_grid.h"
#include "engine/events/event.h"

namespace ringlab::view_model {

struct EpochKey {
  int generation = 0;
  int epoch = 0;
  auto operator<=>(const EpochKey&) const = default;
};

struct RankBatch {
  int generation = 0;
  int epoch = -1;
  int64_t batch = -1;  // index of the batch within the epoch
};

class SamplerHistory {
 public:
  explicit SamplerHistory(size_t max_indices = 1'000'000);

  void consume(const Event& event, int generation);
  void clear();

  std::vector<EpochKey> epochs() const;  // in order
  // shards[r] for that epoch; ranks that did not report are empty.
  const std::vector<std::vector<int64_t>>* shards(const EpochKey& key) const;
  // The rank's current batch (from its latest step), or epoch -1 when unknown.
  RankBatch current_batch(int rank) const;
  // The newest epoch some rank of `generation` took a step in; epoch -1 when none did.
  EpochKey newest_trained(int generation) const;
  int ranks() const { return static_cast<int>(batches_.size()); }
  size_t held_indices() const { return held_indices_; }

 private:
  void forget_oldest();

  size_t max_indices_;
  size_t held_indices_ = 0;
  std::map<EpochKey, std::vector<std::vector<int64_t>>> shards_;
  // First step each rank took in each epoch: the batch index is the distance from it.
  std::map<std::pair<EpochKey, int>, int64_t> first_step_;  // (epoch, rank), oldest first
  std::vector<RankBatch> batches_;
};

// Ranks whose shard of an epoch has arrived (a rank that failed, or whose events are still on
// their way, has an empty one).
int reported_ranks(const std::vector<std::vector<int64_t>>& shards);

// An epoch's shards for a world of `world` ranks: one per rank, empty for those not reported
// yet, so that the grid counts every rank of the run and not only those heard from so far.
// `world` <= 0 (unknown) keeps the shards as they are.
std::vector<std::vector<int64_t>> shards_of_world(const std::vector<std::vector<int64_t>>& shards, int world);

// Which of `epochs` (in order) "Newest epoch" shows: while a run goes on, the newest epoch of its
// newest set of workers that all `world` ranks have reported (each rank sends its events every
// few milliseconds, and a short epoch is over by then: the newest few are still partial), or the
// newest when none is complete yet. A finished, stopped or failed run shows the epoch of its last
// step (complete or not), or its newest when no step was taken. -1 when there are no epochs.
int followed_epoch(const SamplerHistory& history, const std::vector<EpochKey>& epochs, int world, bool live);

}  // namespace ringlab::view_model
