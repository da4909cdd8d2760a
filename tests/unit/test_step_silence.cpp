// `ringlab run`'s note on a run whose steps stopped coming: once per quiet stretch, after the
// stretch has lasted the given time, on a clock the test moves by hand.
#include <doctest/doctest.h>

#include "engine/control/step_silence.h"

using namespace ringlab;
using std::chrono::seconds;

TEST_CASE("steps that stop coming are said once a stretch, after it has lasted long enough") {
  StepSilence silence(seconds(15));
  const StepSilence::Clock::time_point t0{};
  CHECK_FALSE(silence.went_quiet(0, t0));  // the run starts: no step yet
  CHECK_FALSE(silence.went_quiet(0, t0 + seconds(14)));
  CHECK(silence.went_quiet(0, t0 + seconds(15)));  // 15 s after the start with no step
  CHECK(silence.quiet_for(t0 + seconds(15)) == seconds(15));
  CHECK_FALSE(silence.went_quiet(0, t0 + seconds(40)));  // said once for this stretch

  CHECK_FALSE(silence.went_quiet(7, t0 + seconds(41)));  // the steps moved: a new stretch
  CHECK_FALSE(silence.went_quiet(7, t0 + seconds(50)));
  CHECK(silence.went_quiet(7, t0 + seconds(56)));
  CHECK(silence.quiet_for(t0 + seconds(56)) == seconds(15));
}

TEST_CASE("steps that keep coming are never said to have stopped") {
  StepSilence silence(seconds(15));
  const StepSilence::Clock::time_point t0{};
  for (int s = 0; s < 100; ++s) CHECK_FALSE(silence.went_quiet(s, t0 + seconds(10 * s)));
}
