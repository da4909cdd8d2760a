// One bucket rule for the live run and the Scale view: the buckets a real run's DDP reports
// (BucketReady events from `ringlab worker` processes) are the ones sim::assign_buckets
// predicts, for several caps, and the first step reduces one bucket as PyTorch 1.13 does
// (its buckets are rebuilt in gradient-ready order after the first iteration).
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <thread>

#include "engine/control/controller.h"
#include "engine/core/clock.h"
#include "engine/sim/ddp_step_model.h"
#include "engine/sim/model_presets.h"
#include "engine/view_model/event_feed.h"

using namespace ringlab;

namespace {

// The bucket sizes (bytes, in the order reduced) that rank 0 reported at each step.
std::map<int64_t, std::vector<int64_t>> live_buckets(const JobConfig& job) {
  view_model::EventFeed feed;
  ControllerOptions options;
  options.job = job;
  options.executable = RINGLAB_BINARY;
  Controller controller(options, feed);
  controller.start();
  std::map<int64_t, std::vector<int64_t>> by_step;
  std::vector<Event> batch;
  const auto take = [&] {
    batch.clear();
    feed.drain(batch, 1 << 20);
    for (const Event& e : batch)
      if (e.kind == EventKind::BucketReady && e.rank == 0) by_step[e.step].push_back(e.bytes);
  };
  const int64_t give_up = now_ns() + static_cast<int64_t>(job.timeout_s * 1e9);
  while (!controller.poll()) {
    take();
    if (now_ns() > give_up) controller.request_stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const RunResult r = controller.wait();
  take();
  CHECK_MESSAGE(r.ok, r.failure);
  return by_step;
}

std::vector<int64_t> predicted(const JobConfig& job) {
  const BucketLimits limits = job.bucket_limits();
  sim::BucketPolicy policy;
  policy.first_bucket_bytes = limits.first_bytes;
  policy.cap_bytes = limits.cap_bytes;
  std::vector<int64_t> bytes;
  for (const sim::Bucket& b : sim::assign_buckets(sim::seed_mlp(), policy)) bytes.push_back(b.bytes);
  return bytes;
}

}  // namespace

TEST_CASE("the Scale view predicts the buckets the live run reduces, for several caps") {
  struct Case {
    int64_t cap_kb, first_kb;
    std::vector<int64_t> expected;  // bytes per bucket from step 2 on, in the order reduced
  };
  // The seed model, registration order w1 (1,152 B), b1 (192), w2 (9,216), b2 (192), w3 (192),
  // b3 (4): ready b3, w3, b2, w2, b1, w1. PyTorch 1.13 prints the same rebuilt buckets
  // (_get_ddp_logging_data()["rebuilt_bucket_sizes"]) for these limits.
  const Case cases[] = {
      {-1, -1, {10948}},        // PyTorch's defaults: the 1 MiB first bucket holds everything
      {4, -1, {10948}},         // a small cap alone changes nothing: the first bucket is 1 MiB
      {4, 4, {9604, 1344}},     // {b3, w3, b2, w2} closes at w2, then {b1, w1}
      {1, 1, {9604, 1344}},     // w2 alone passes 1 KiB: the same split
      {1, 2, {9604, 1344}},
      {16, 1, {9604, 1344}},    // {b3..w2} passes 1 KiB; {b1, w1} stays under 16 KiB
      {16, 16, {10948}},        // 10,948 B never reach 16 KiB
  };
  for (const Case& c : cases) {
    JobConfig job;
    job.world_size = 2;
    job.samples = 256;  // 4 steps of 32 per rank
    job.epochs = 1;
    job.timeout_s = 30;
    job.trace_level = "steps";
    job.bucket_cap_kb = c.cap_kb;
    job.first_bucket_kb = c.first_kb;
    CAPTURE(c.cap_kb);
    CAPTURE(c.first_kb);
    const std::vector<int64_t> prediction = predicted(job);
    CHECK(prediction == c.expected);
    const auto by_step = live_buckets(job);
    REQUIRE(by_step.size() >= 2);
    // Step 1 (the first step's index, whatever it starts at) reduces one bucket of everything.
    CHECK(by_step.begin()->second == std::vector<int64_t>{10948});
    for (auto it = std::next(by_step.begin()); it != by_step.end(); ++it) {
      CAPTURE(it->first);
      CHECK(it->second == prediction);
    }
  }
}
