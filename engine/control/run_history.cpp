#include "engine/control/run_history.h"

#include <algorithm>

#include "engine/core/error.h"

namespace ringlab {

// A shard is stored as its length (int64) followed by its indices (int64 each); a loss as one
// double, so a rank's step k is at byte 8k.

RunHistory::RunHistory(bool keep_all) : keep_all_(keep_all) {}

void RunHistory::add_shard(int rank, const std::vector<int64_t>& indices) {
  add_shard_piece(rank, static_cast<int64_t>(indices.size()), 0, indices);
}

void RunHistory::add_shard_piece(int rank, int64_t total, int64_t offset, const std::vector<int64_t>& indices) {
  std::lock_guard lock(mutex_);
  OpenShard& open = open_[rank];
  const int64_t n = static_cast<int64_t>(indices.size());
  if (offset == 0) {
    if (!keep_all_ && epochs_[rank] > 0) return;
    if (open.missing > 0) shards_.truncate(rank, open.complete_bytes);  // the last one never finished
    open.complete_bytes = shards_.size(rank);
    open.missing = total;
    shards_.append(rank, &total, sizeof total);
  } else if (open.missing <= 0 || offset != total - open.missing) {
    return;  // a piece of a shard whose beginning was dropped (or is out of order): not kept
  }
  shards_.append(rank, indices.data(), indices.size() * sizeof(int64_t));
  open.missing -= n;
  if (open.missing <= 0) {
    open.missing = 0;
    ++epochs_[rank];
  }
}

void RunHistory::add_step_loss(int rank, double loss) {
  if (keep_all_) losses_.append(rank, &loss, sizeof loss);
}

uint64_t RunHistory::shard_offset(int rank, int64_t epoch) const {
  uint64_t offset = 0;
  for (int64_t e = 0; e < epoch; ++e) {
    int64_t n = 0;
    shards_.read(rank, offset, &n, sizeof n);
    offset += sizeof n + static_cast<uint64_t>(n) * sizeof(int64_t);
  }
  return offset;
}

void RunHistory::rewind(int64_t epochs, int64_t steps) {
  for (int rank : losses_.ranks())
    losses_.truncate(rank, std::min(losses_.size(rank), static_cast<uint64_t>(std::max<int64_t>(0, steps)) * sizeof(double)));
  if (!shards_.failure().empty()) return;  // nothing more is kept; the report will say why
  std::lock_guard lock(mutex_);
  for (auto& [rank, count] : epochs_) {
    if (count <= epochs && open_[rank].missing == 0) continue;
    try {
      const int64_t kept = std::min(count, std::max<int64_t>(0, epochs));
      shards_.truncate(rank, shard_offset(rank, kept));
      count = kept;
      open_[rank] = {};
    } catch (const Error&) {
      return;  // a write failed: the spool keeps the reason and the report's reader throws it
    }
  }
}

int64_t RunHistory::epochs(int rank) const {
  std::lock_guard lock(mutex_);
  const auto it = epochs_.find(rank);
  return it == epochs_.end() ? 0 : it->second;
}

int64_t RunHistory::steps(int rank) const { return static_cast<int64_t>(losses_.size(rank) / sizeof(double)); }

namespace {

// Reads the next shard (its length, then its indices).
void read_shard(RankSpool::Reader& in, std::vector<int64_t>& shard) {
  shard.resize(static_cast<size_t>(in.read<int64_t>()));
  in.read(shard.data(), shard.size() * sizeof(int64_t));
}

}  // namespace

void RunHistory::for_each_shard(int rank, const std::function<void(const std::vector<int64_t>&)>& fn) const {
  const int64_t count = epochs(rank);
  RankSpool::Reader in(shards_, rank);
  std::vector<int64_t> shard;
  for (int64_t e = 0; e < count; ++e) {
    read_shard(in, shard);
    fn(shard);
  }
}

void RunHistory::for_each_step_loss(int rank, const std::function<void(double)>& fn) const {
  RankSpool::Reader in(losses_, rank);
  while (!in.done()) fn(in.read<double>());
}

std::vector<int64_t> RunHistory::first_shard(int rank) const {
  std::vector<int64_t> shard;
  if (epochs(rank) == 0 || !shards_.failure().empty()) return shard;
  RankSpool::Reader in(shards_, rank);
  read_shard(in, shard);
  return shard;
}

std::string RunHistory::failure() const {
  std::string f = shards_.failure();
  return f.empty() ? losses_.failure() : f;
}

}  // namespace ringlab
