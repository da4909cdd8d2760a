#pragma once
// The course script's printed lines, from a run's events: its setup and sampler, then one line per
// epoch with the MSE over the whole dataset, then "destroy_process_group  : done". `ringlab run`
// prints them as its ranks train; a worker started by hand (torchrun-style, or by srun) with no
// controller to report to prints them itself, from rank 0.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "engine/events/event.h"
#include "engine/job/job_config.h"

namespace ringlab {

constexpr size_t kSeedIndicesShown = 8;  // the first batch's indices the script prints

// The lines before the first epoch: the setup, the demo all-reduce's result, the sampler's first batch.
std::string seed_header(const JobConfig& j, const std::vector<float>& demo_output, int64_t batches_per_epoch,
                        int64_t shard_size, const std::vector<int64_t>& first_indices);
std::string epoch_line(size_t epoch, double mse);  // "epoch 1 done, MSE over the whole dataset: 0.900974"
std::string seed_footer();                          // the last line of a run that went to its end

// The lines as the run goes: the header once rank 0 has finished its first epoch (it needs the
// demo's result and the first shard, which come before), then a line per epoch. emit() may be
// called on any thread, take() on the one that prints.
class LiveReport : public EventSink {
 public:
  explicit LiveReport(const JobConfig& job);
  void emit(Event event) override;
  std::string take();    // the lines finished since the last call
  bool started() const;  // the header is out: the end adds only what is left

 private:
  const JobConfig job_;
  mutable std::mutex mutex_;
  std::vector<float> demo_output_;
  int64_t shard_size_ = 0;
  std::vector<int64_t> first_indices_;
  bool header_done_ = false;
  std::string pending_;
};

}  // namespace ringlab
