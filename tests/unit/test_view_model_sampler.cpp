// The sampler view's model: owners, padded repeats and batches from reported shards.
#include <doctest/doctest.h>

#include <vector>

#include "engine/view_model/sampler_grid.h"
#include "engine/view_model/run_model.h"
#include "engine/view_model/sampler_history.h"
#include "tests/support/run_events.h"

using namespace ringlab;
using namespace ringlab::view_model;

TEST_CASE("10 indices over 4 ranks: two padded repeats") {
  // DistributedSampler without shuffle: 0..9 padded with 0, 1 to 12, dealt round-robin.
  const std::vector<std::vector<int64_t>> shards = {{0, 4, 8}, {1, 5, 9}, {2, 6, 0}, {3, 7, 1}};
  const SamplerGrid g = build_sampler_grid(10, 0, shards);
  CHECK(g.world_size == 4);
  CHECK(g.owner == std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1});
  CHECK(g.copies == std::vector<int>{2, 2, 1, 1, 1, 1, 1, 1, 1, 1});
  CHECK(g.padded_count == 2);
  CHECK(g.padded[2] == std::vector<uint8_t>{0, 0, 1});
  CHECK(g.padded[3] == std::vector<uint8_t>{0, 0, 1});
  CHECK(g.padded[0] == std::vector<uint8_t>{0, 0, 0});
  CHECK(g.unassigned_count == 0);
}

TEST_CASE("shuffled shards: the owner is the first appearance, padding repeats the start") {
  // A shuffled list 3 1 4 0 2 over 2 ranks, padded with its first element: 3 1 4 0 2 3.
  const std::vector<std::vector<int64_t>> shards = {{3, 4, 2}, {1, 0, 3}};
  const SamplerGrid g = build_sampler_grid(5, 1, shards);
  CHECK(g.owner == std::vector<int>{1, 1, 0, 0, 0});
  CHECK(g.padded[1] == std::vector<uint8_t>{0, 0, 1});
  CHECK(g.copies[3] == 2);
}

TEST_CASE("drop_last leaves indices unassigned and pads nothing") {
  const std::vector<std::vector<int64_t>> shards = {{0, 2, 4}, {1, 3, 5}};
  const SamplerGrid g = build_sampler_grid(7, 0, shards);
  CHECK(g.padded_count == 0);
  CHECK(g.unassigned_count == 1);
  CHECK(g.owner[6] == -1);
}

TEST_CASE("more ranks than samples: the list repeats more than once") {
  const std::vector<std::vector<int64_t>> shards = {{0}, {1}, {0}, {1}, {0}};
  const SamplerGrid g = build_sampler_grid(2, 0, shards);
  CHECK(g.padded_count == 3);
  CHECK(g.copies == std::vector<int>{3, 2});
  CHECK(g.owner == std::vector<int>{0, 1});
}

TEST_CASE("out-of-range indices are ignored, empty input is fine") {
  const SamplerGrid g = build_sampler_grid(3, 0, {{0, 7, -1}});
  CHECK(g.owner == std::vector<int>{0, -1, -1});
  const SamplerGrid e = build_sampler_grid(0, 0, {});
  CHECK(e.owner.empty());
  CHECK(e.world_size == 0);
}

TEST_CASE("batch positions") {
  CHECK(batch_positions(64, 32, 0).begin == 0);
  CHECK(batch_positions(64, 32, 1).end == 64);
  CHECK(batch_positions(70, 32, 2).begin == 64);
  CHECK(batch_positions(70, 32, 2).end == 70);
  CHECK(batch_positions(70, 32, 5).begin == 70);
  CHECK(batch_positions(70, 0, 1).end == 0);
}

TEST_CASE("same order: what forgetting set_epoch looks like") {
  const std::vector<std::vector<int64_t>> a = {{3, 1}, {0, 2}};
  const std::vector<std::vector<int64_t>> b = {{1, 3}, {0, 2}};
  CHECK(same_order(a, a));
  CHECK_FALSE(same_order(a, b));
  CHECK_FALSE(same_order({}, {}));
}

