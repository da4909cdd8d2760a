// The training loop end to end in one process: the seed's run at world size 1, and DDP's
// promise that N ranks equal one rank on the union of their batches.
#include <doctest/doctest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "engine/dist/local_process_group.h"
#include "engine/core/generator.h"
#include "engine/data/tensor_dataset.h"
#include "engine/nn/mlp.h"
#include "engine/nn/mse.h"
#include "engine/rank/trainer.h"
#include "engine/events/event_store.h"

using namespace ringlab;

namespace {

std::vector<RankOutcome> train_threads(const JobConfig& job) {
  LocalWorld world(job.world_size, std::chrono::milliseconds(20000));
  std::vector<RankOutcome> out(job.world_size);
  std::vector<std::thread> threads;
  for (int r = 0; r < job.world_size; ++r)
    threads.emplace_back([&, r] {
      NullEventSink sink;
      out[r] = train_rank(job, world.group(r), sink);
    });
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace

TEST_CASE("the seed's run: sampler indices and the four printed MSE values") {
  JobConfig job;  // the seed's defaults
  auto out = train_threads(job);
  REQUIRE(out[0].epoch_mse.size() == 4);
  CHECK(out[0].batches_per_epoch == 8);
  const std::vector<int64_t> first8(out[0].shards[0].begin(), out[0].shards[0].begin() + 8);
  CHECK(first8 == std::vector<int64_t>{99, 70, 55, 138, 66, 19, 48, 54});
  const double printed[] = {0.900974, 0.136688, 0.065360, 0.062745};
  for (int e = 0; e < 4; ++e) CHECK(std::fabs(out[0].epoch_mse[e] - printed[e]) < 5e-7);
  CHECK(out[0].demo_output == std::vector<float>{1, 2, 3});
  CHECK(out[0].steps == 32);
}

TEST_CASE("DDP equivalence: N ranks of batch b equal one rank of batch N*b on the same samples") {
  // With shuffle off and n divisible by N*b, rank r's k-th batch is samples {r + N*j}; the union
  // over ranks of step k is exactly the single rank's k-th batch of size N*b.
  for (int world : {2, 4}) {
    CAPTURE(world);
    JobConfig multi;
    multi.world_size = world;
    multi.shuffle = false;
    multi.epochs = 2;
    multi.batch_size = 8;
    multi.samples = 256;
    JobConfig single = multi;
    single.world_size = 1;
    single.batch_size = 8 * world;
    auto a = train_threads(multi);
    auto b = train_threads(single);
    REQUIRE(a[0].final_parameters.size() == b[0].final_parameters.size());
    double max_diff = 0;
    for (size_t i = 0; i < a[0].final_parameters.size(); ++i)
      max_diff = std::max<double>(max_diff, std::fabs(a[0].final_parameters[i] - b[0].final_parameters[i]));
    CHECK(max_diff < 1e-5);
    for (int r = 1; r < world; ++r) CHECK(a[r].final_parameters == a[0].final_parameters);
    CHECK(a[0].demo_output == std::vector<float>{float(world), 2.0f * world, 3.0f * world});
    for (int e = 0; e < 2; ++e) CHECK(a[0].epoch_mse[e] == doctest::Approx(b[0].epoch_mse[e]).epsilon(1e-5));
  }
}

TEST_CASE("the epoch's evaluation in blocks equals one forward pass over the whole dataset, bit for bit") {
  JobConfig job;
  job.samples = 1003;  // no multiple of 8: the last block has a tail
  Generator gen(job.seed);
  const data::TensorDataset dataset = data::make_regression_dataset(job.samples, job.features, gen);
  nn::Mlp model(job.features, job.hidden, 1);
  model.reset_parameters(gen);
  std::vector<float> pred(dataset.size);
  model.predict(dataset.x, dataset.size, pred);
  const double one_pass = nn::mse_loss(pred, dataset.y);
  CHECK(one_pass > 0.0);
  for (int64_t block : {8, 16, 64, 1000, 1008, 4096}) CHECK(whole_dataset_mse(model, dataset, block) == one_pass);
  CHECK(eval_block_rows(job) % 8 == 0);
  job.hidden = {4096, 4096, 4096};
  CHECK(eval_block_rows(job) * (job.features + 1 + 3 * 4096) * 4 <= (64 << 20));
}

// --fault delay:R:MS: the rank reports each sleep it takes, as long as it slept, at every step.
TEST_CASE("a delay fault reports its sleep at every step of the straggler") {
  JobConfig job;
  job.world_size = 2;
  job.epochs = 1;
  job.faults = {"delay:1:5"};
  LocalWorld world(job.world_size, std::chrono::milliseconds(20000));
  EventStore store[2];
  std::vector<RankOutcome> out(job.world_size);
  std::vector<std::thread> threads;
  for (int r = 0; r < job.world_size; ++r)
    threads.emplace_back([&, r] { out[r] = train_rank(job, world.group(r), store[r], TrainerHooks{}); });
  for (auto& t : threads) t.join();
  REQUIRE(out[1].steps > 0);
  for (int r = 0; r < 2; ++r) {
    int64_t sleeps = 0;
    for (const Event& e : store[r].snapshot()) {
      if (e.kind != EventKind::Straggle) continue;
      ++sleeps;
      CHECK(e.rank == 1);
      CHECK(e.value == 5.0);
      CHECK(e.t_end_ns - e.t_begin_ns >= 5'000'000);  // it slept at least that long (sleep never returns early)
    }
    CHECK(sleeps == (r == 1 ? out[1].steps : 0));
  }
}

TEST_CASE("time held at the step-through gate is not counted as training time") {
  // Each rank's gate reports a second of holding before every ring step (a class pausing):
  // far more than the steps took, so the steps' own time is what is left, clamped at zero.
  JobConfig job;
  job.world_size = 2;
  job.epochs = 1;
  for (const bool gated : {false, true}) {
    CAPTURE(gated);
    LocalWorld world(job.world_size, std::chrono::milliseconds(20000));
    std::vector<RankOutcome> out(job.world_size);
    std::vector<int> ring_steps(job.world_size, 0);
    std::vector<std::thread> threads;
    for (int r = 0; r < job.world_size; ++r)
      threads.emplace_back([&, r] {
        NullEventSink sink;
        TrainerHooks hooks;
        hooks.before_ring_step = [&, r](RingPhase, int) { ++ring_steps[r]; };
        if (gated) hooks.held_ns = [&, r] { return int64_t{1'000'000'000} * ring_steps[r]; };
        out[r] = train_rank(job, world.group(r), sink, hooks);
      });
    for (auto& t : threads) t.join();
    REQUIRE(out[0].steps > 0);
    CHECK(ring_steps[0] > 0);
    if (gated) CHECK(out[0].us_per_step == 0.0);
    else CHECK(out[0].us_per_step > 0.0);
  }
}
