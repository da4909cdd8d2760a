// DDP's reducer: bucket plan, reverse order, overlap with backward, no_sync accumulation.
#include <doctest/doctest.h>

#include <map>
#include <thread>
#include <vector>

#include "engine/ddp/bucket_plan.h"
#include "engine/dist/local_process_group.h"
#include "engine/dist/ring_allreduce.h"
#include "engine/events/event_store.h"
#include "engine/rank/ddp_options.h"
#include "engine/rank/trainer.h"

using namespace ringlab;

namespace {

std::vector<Event> run_threads(const JobConfig& job) {
  LocalWorld world(job.world_size, std::chrono::milliseconds(20000));
  EventStore events;
  std::vector<std::thread> threads;
  for (int r = 0; r < job.world_size; ++r)
    threads.emplace_back([&, r] { train_rank(job, world.group(r), events); });
  for (auto& t : threads) t.join();
  return events.snapshot();
}

}  // namespace

TEST_CASE("bucket plan: one bucket before the rebuild, then PyTorch's sizes in ready order") {
  nn::Mlp m(6, {48, 48}, 1);
  for (bool rebuilt : {false, true}) {  // PyTorch's defaults: the 1 MiB first bucket holds everything
    auto one = ddp::plan_buckets(m.parameter_views(), BucketLimits{}, rebuilt);
    REQUIRE(one.size() == 1);
    CHECK(one[0].parameters == std::vector<int>{5, 4, 3, 2, 1, 0});
    CHECK(one[0].offset == 0);
    CHECK(one[0].numel == m.num_parameters());
  }
  // Small limits change nothing before the rebuild: the first iteration is one bucket.
  CHECK(ddp::plan_buckets(m.parameter_views(), BucketLimits{1024, 1024}, false).size() == 1);
  // A small cap alone changes nothing after it either: the first bucket is still 1 MiB.
  CHECK(ddp::plan_buckets(m.parameter_views(), BucketLimits{kDefaultFirstBucketBytes, 1024}, true).size() == 1);

  // 1 KiB for both: 4.bias + 4.weight (49 floats) < 1 KiB, + 2.bias -> 97 floats = 388 B,
  // + 2.weight (2304 floats) closes the first bucket; 0.bias + 0.weight form the second.
  auto small = ddp::plan_buckets(m.parameter_views(), BucketLimits{1024, 1024}, true);
  REQUIRE(small.size() == 2);
  CHECK(small[0].parameters == std::vector<int>{5, 4, 3, 2});
  CHECK(small[1].parameters == std::vector<int>{1, 0});
  CHECK(small[0].offset == m.parameter_views()[2].offset);
  CHECK(small[0].offset + small[0].numel == m.num_parameters());
  CHECK(small[1].offset == 0);
  CHECK(small[1].numel == small[0].offset);
}

TEST_CASE("buckets fire last layer first once rebuilt, and the first one starts before backward ends") {
  JobConfig job;
  job.world_size = 2;
  job.epochs = 1;
  job.bucket_cap_kb = 1;
  job.first_bucket_kb = 1;
  auto events = run_threads(job);
  std::map<std::pair<int, int64_t>, std::vector<int>> ready_order;  // (rank, step) -> bucket indices
  std::map<int, int64_t> first_begin, backward_end;                 // rank -> times, step 1
  for (const Event& e : events) {
    if (e.kind == EventKind::BucketReady) ready_order[{e.rank, e.step}].push_back(e.bucket);
    if (e.step != 1) continue;
    if (e.kind == EventKind::CollectiveBegin && e.bucket == 0) first_begin[e.rank] = e.t_begin_ns;
    if (e.kind == EventKind::Backward) backward_end[e.rank] = e.t_end_ns;
  }
  for (int r = 0; r < 2; ++r) {
    CHECK(ready_order[{r, 0}] == std::vector<int>{0});     // the first step: one bucket
    CHECK(ready_order[{r, 1}] == std::vector<int>{0, 1});  // rebuilt: two, last layers first
    CHECK(first_begin[r] < backward_end[r]);
  }
}

TEST_CASE("no_sync: with --grad-accum 2 only every second micro-step all-reduces") {
  JobConfig job;
  job.world_size = 2;
  job.epochs = 1;  // 4 batches per rank
  job.grad_accum = 2;
  auto events = run_threads(job);
  int bucket_collectives = 0, optimizer_steps = 0;
  for (const Event& e : events) {
    if (e.rank != 0) continue;
    if (e.kind == EventKind::CollectiveEnd && e.bucket >= 0) ++bucket_collectives;
    if (e.kind == EventKind::OptimizerStep) ++optimizer_steps;
  }
  CHECK(bucket_collectives == 2);
  CHECK(optimizer_steps == 2);
}

TEST_CASE("a job's DDP rings are cut as its backend's tuning says, as the bench's are") {
  EventStore events;
  TrainerHooks hooks;
  for (const char* backend : {"gloo", "mpi"}) {
    CAPTURE(backend);
    JobConfig job;
    job.backend = backend;
    const ddp::DdpOptions options = ddp_options_for(job, events, hooks);
    CHECK(options.segment_elems > 0);
    CHECK(options.segment_elems == ring_tuning_for(backend).segment_elems);
    CHECK(options.pipeline_depth == ring_tuning_for(backend).pipeline_depth);
  }
  JobConfig gpu;
  gpu.backend = "nccl";
  CHECK(ddp_options_for(gpu, events, hooks).segment_elems == 0);  // NCCL's ring: whole chunks
}