namespace {
Event shard_event(int rank, int epoch, std::vector<int64_t> indices) {
  Event e;
  e.kind = EventKind::SamplerShard;
  e.rank = rank;
  e.epoch = epoch;
  e.indices = std::move(indices);
  return e;
}
Event step_begin(int rank, int epoch, int64_t step) {
  Event e;
  e.kind = EventKind::StepBegin;
  e.rank = rank;
  e.epoch = epoch;
  e.step = step;
  return e;
}
Event step_end(int rank, int epoch, int64_t step) {
  Event e = step_begin(rank, epoch, step);
  e.kind = EventKind::StepEnd;
  return e;
}
}  // namespace

TEST_CASE("history: shards per epoch and the current batch of each rank") {
  SamplerHistory h;
  h.consume(shard_event(0, 0, {0, 2}), 1);
  h.consume(shard_event(1, 0, {1, 3}), 1);
  h.consume(step_begin(0, 0, 0), 1);
  h.consume(step_begin(0, 0, 1), 1);
  h.consume(shard_event(0, 1, {2, 0}), 1);
  h.consume(step_begin(0, 1, 2), 1);
  h.consume(step_begin(1, 0, 0), 1);
  REQUIRE(h.epochs().size() == 2);
  CHECK(h.epochs()[1].epoch == 1);
  REQUIRE(h.shards({1, 0}) != nullptr);
  CHECK((*h.shards({1, 0}))[1] == std::vector<int64_t>{1, 3});
  CHECK(h.current_batch(0).epoch == 1);
  CHECK(h.current_batch(0).batch == 0);
  CHECK(h.current_batch(1).batch == 0);
  CHECK(h.current_batch(7).epoch == -1);
}

TEST_CASE("history forgets the oldest epochs beyond its budget") {
  SamplerHistory h(10);
  for (int epoch = 0; epoch < 5; ++epoch) h.consume(shard_event(0, epoch, {0, 1, 2, 3}), 1);
  const auto epochs = h.epochs();
  REQUIRE(epochs.size() == 2);
  CHECK(epochs.front().epoch == 3);
}

TEST_CASE("a live run's newest epoch, heard from 1 of 4 ranks: the epoch before is shown, all 4 counted") {
  SamplerHistory h;
  for (int r = 0; r < 4; ++r) h.consume(shard_event(r, 0, {r, r + 4}), 1);
  h.consume(shard_event(0, 1, {5, 1}), 1);  // epoch 1: only rank 0's shard has arrived
  const std::vector<EpochKey> epochs = h.epochs();
  REQUIRE(epochs.size() == 2);
  CHECK(followed_epoch(h, epochs, 4, true) == 0);   // live: the complete epoch 0
  CHECK(followed_epoch(h, epochs, 4, false) == 1);  // over (a failure mid-epoch): the newest
  CHECK(followed_epoch(h, epochs, 0, true) == 1);   // world unknown: the newest
  // The partial epoch, when shown, counts the run's 4 ranks, 1 of them reported.
  const auto shards = shards_of_world(*h.shards(epochs[1]), 4);
  CHECK(shards.size() == 4);
  CHECK(reported_ranks(shards) == 1);
  CHECK(build_sampler_grid(8, 1, shards).world_size == 4);
  CHECK(reported_ranks(*h.shards(epochs[0])) == 4);

  h.consume(shard_event(0, 2, {6, 2}), 1);  // epoch 2, rank 0 only: two partial epochs now
  CHECK(followed_epoch(h, h.epochs(), 4, true) == 0);
  for (int r = 1; r < 4; ++r) h.consume(shard_event(r, 1, {r, r + 4}), 1);  // epoch 1 completes
  CHECK(followed_epoch(h, h.epochs(), 4, true) == 1);
}

TEST_CASE("following a live change of world: a new set's first epoch is shown even when partial") {
  SamplerHistory h;
  for (int r = 0; r < 2; ++r) h.consume(shard_event(r, 3, {r}), 1);
  h.consume(shard_event(0, 0, {0}), 2);  // generation 2 (4 ranks): rank 0 only so far
  const std::vector<EpochKey> epochs = h.epochs();
  CHECK(followed_epoch(h, epochs, 4, true) == 1);  // not the old set's epoch
  CHECK(shards_of_world(*h.shards(epochs[1]), 0).size() == 1);  // world unknown: as reported
}

