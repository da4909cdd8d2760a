#pragma once
// The recent collectives, each with every rank's begin/end and every chunk transfer, so the
// ring view can replay any of them step by step. Events of one collective arrive interleaved
// with other ranks' later collectives (gate waits inside a ring count too); they are matched by
// (generation, collective id), where a
// generation is one set of worker processes (a live change of world size starts a new one and
// its collective ids start again).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "engine/events/event.h"

namespace ringlab::view_model {

struct CollectiveKey {
  int generation = 0;
  int64_t id = -1;
  auto operator<=>(const CollectiveKey&) const = default;
};

struct ChunkTransferRecord {
  RingPhase phase = RingPhase::None;
  int ring_step = -1;
  int chunk = -1;
  int segment = -1;
  int src = -1;
  int dst = -1;
  int reporter = -1;  // the rank that reported the transfer
  int64_t bytes = 0;
  int64_t t_begin_ns = 0;
  int64_t t_end_ns = 0;
  std::vector<float> values;  // the receiver's chunk after the step; empty when not recorded
};

struct RankCollectiveSpan {
  bool began = false;
  bool ended = false;
  int64_t t_begin_ns = 0;
  int64_t t_end_ns = 0;
  std::vector<float> input;  // this rank's tensor before the all-reduce, when recorded
  int64_t gate_wait_ns = 0;  // time spent waiting at the step-through gate inside it
  int64_t step = -1;         // the training step this rank called it in
};

struct CollectiveRecord {
  CollectiveKey key;
  int world_size = 0;
  int bucket = -1;
  int64_t bytes = 0;
  // The training step most ranks called it in (the lowest of a tie): a rank that skipped or added
  // a collective calls this one at another step, which its span keeps.
  int64_t step = -1;
  std::string algorithm;  // "ring" | "native" | "broadcast" | "demo"
  std::vector<RankCollectiveSpan> ranks;  // indexed by rank
  std::vector<ChunkTransferRecord> transfers;  // in arrival order

  int64_t elements() const { return bytes / static_cast<int64_t>(sizeof(float)); }
  bool complete() const;  // every rank of the world reported its end
};

class CollectiveLog {
 public:
  explicit CollectiveLog(size_t capacity = 512);

  // `generation` is the reporting rank's generation; `world_size` that generation's size (0 if
  // not known yet). Ignores events that do not belong to a collective.
  void consume(const Event& event, int generation, int world_size);
  void clear();

  size_t size() const { return records_.size(); }
  const CollectiveRecord& at(size_t i) const { return records_[i]; }  // oldest first
  const CollectiveRecord* find(const CollectiveKey& key) const;
  // Index of the most recent collective with chunk transfers whose every rank has ended, or -1.
  long latest_complete_ring() const;
  uint64_t total_seen() const { return total_seen_; }  // including the forgotten ones

 private:
  static constexpr size_t kNewestLookedAt = 4;  // records compared before the map (newest_with)
  CollectiveRecord* newest_with(const CollectiveKey& key);
  CollectiveRecord& record_for(const Event& event, int generation, int world_size);
  void add_gate_wait(const Event& event, int generation);

  size_t capacity_;
  std::deque<CollectiveRecord> records_;
  std::map<CollectiveKey, uint64_t> sequence_of_;  // key -> sequence number
  uint64_t first_sequence_ = 0;                    // sequence number of records_.front()
  uint64_t total_seen_ = 0;
  // The collective each rank is inside (begun, not ended): a wait at the step-through gate
  // reported without a collective id belongs to it.
  std::map<std::pair<int, int>, CollectiveKey> open_;  // (generation, rank) -> collective
};

}  // namespace ringlab::view_model
