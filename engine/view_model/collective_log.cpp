#include "engine/view_model/collective_log.h"

#include <algorithm>

namespace ringlab::view_model {

namespace {

int64_t most_common_step(const std::vector<RankCollectiveSpan>& ranks) {
  int64_t best = -1;
  long best_count = 0;
  for (const RankCollectiveSpan& r : ranks) {
    if (!r.began) continue;
    const long count = std::count_if(ranks.begin(), ranks.end(), [&](const RankCollectiveSpan& o) { return o.began && o.step == r.step; });
    if (count > best_count || (count == best_count && r.step < best)) {
      best = r.step;
      best_count = count;
    }
  }
  return best;
}

}  // namespace

bool CollectiveRecord::complete() const {
  if (world_size <= 0 || static_cast<int>(ranks.size()) < world_size) return false;
  for (int r = 0; r < world_size; ++r)
    if (!ranks[r].ended) return false;
  return true;
}

CollectiveLog::CollectiveLog(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

void CollectiveLog::clear() {
  records_.clear();
  sequence_of_.clear();
  first_sequence_ = 0;
  total_seen_ = 0;
  open_.clear();
}

const CollectiveRecord* CollectiveLog::find(const CollectiveKey& key) const {
  auto it = sequence_of_.find(key);
  if (it == sequence_of_.end()) return nullptr;
  return &records_[it->second - first_sequence_];
}

long CollectiveLog::latest_complete_ring() const {
  for (size_t i = records_.size(); i-- > 0;)
    if (records_[i].complete() && !records_[i].transfers.empty()) return static_cast<long>(i);
  return -1;
}

// Nearly every event is of one of the newest few collectives: looked for there before the map,
// whose search misses the cache at 100,000 and more events a second.
CollectiveRecord* CollectiveLog::newest_with(const CollectiveKey& key) {
  const size_t newest = std::min(records_.size(), kNewestLookedAt);
  for (size_t back = 1; back <= newest; ++back)
    if (records_[records_.size() - back].key == key) return &records_[records_.size() - back];
  return nullptr;
}

CollectiveRecord& CollectiveLog::record_for(const Event& event, int generation, int world_size) {
  CollectiveKey key{generation, event.collective_id};
  auto it = sequence_of_.find(key);
  if (it != sequence_of_.end()) return records_[it->second - first_sequence_];

  if (records_.size() == capacity_) {
    sequence_of_.erase(records_.front().key);
    records_.pop_front();
    ++first_sequence_;
  }
  CollectiveRecord record;
  record.key = key;
  record.world_size = world_size;
  records_.push_back(std::move(record));
  sequence_of_[key] = first_sequence_ + records_.size() - 1;
  ++total_seen_;
  return records_.back();
}

void CollectiveLog::add_gate_wait(const Event& event, int generation) {
  auto open = open_.find({generation, event.rank});
  if (open == open_.end()) return;
  auto it = sequence_of_.find(open->second);
  if (it == sequence_of_.end()) return;
  CollectiveRecord& record = records_[it->second - first_sequence_];
  if (event.rank < static_cast<int>(record.ranks.size()))
    record.ranks[event.rank].gate_wait_ns += std::max<int64_t>(event.t_end_ns - event.t_begin_ns, 0);
}

void CollectiveLog::consume(const Event& event, int generation, int world_size) {
  if (event.kind == EventKind::GateWait && event.collective_id < 0 && event.rank >= 0) {
    add_gate_wait(event, generation);
    return;
  }
  const bool belongs = event.kind == EventKind::CollectiveBegin ||
                       event.kind == EventKind::CollectiveEnd ||
                       event.kind == EventKind::ChunkTransfer || event.kind == EventKind::GateWait;
  if (!belongs || event.collective_id < 0 || event.rank < 0) return;
  // A stale event for a collective that was already forgotten must not bring it back.
  CollectiveKey key{generation, event.collective_id};
  CollectiveRecord* recent = newest_with(key);
  if (!recent && !sequence_of_.count(key) && !records_.empty() && key < records_.front().key &&
      key.generation == records_.front().key.generation)
    return;

  CollectiveRecord& record = recent ? *recent : record_for(event, generation, world_size);
  if (record.world_size <= 0) record.world_size = world_size;
  int highest_rank = std::max({event.rank, event.src, event.dst});
  if (static_cast<int>(record.ranks.size()) <= highest_rank) record.ranks.resize(highest_rank + 1);
  if (record.world_size > 0 && static_cast<int>(record.ranks.size()) < record.world_size)
    record.ranks.resize(record.world_size);

  RankCollectiveSpan& span = record.ranks[event.rank];
  switch (event.kind) {
    case EventKind::CollectiveBegin:
      open_[{generation, event.rank}] = record.key;
      span.began = true;
      span.t_begin_ns = event.t_begin_ns;
      span.input = event.values;
      if (record.bucket < 0) record.bucket = event.bucket;
      if (record.bytes == 0) record.bytes = event.bytes;
      span.step = event.step;
      if (record.step != event.step) record.step = most_common_step(record.ranks);  // a rank at another step
      if (record.algorithm.empty()) record.algorithm = event.text;
      break;
    case EventKind::GateWait:
      span.gate_wait_ns += std::max<int64_t>(event.t_end_ns - event.t_begin_ns, 0);
      break;
    case EventKind::CollectiveEnd:
      if (auto open = open_.find({generation, event.rank}); open != open_.end() && open->second == record.key)
        open_.erase(open);
      span.ended = true;
      if (!span.began) span.t_begin_ns = event.t_begin_ns;
      span.t_end_ns = event.t_end_ns;
      break;
    default: {
      ChunkTransferRecord t;
      t.phase = static_cast<RingPhase>(event.phase);
      t.ring_step = event.ring_step;
      t.chunk = event.chunk;
      t.segment = event.segment;
      t.src = event.src;
      t.dst = event.dst;
      t.reporter = event.rank;
      t.bytes = event.bytes;
      t.t_begin_ns = event.t_begin_ns;
      t.t_end_ns = event.t_end_ns;
      t.values = event.values;
      record.transfers.push_back(std::move(t));
      break;
    }
  }
}

}  // namespace ringlab::view_model
