#pragma once
// What `ringlab run` prints (the seed script's report, in English) and writes with --report.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "engine/control/controller.h"

namespace ringlab::app {

std::string format_seed_report(const RunResult& r);
std::string seed_footer();  // the last line of a run that went to its end
void write_report_json(const RunResult& r, const std::string& path);

// The seed report as the run goes, for `ringlab run` to print while it trains: the header once
// rank 0 has finished its first epoch (it needs the demo's result and the first shard, which
// come before), then a line per epoch. emit() is called on the controller's threads, take() on
// the one that prints.
class LiveReport : public EventSink {
 public:
  explicit LiveReport(const JobConfig& job);
  void emit(Event event) override;
  std::string take();      // the lines finished since the last call
  bool started() const;    // the header is out: the end adds only what is left

 private:
  const JobConfig job_;
  mutable std::mutex mutex_;
  std::vector<float> demo_output_;
  int64_t shard_size_ = 0;
  std::vector<int64_t> first_indices_;
  bool header_done_ = false;
  std::string pending_;
};

}  // namespace ringlab::app
