// The Sampler's cells and their numbers, drawn without a window: a finished 4-rank epoch of 256
// samples (64 indices a rank), in a pane the size the app gives it beside the ring and in one
// enlarged. Show order labels each cell with its place in its rank's shard; where the cells are
// too small for numbers, the pane says so rather than leave the tick without a visible effect.
#include <doctest/doctest.h>

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/view_model/run_model.h"
#include "tests/support/headless_imgui.h"
#include "tests/support/run_events.h"
#include "viz/app_state.h"
#include "viz/fonts.h"
#include "viz/views.h"

using namespace ringlab;

namespace {

// `short_rank`'s shard holds 32 indices instead of 64 (its sampler saw another dataset), or none.
// `epoch`: the one its shards are of (a world after a live change goes on from a later epoch);
// `set_epoch`: the job's.
view_model::RunModel one_epoch_of_four_ranks(int short_rank = -1, int epoch = 0, bool set_epoch = true) {
  view_model::RunModel model;
  JobConfig job;
  job.world_size = 4;
  job.samples = 256;
  job.set_epoch = set_epoch;
  for (int r = 0; r < 4; ++r) model.consume(test::run_begin_event(r, job));
  for (int r = 0; r < 4; ++r) {
    Event e;
    e.kind = EventKind::SamplerShard;
    e.rank = r;
    e.step = 0;
    e.epoch = epoch;
    for (int64_t i = 0; i < (r == short_rank ? 32 : 64); ++i) e.indices.push_back((i * 4 + r * 37) % 256);
    model.consume(e);
  }
  return model;
}

viz::SaidOnScreen drawn(ImVec2 pane, bool show_order, int short_rank = -1, int epoch = 0, bool set_epoch = true) {
  test::HeadlessImGui imgui{ImVec2(1400, 1000)};
  viz::load_fonts(14.0f);  // the app's text in a 1280x720 window (18 px at 1080 lines, scaled)
  ImGui::GetIO().Fonts->Build();
  const view_model::RunModel model = one_epoch_of_four_ranks(short_rank, epoch, set_epoch);
  viz::AppState state;
  state.run.phase = viz::RunPhase::Finished;
  state.job.samples = 256;
  state.sampler.label_order = show_order;
  ImGui::NewFrame();
  ImGui::SetNextWindowPos(ImVec2(10, 10));
  ImGui::SetNextWindowSize(pane);
  ImGui::Begin("sampler", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoScrollbar);
  viz::DrawSamplerView(model, state);
  ImGui::End();
  ImGui::Render();
  return state.said;
}

}  // namespace

TEST_CASE("Show order in a pane too small for numbers says so; enlarged, the cells carry their places") {
  // The panes of a 1280x720 window: beside the ring, and enlarged (cells about 20 pixels wide,
  // where numbers written at the pane's usual size did not fit and none were drawn).
  const ImVec2 beside_the_ring(390, 210), enlarged(590, 420);
  const viz::SaidOnScreen small = drawn(beside_the_ring, true);
  CHECK(small.sampler_numbers.empty());
  CHECK(small.sampler_note == "Show order: cells too small for numbers; enlarge the pane");
  const viz::SaidOnScreen small_plain = drawn(beside_the_ring, false);
  CHECK(small_plain.sampler_numbers.empty());
  CHECK(small_plain.sampler_note.empty());  // nothing asked that cannot be seen
  const viz::SaidOnScreen big = drawn(enlarged, true);
  CHECK(big.sampler_numbers == "order");
  CHECK(big.sampler_note.empty());
  CHECK(drawn(enlarged, false).sampler_numbers == "index");
  // A narrow pane (a large text size): the short form, not the long one cut at the pane's edge.
  CHECK(drawn(ImVec2(250, 210), true).sampler_note == "Show order: enlarge the pane");
}

// A PyTorch script whose rank 1 built its DistributedSampler over half the dataset: the summary
// said "64 per rank · 37 padded repeats" and nothing of it, though those ranks cannot take the
// same number of steps.
TEST_CASE("shards of different lengths are named, rank by rank") {
  CHECK(drawn(ImVec2(900, 600), false).sampler_shards_differ.empty());
  CHECK(drawn(ImVec2(900, 600), false, 1).sampler_shards_differ ==
        "The ranks' shards differ in length (rank 0: 64, rank 1: 32, rank 2: 64, rank 3: 64): their samplers do not "
        "see the same dataset, and the ranks will not take the same number of steps");
}

// The line under the ranks' orders that did not all fit ran on past a narrow pane's edge (after a
// live change it named more ranks and grew): the first of its forms that fits.
TEST_CASE("ranks whose order does not fit are named in a line that fits the pane") {
  CHECK(drawn(ImVec2(390, 155), false).sampler_more == "each rank's indices in order: enlarge the pane");
  // Five pixels less and the line would be cut at the pane's edge (1.1x text at 1280x720): none.
  CHECK(drawn(ImVec2(390, 150), false).sampler_more.empty());
  CHECK(drawn(ImVec2(390, 210), false).sampler_more == "the order of 3 more ranks: enlarge the pane");
  CHECK(drawn(ImVec2(250, 210), false).sampler_more == "indices in order: enlarge the pane");
  CHECK(drawn(ImVec2(250, 270), false).sampler_more == "2 more ranks: enlarge the pane");
  CHECK(drawn(ImVec2(150, 260), false).sampler_more == "enlarge the pane");  // its lines above wrap: taller
  CHECK(drawn(ImVec2(590, 420), false).sampler_more.empty());  // enlarged: every rank's order drawn
}

// A world that goes on after a live change deals its first shards at a later epoch: the line under
// them said "The first epoch: shuffled with the seed, set_epoch(0)" beside "epoch 4,763".
TEST_CASE("a world's first epoch after a live change is said with its own set_epoch, not epoch 0's") {
  const ImVec2 pane(590, 420);
  CHECK(drawn(pane, false).sampler_order == "The first epoch: shuffled with the seed, set_epoch(0)");
  CHECK(drawn(pane, false, -1, 4762).sampler_order == "This world's first epoch: set_epoch(4,762) shuffles it with the seed + 4,762");
  CHECK(drawn(pane, false, -1, 4762, false).sampler_order ==
        "This world's first epoch: set_epoch is not called, so it has epoch 0's order");
}