TEST_CASE("a run stopped between epochs: the sampler shows the epoch of its last step, as the status does") {
  SamplerHistory h;
  for (int r = 0; r < 2; ++r) h.consume(shard_event(r, 0, {r, r + 2}), 1);
  for (int r = 0; r < 2; ++r) h.consume(step_begin(r, 0, 0), 1);
  for (int r = 0; r < 2; ++r) h.consume(shard_event(r, 1, {1 - r, 3 - r}), 1);  // epoch 1 drawn, no step yet
  const std::vector<EpochKey> epochs = h.epochs();
  REQUIRE(epochs.size() == 2);
  CHECK(h.newest_trained(1).epoch == 0);
  CHECK(h.newest_trained(2).epoch == -1);
  CHECK(followed_epoch(h, epochs, 2, false) == 0);  // stopped: epoch 0 (the "epoch 1" both panes name)
  CHECK(followed_epoch(h, epochs, 2, true) == 1);   // live: the shards just drawn, complete
  h.consume(step_begin(1, 1, 1), 1);
  CHECK(followed_epoch(h, h.epochs(), 2, false) == 1);  // a step in epoch 1: it is the last step's
}

TEST_CASE("the status's epoch is the Sampler's: a rank whose events came first does not put it one ahead") {
  RunModel m;
  for (int r = 0; r < 2; ++r) m.consume(test::run_begin_event(r, 2, "gloo"));
  for (int r = 0; r < 2; ++r) {
    m.consume(shard_event(r, 0, {r, r + 2}));
    m.consume(step_begin(r, 0, 0));
  }
  // Rank 0's next batch of events has arrived, rank 1's not yet: rank 0 drew epoch 1 and stepped in it.
  m.consume(shard_event(0, 1, {1, 3}));
  m.consume(step_begin(0, 1, 1));
  CHECK(m.latest_epoch() == 1);
  CHECK(m.followed_epoch(true) == 0);   // live: the newest epoch both ranks began, as the Sampler shows
  CHECK(m.followed_epoch(false) == 1);  // over: the epoch of the last step
  m.consume(shard_event(1, 1, {0, 2}));
  CHECK(m.followed_epoch(true) == 1);
}

TEST_CASE("the status's count of steps done is every rank's, inside the epoch it names") {
  RunModel m;
  for (int r = 0; r < 2; ++r) m.consume(test::run_begin_event(r, 2, "gloo"));
  CHECK(m.steps_done(true) == 0);
  // Two steps an epoch. Both ranks trained epoch 0; rank 0's next batch has come, rank 1's not yet.
  for (int r = 0; r < 2; ++r) {
    m.consume(shard_event(r, 0, {r, r + 2}));
    for (int64_t s = 0; s < 2; ++s) m.consume(step_end(r, 0, s));
  }
  m.consume(shard_event(0, 1, {1, 3}));
  for (int64_t s = 2; s < 4; ++s) m.consume(step_end(0, 1, s));
  CHECK(m.latest_step() == 3);
  CHECK(m.steps_done(true) == 2);  // live: rank 1's two, the end of epoch 0 the status names
  CHECK(m.followed_epoch(true) == 0);
  CHECK(m.steps_done(false) == 4);  // over: the furthest rank's, beside the epoch of the last step
  m.consume(shard_event(1, 1, {0, 2}));
  m.consume(step_end(1, 1, 2));
  CHECK(m.steps_done(true) == 3);
  CHECK(m.followed_epoch(true) == 1);
}

TEST_CASE("after a live change of world, the new ranks count once every one of them has begun") {
  RunModel m;
  for (int r = 0; r < 2; ++r) m.consume(test::run_begin_event(r, 2, "gloo"));
  for (int r = 0; r < 2; ++r)
    for (int64_t s = 0; s < 5; ++s) m.consume(step_end(r, 0, s));
  CHECK(m.steps_done(true) == 5);
  for (int r = 0; r < 3; ++r) m.consume(test::run_begin_event(r, 3, "gloo"));
  m.consume(step_end(0, 0, 5));
  m.consume(step_end(1, 0, 5));
  CHECK(m.steps_done(true) == 5);  // rank 2 of the new world has taken no step yet
  m.consume(step_end(2, 0, 5));
  CHECK(m.steps_done(true) == 6);
}
