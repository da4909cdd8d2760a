// The rank loop over the Replica interface (rank/replica.h): any replica the loop is given is
// driven the same way, Join and faults included. A replica that wraps the CPU one and counts
// what it is asked to do must train exactly as train_rank does.
#include <doctest/doctest.h>

#include <memory>
#include <thread>
#include <vector>

#include "engine/core/error.h"
#include "engine/dist/local_process_group.h"
#include "engine/events/event_store.h"
#include "engine/rank/host_replica.h"
#include "engine/rank/replica.h"
#include "engine/rank/trainer.h"

using namespace ringlab;

namespace {

struct Counts {
  int epochs = 0, forwards = 0, shadows = 0, host_allreduces = 0, faults = 0;
};

// The CPU replica, watched.
class CountingReplica final : public Replica {
 public:
  CountingReplica(const ReplicaStart& start, Counts& counts) : inner_(start), counts_(counts) {}

  void allreduce_host(std::span<float> values, const std::string& label) override {
    ++counts_.host_allreduces;
    inner_.allreduce_host(values, label);
  }
  void set_step(int64_t step) override { inner_.set_step(step); }
  void inject(ddp::CollectiveFault fault) override {
    ++counts_.faults;
    inner_.inject(fault);
  }
  void start_epoch(std::span<const int64_t> shard) override {
    ++counts_.epochs;
    inner_.start_epoch(shard);
  }
  void zero_grad() override { inner_.zero_grad(); }
  void forward(std::span<const int64_t> batch, int64_t offset) override {
    ++counts_.forwards;
    inner_.forward(batch, offset);
  }
  void backward(bool sync) override { inner_.backward(sync); }
  void shadow_backward() override {
    ++counts_.shadows;
    inner_.shadow_backward();
  }
  void optimizer_step() override { inner_.optimizer_step(); }
  float loss() override { return inner_.loss(); }
  void broadcast_parameters(int root) override { inner_.broadcast_parameters(root); }
  std::vector<float> parameters() override { return inner_.parameters(); }
  std::vector<float> momentum() override { return inner_.momentum(); }
  double dataset_mse() override { return inner_.dataset_mse(); }

 private:
  HostReplica inner_;
  Counts& counts_;
};

struct Run {
  std::vector<RankOutcome> out;
  std::vector<Counts> counts;
  size_t events = 0;
};

Run run(const JobConfig& job, bool counting) {
  LocalWorld world(job.world_size, std::chrono::milliseconds(20000));
  Run result{std::vector<RankOutcome>(job.world_size), std::vector<Counts>(job.world_size), 0};
  EventStore events;
  std::vector<std::thread> threads;
  for (int r = 0; r < job.world_size; ++r)
    threads.emplace_back([&, r] {
      const MakeReplica watched = [&result, r](const ReplicaStart& start) -> std::unique_ptr<Replica> {
        return std::make_unique<CountingReplica>(start, result.counts[r]);
      };
      result.out[r] = counting ? train_rank_with(watched, job, world.group(r), events)
                               : train_rank(job, world.group(r), events);
    });
  for (auto& t : threads) t.join();
  result.events = events.snapshot().size();
  return result;
}

}  // namespace

TEST_CASE("the rank loop drives any replica: uneven inputs with Join, a fault, momentum") {
  JobConfig job;
  job.world_size = 3;
  job.epochs = 2;
  job.momentum = 0.9;
  job.join = true;
  job.uneven = {"1:2"};          // rank 1 runs out two batches early, every epoch
  job.faults = {"delay:2:1"};    // a straggler: changes timing, never results
  const Run plain = run(job, false);
  const Run watched = run(job, true);

  CHECK(watched.events == plain.events);
  for (int r = 0; r < job.world_size; ++r) {
    CAPTURE(r);
    CHECK(watched.out[r].step_loss == plain.out[r].step_loss);
    CHECK(watched.out[r].final_parameters == plain.out[r].final_parameters);
    CHECK(watched.out[r].epoch_mse == plain.out[r].epoch_mse);
    CHECK(watched.out[r].demo_output == std::vector<float>{3.0f, 6.0f, 9.0f});

    const Counts& c = watched.counts[r];
    const int64_t batches = watched.out[r].batches_per_epoch * job.epochs;
    CHECK(c.epochs == job.epochs);
    // The demo, then Join's question before every step of the longest rank.
    CHECK(c.host_allreduces == 1 + batches);
    CHECK(c.shadows == (r == 1 ? 2 * job.epochs : 0));
    CHECK(c.forwards + c.shadows == batches);
    CHECK(c.faults == 0);  // a delay is the loop's own: nothing for the reducer
  }
}

TEST_CASE("a checkpoint for another model is refused before any replica is made") {
  JobConfig job;
  LocalWorld world(1, std::chrono::milliseconds(20000));
  NullEventSink quiet;
  TrainingState wrong{0, 0, 0, std::vector<float>(7, 0.0f), {}};
  bool made = false;
  const MakeReplica never = [&made](const ReplicaStart& start) -> std::unique_ptr<Replica> {
    made = true;
    return make_host_replica(start);
  };
  CHECK_THROWS_AS(train_rank_with(never, job, world.group(0), quiet, {}, &wrong), InputError);
  CHECK_FALSE(made);
}
