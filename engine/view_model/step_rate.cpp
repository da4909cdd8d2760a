#include "engine/view_model/step_rate.h"

#include <algorithm>

namespace ringlab::view_model {

void StepRate::add(int64_t t_ns, int64_t step) {
  if (!samples_.empty() && (step <= samples_.back().step || t_ns < samples_.back().t_ns)) samples_.clear();
  // A gap far longer than the steps before it is a stall (Pause, a hold at the gate), not the
  // pace: the measure starts again after it rather than average the stall in.
  if (samples_.size() >= 2 && t_ns - samples_.back().t_ns > std::max(kStallSteps * us_per_step() * 1e3, double(kMinStallNs)))
    samples_.clear();
  samples_.push_back({t_ns, step});
  // Keep the newest sample at least a window old as the start, so the measure spans a second.
  while (samples_.size() > 2 && samples_[1].t_ns <= t_ns - kWindowNs) samples_.pop_front();
}

double StepRate::us_per_step() const {
  if (samples_.size() < 2) return 0.0;
  const Sample& a = samples_.front();
  const Sample& b = samples_.back();
  if (b.t_ns <= a.t_ns) return 0.0;
  return static_cast<double>(b.t_ns - a.t_ns) / 1e3 / static_cast<double>(b.step - a.step);
}

}  // namespace ringlab::view_model
