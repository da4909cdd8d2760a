#pragma once
// The time a training step takes while a run goes on: rank 0's StepEnd events over the last
// second of its own clock. The status shows it live; the workers' exact figure (their RunEnd)
// replaces it when the run ends. Time held at the step-through gate counts in it, so a gated
// run's status says so instead of showing this.
#include <cstdint>
#include <deque>

namespace ringlab::view_model {

class StepRate {
 public:
  static constexpr int64_t kWindowNs = 1'000'000'000;
  static constexpr double kStallSteps = 20;               // a gap this many steps long is a stall
  static constexpr int64_t kMinStallNs = 50'000'000;      // and at least this long

  // Step `step` ended at `t_ns`. A step that is not after the last one (a new set of workers
  // counting from its checkpoint) starts the measure again.
  void add(int64_t t_ns, int64_t step);
  void clear() { samples_.clear(); }
  // Microseconds per step over the window; 0 until two steps a known time apart.
  double us_per_step() const;
  int64_t last_step_ns() const { return samples_.empty() ? -1 : samples_.back().t_ns; }  // -1: none yet

 private:
  struct Sample {
    int64_t t_ns, step;
  };
  std::deque<Sample> samples_;
};

}  // namespace ringlab::view_model
