#pragma once
// The time a training step takes while a run goes on: rank 0's StepEnd events over the last
// second of its own clock. The status shows it live; the workers' exact figure (their RunEnd)
// replaces it when the run ends. Time held at the step-through gate counts in it, so a gated
// run's status says so instead of showing this.
#include <cstdint>
#include <deque>

#include "engine/core/slowest_step.h"

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

// A whole world's step time from rank 0's events, as the workers time it for their RunEnd: each
// step from its begin to its end, less what the gate held it (a pause, the step-through). The
// workers' own figure is lost when they are ended at once (a Stop while held at the gate).
//
// Its steps that the gate never held are timed apart: a held step's time, its own waits taken out,
// still holds its peers' (each looks for the next release every 20 ms, and the ring waits for the
// last to see it), so only those say how fast a run that was stepped through for a while trains.
class StepPace {
 public:
  void begin_step() {
    held_in_step_ns_ = 0;
    held_in_step_ = false;
  }
  void held(int64_t ns) {
    held_in_step_ns_ += ns > 0 ? ns : 0;
    held_in_step_ = true;
  }
  void end_step(int64_t step_ns, int64_t step) {
    const int64_t trained = step_ns - held_in_step_ns_;
    train_ns_ += trained > 0 ? trained : 0;
    slowest_.add(step, trained > 0 ? trained : 0);
    ++steps_;
    if (!held_in_step_) {
      free_ns_ += step_ns > 0 ? step_ns : 0;
      ++free_steps_;
    }
    begin_step();
  }
  double us_per_step() const { return per_step_us(train_ns_, steps_); }
  int64_t steps() const { return steps_; }
  const SlowestStep& slowest() const { return slowest_; }  // its time less what the gate held it
  // The steps the gate did not hold, and their time a step.
  int64_t ungated_steps() const { return free_steps_; }
  double ungated_us_per_step() const { return per_step_us(free_ns_, free_steps_); }

 private:
  static double per_step_us(int64_t ns, int64_t steps) {
    return steps > 0 ? static_cast<double>(ns) * 1e-3 / static_cast<double>(steps) : 0.0;
  }
  int64_t held_in_step_ns_ = 0, train_ns_ = 0, steps_ = 0;
  bool held_in_step_ = false;
  SlowestStep slowest_;
  int64_t free_ns_ = 0, free_steps_ = 0;
};

}  // namespace ringlab::view_model
