#pragma once
// A run whose steps stop coming: ranks that wait in a collective for a peer that never joins it
// wait until their own timeout (a PyTorch script's process group, a minute by default), and
// meanwhile only a progress bar stands still. `ringlab run` says so once per quiet stretch.
#include <chrono>
#include <cstdint>

namespace ringlab {

class StepSilence {
 public:
  using Clock = std::chrono::steady_clock;
  explicit StepSilence(std::chrono::seconds after) : after_(after) {}

  // `steps` counted so far at `now`: true once a stretch without a new one reaches `after`, then
  // not again until the steps have moved and gone quiet again.
  bool went_quiet(int64_t steps, Clock::time_point now);
  // How long the steps have not moved, at `now`.
  std::chrono::seconds quiet_for(Clock::time_point now) const;

 private:
  std::chrono::seconds after_;
  int64_t steps_ = -1;  // none seen yet: the first call starts the stretch
  Clock::time_point since_{};
  bool said_ = false;
};

}  // namespace ringlab
