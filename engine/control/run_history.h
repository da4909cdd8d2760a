#pragma once
// Each rank's history over a whole run: its sampler shard of every epoch and its loss at every
// step, in the order they happened. It grows with the run (2 ranks x 1,000 epochs x 3,200
// indices is 51 MB of shards), so it lives on disk in a RankSpool, not in the controller's
// memory; the run's report is its reader. One writer (the controller's fold) and any number of
// readers at a time.
//
// Without `keep_all` (the app, which draws from the events) only each rank's first shard is
// kept, for the summary; complete() is then false and a report cannot be written from it.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "engine/events/rank_spool.h"

namespace ringlab {

class RunHistory {
 public:
  explicit RunHistory(bool keep_all = true);

  void add_shard(int rank, const std::vector<int64_t>& indices);
  // A shard that arrives in pieces (see event.h): the piece at `offset` of a shard of `total`
  // indices. The shard counts once its last piece is in; one left incomplete (its rank died
  // midway) is dropped when the rank's next shard begins.
  void add_shard_piece(int rank, int64_t total, int64_t offset, const std::vector<int64_t>& indices);
  void add_step_loss(int rank, double loss);
  // A restart from the checkpoint taken after `epochs` epochs (`steps` steps): what the ranks
  // did after it is done again, so it is dropped.
  void rewind(int64_t epochs, int64_t steps);

  int64_t epochs(int rank) const;  // shards recorded for this rank
  int64_t steps(int rank) const;   // losses recorded for this rank
  // Calls fn for each of the rank's shards (losses), in order; throws Error if the history could
  // not be kept (a failed write: the report would have a hole).
  void for_each_shard(int rank, const std::function<void(const std::vector<int64_t>&)>& fn) const;
  void for_each_step_loss(int rank, const std::function<void(double)>& fn) const;
  std::vector<int64_t> first_shard(int rank) const;  // epoch 0's; empty if none, or if a write failed
  std::string failure() const;                       // "" unless a write failed
  bool complete() const { return keep_all_; }

 private:
  uint64_t shard_offset(int rank, int64_t epoch) const;

  RankSpool shards_{"the run's sampler shards"};
  RankSpool losses_{"the run's step losses"};
  bool keep_all_;
  mutable std::mutex mutex_;
  std::map<int, int64_t> epochs_;  // complete shards per rank
  struct OpenShard {
    int64_t missing = 0;            // indices of the rank's last shard still to come
    uint64_t complete_bytes = 0;    // where its stream ends without that shard
  };
  std::map<int, OpenShard> open_;   // guarded by mutex_
};

}  // namespace ringlab
