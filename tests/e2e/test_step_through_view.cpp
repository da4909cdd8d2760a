// Replay during a live run, as a class uses it: pick Replay, go back with Previous, while the
// workers go on at full speed. The app's log keeps the newest 512 all-reduces, so a fast run
// replaces the one on screen within a fraction of a second; Previous then jumped to the newest
// all-reduce. Replay now goes back over a copy of the log taken when it was chosen.
#include <doctest/doctest.h>

#include <cstdint>

#include "engine/view_model/run_model.h"
#include "tests/support/run_events.h"
#include "viz/app_state.h"
#include "viz/views.h"

using namespace ringlab;

namespace {

constexpr int kRanks = 4;

// All-reduces [first, last) of the 4-rank ring, at full speed.
void ring_allreduces(view_model::RunModel& model, int64_t first, int64_t last) { test::ring_allreduces(model, kRanks, first, last); }

int64_t shown_id(const view_model::RunModel& model, const viz::AppState& state) {
  const view_model::CollectiveRecord* shown = viz::ShownCollective(model, state);
  return shown ? shown->key.id : -1;
}

// Previous from the all-reduce's end back past its start: into the one before it.
void previous_all_reduce(const view_model::RunModel& model, viz::AppState& state) {
  for (int i = 0; i <= 2 * (kRanks - 1); ++i) viz::StepBack(model, state);
}

}  // namespace

TEST_CASE("Replay during a live run goes back over what was recorded when it was chosen") {
  view_model::RunModel model;
  for (int r = 0; r < kRanks; ++r) model.consume(test::run_begin_event(r, kRanks, "gloo"));
  ring_allreduces(model, 0, 600);
  viz::AppState state;
  state.run.phase = viz::RunPhase::Running;
  viz::SetRingMode(model, state, viz::RingMode::Replay);
  viz::AdvanceStepThrough(model, state);
  const int64_t first = shown_id(model, state);
  REQUIRE(first >= 500);
  previous_all_reduce(model, state);
  CHECK(shown_id(model, state) == first - 1);

  // The workers go on: 600 more all-reduces, and the live log no longer holds any of those above.
  ring_allreduces(model, 600, 1200);
  viz::AdvanceStepThrough(model, state);
  CHECK(shown_id(model, state) == first - 1);
  previous_all_reduce(model, state);
  CHECK(shown_id(model, state) == first - 2);  // not the newest (1199), as Previous went before
}
