#include "engine/rank/seed_report.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/core.h>
#include <fmt/format.h>

#include "engine/job/epoch_shape.h"

namespace ringlab {
namespace {

// Python's list repr of floats: [1.0, 2.0, 3.0]
std::string python_floats(const std::vector<float>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    std::string x = fmt::format("{}", v[i]);
    if (x.find_first_of(".en") == std::string::npos) x += ".0";
    s += (i ? ", " : "") + x;
  }
  return s + "]";
}

}  // namespace

// The seed's lines before its first epoch: its setup, the demo all-reduce, its sampler.
std::string seed_header(const JobConfig& j, const std::vector<float>& demo_output, int64_t batches_per_epoch,
                        int64_t shard_size, const std::vector<int64_t>& first_indices) {
  std::string out;
  out += fmt::format("backend                : {}\n", j.backend);
  out += fmt::format("world_size             : {}\n", j.world_size);
  out += fmt::format("rank of this process   : 0\n");
  // A run that failed before its demo all-reduce ended has no sum to print: "[]" read as one.
  out += demo_output.empty() ? "all-reduce SUM (rank 0): not reached (the run ended before this all-reduce did)\n"
                             : fmt::format("all-reduce SUM (rank 0): {} (sum over all ranks)\n", python_floats(demo_output));
  out += "\n";
  out += fmt::format("batches per epoch      : {} ({} sample{}{} / {})\n", batches_per_epoch, shard_size,
                     shard_size == 1 ? "" : "s", j.world_size > 1 ? " per rank" : "", j.batch_size);
  if (!first_indices.empty()) out += fmt::format("epoch-0 indices, batch 1: [{}] ...\n", fmt::join(first_indices, ", "));
  return out;
}

std::string epoch_line(size_t epoch, double mse) {
  // As Python prints it: a diverged run's nan has no sign ("-nan" is C's).
  return fmt::format("epoch {} done, MSE over the whole dataset: {:.6f}\n", epoch + 1, std::isnan(mse) ? NAN : mse);
}

std::string seed_footer() { return "\ndestroy_process_group  : done\n"; }

LiveReport::LiveReport(const JobConfig& job) : job_(job) {}

void LiveReport::emit(Event event) {
  if (event.rank != 0) return;
  std::lock_guard lock(mutex_);
  if (event.kind == EventKind::CollectiveEnd && event.text == "demo") demo_output_ = event.values;
  if (event.kind == EventKind::SamplerShard && event.epoch == 0 && first_piece(event)) {
    shard_size_ = payload_size(event);
    first_indices_.assign(event.indices.begin(),
                          event.indices.begin() + std::min(kSeedIndicesShown, event.indices.size()));
  }
  if (event.kind != EventKind::EpochEnd) return;
  if (!header_done_) {
    pending_ += seed_header(job_, demo_output_, epoch_shape(job_).steps, shard_size_, first_indices_);
    header_done_ = true;
  }
  pending_ += epoch_line(static_cast<size_t>(std::max(0, event.epoch)), event.value);
}

std::string LiveReport::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(pending_, {});
}

bool LiveReport::started() const {
  std::lock_guard lock(mutex_);
  return header_done_;
}

}  // namespace ringlab
