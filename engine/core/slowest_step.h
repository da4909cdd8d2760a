#pragma once
// The slowest of a run's steps, which a mean hides. A script whose rank 1 slept 40 s before
// training made rank 0's first step 40 s long, waiting in its first all-reduce, and the run's 16
// steps then read "2,503,775 µs per step": true of the mean, and of no step at all.
#include <cstdint>
#include <optional>

namespace ringlab {

struct SlowestStep {
  int64_t step = -1;  // -1: no step yet
  int64_t ns = 0;

  void add(int64_t at_step, int64_t step_ns) {
    if (step < 0 || step_ns > ns) {
      step = at_step;
      ns = step_ns;
    }
  }
};

// The mean of the other steps (µs), when the slowest alone makes up most of the run's time: the
// mean over all `steps` (`us_per_step`) at least twice theirs, over three steps or more. None
// otherwise: a run whose steps are alike reads right from its mean.
inline std::optional<double> others_us_per_step(double us_per_step, int64_t steps, const SlowestStep& slowest) {
  if (steps < 3 || slowest.step < 0 || us_per_step <= 0) return std::nullopt;
  const double others = (us_per_step * static_cast<double>(steps) - static_cast<double>(slowest.ns) * 1e-3) /
                        static_cast<double>(steps - 1);
  if (others <= 0 || us_per_step < 2 * others) return std::nullopt;
  return others;
}

}  // namespace ringlab
