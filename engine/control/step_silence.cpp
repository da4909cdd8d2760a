#include "engine/control/step_silence.h"

namespace ringlab {

bool StepSilence::went_quiet(int64_t steps, Clock::time_point now) {
  if (steps != steps_) {
    steps_ = steps;
    since_ = now;
    said_ = false;
    return false;
  }
  if (said_ || now - since_ < after_) return false;
  said_ = true;
  return true;
}

std::chrono::seconds StepSilence::quiet_for(Clock::time_point now) const {
  return std::chrono::duration_cast<std::chrono::seconds>(now - since_);
}

}  // namespace ringlab
