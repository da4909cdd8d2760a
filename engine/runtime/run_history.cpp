#include "engine/runtime/run_history.h"

#include <algorithm>

#include "engine/core/error.h"

namespace ringlab {

// A shard is stored as its length (int64) followed by its indices (int64 each); a loss as one
// double, so a rank's step k is at byte 8k.

RunHistory::RunHistory(bool keep_all) : keep_all_(keep_all) {}

void RunHistory::add_shard(int rank, const std::vector<int64_t>& indices) {
  if (!keep_all_ && epochs(rank) > 0) return;
  const int64_t n = static_cast<int64_t>(indices.size());
  shards_.append(rank, &n, sizeof n);
  shards_.append(rank, indices.data(), indices.size() * sizeof(int64_t));
  std::lock_guard lock(mutex_);
  ++epochs_[rank];
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
    if (count <= epochs) continue;
    try {
      shards_.truncate(rank, shard_offset(rank, std::max<int64_t>(0, epochs)));
      count = std::max<int64_t>(0, epochs);
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

void RunHistory::for_each_shard(int rank, const std::function<void(const std::vector<int64_t>&)>& fn) const {
  const int64_t count = epochs(rank);
  uint64_t offset = 0;
  std::vector<int64_t> shard;
  for (int64_t e = 0; e < count; ++e) {
    int64_t n = 0;
    shards_.read(rank, offset, &n, sizeof n);
    shard.resize(static_cast<size_t>(n));
    shards_.read(rank, offset + sizeof n, shard.data(), shard.size() * sizeof(int64_t));
    offset += sizeof n + shard.size() * sizeof(int64_t);
    fn(shard);
  }
}

void RunHistory::for_each_step_loss(int rank, const std::function<void(double)>& fn) const {
  constexpr int64_t kBatch = 4096;
  const int64_t count = steps(rank);
  std::vector<double> batch;
  for (int64_t first = 0; first < count; first += kBatch) {
    batch.resize(static_cast<size_t>(std::min(kBatch, count - first)));
    losses_.read(rank, static_cast<uint64_t>(first) * sizeof(double), batch.data(), batch.size() * sizeof(double));
    for (double loss : batch) fn(loss);
  }
}

std::vector<int64_t> RunHistory::first_shard(int rank) const {
  if (epochs(rank) == 0 || !shards_.failure().empty()) return {};
  int64_t n = 0;
  shards_.read(rank, 0, &n, sizeof n);
  std::vector<int64_t> shard(static_cast<size_t>(n));
  shards_.read(rank, sizeof n, shard.data(), shard.size() * sizeof(int64_t));
  return shard;
}

std::string RunHistory::failure() const {
  std::string f = shards_.failure();
  return f.empty() ? losses_.failure() : f;
}

}  // namespace ringlab
