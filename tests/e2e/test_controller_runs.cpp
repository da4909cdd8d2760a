// Real runs through the controller: `ringlab worker` processes started, killed and stopped,
// and what the result and the app's failure view say about them. These start the ringlab
// binary, so they build after it and run in the e2e tier.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/view_model/event_feed.h"
#include "engine/view_model/failure_diagnosis.h"
#include "engine/view_model/run_model.h"
#include "engine/control/controller.h"
#include "engine/events/event_store.h"

using namespace ringlab;
using namespace ringlab::view_model;

namespace {

// Runs `job` through a real controller, kills `victim` once every rank has finished a step, and
// returns the result (every wait is bounded by the job's timeout).
RunResult kill_during_run(const JobConfig& job, int victim, int max_restarts, RunModel& model) {
  view_model::EventFeed feed;
  ControllerOptions options;
  options.job = job;
  options.executable = RINGLAB_BINARY;
  options.max_restarts = max_restarts;
  Controller controller(options, feed);
  controller.start();
  std::vector<Event> batch;
  bool killed = false;
  const int64_t give_up = now_ns() + static_cast<int64_t>(job.timeout_s * 1e9);
  while (!controller.poll()) {
    batch.clear();
    feed.drain(batch, 4096);
    for (const Event& e : batch) model.consume(e);
    if (!killed && model.latest_step() >= 1) {
      controller.kill_rank(victim);
      killed = true;
    }
    if (now_ns() > give_up) controller.request_stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  RunResult r = controller.wait();
  batch.clear();
  feed.drain(batch, 1 << 20);
  for (const Event& e : batch) model.consume(e);
  model.note_exits(r.exits);
  CHECK(killed);
  return r;
}

JobConfig long_job() {
  JobConfig job;
  job.world_size = 3;
  job.epochs = 200;  // long enough that the kill lands mid-run
  job.timeout_s = 20;
  job.trace_level = "steps";
  return job;
}

}  // namespace

TEST_CASE("kill rank now: a real SIGKILL, named in the result and highlighted") {
  RunModel model;
  const RunResult r = kill_during_run(long_job(), 1, 0, model);
  CHECK(!r.ok);
  REQUIRE(!r.exits.empty());
  CHECK(r.exits.front().rank == 1);
  CHECK(r.exits.front().signal == SIGKILL);
  CHECK(!r.exits.front().terminated);
  CHECK(r.failure.find("rank 1 failed: killed by SIGKILL") != std::string::npos);
  const FailureDiagnosis& d = model.failure();
  CHECK(d.culprits == std::vector<int>{1});
  CHECK(d.ranks[1].cause == RankCause::Killed);
  CHECK(d.ranks[1].fault == "kill: SIGKILL from the controller");
  CHECK(d.ranks[1].exit == "killed by SIGKILL");
}

TEST_CASE("kill rank now with a restart: the group resumes and the run completes") {
  RunModel model;
  JobConfig job = long_job();
  job.epochs = 30;
  const RunResult r = kill_during_run(job, 2, 1, model);
  CHECK(r.ok);
  CHECK(r.restarts == 1);
  CHECK(r.epoch_mse.size() == 30);
  REQUIRE(model.restarted_failure().has_value());
  CHECK(model.restarted_failure()->culprits == std::vector<int>{2});
  CHECK(!model.failure().failed);
}

TEST_CASE("kill rank refuses what it cannot do") {
  view_model::EventFeed feed;
  ControllerOptions options;
  options.job = long_job();
  options.executable = RINGLAB_BINARY;
  Controller idle(options, feed);
  CHECK_THROWS_WITH_AS(idle.kill_rank(0), doctest::Contains("no run is going"), InputError);
  Controller running(options, feed);
  running.start();
  CHECK_THROWS_WITH_AS(running.kill_rank(7), doctest::Contains("this node runs ranks 0 to 2"), InputError);
  running.request_stop();
  const RunResult r = running.wait();
  CHECK(!r.ok);
}

#ifdef RINGLAB_HAVE_GLOO
TEST_CASE("interactive workers: a skipped all-reduce meets the next collective's fingerprint instead of hanging") {
  // The app's workers vote at step boundaries whether to stop (live changes). A rank that skips
  // an all-reduce reaches its next collective (a vote, or the next step's all-reduce) while its
  // neighbours are still in the skipped one: the fingerprints differ, so the run stops with both
  // named, long before the timeout.
  JobConfig job;
  job.world_size = 2;
  job.epochs = 2;
  job.timeout_s = 300;
  job.faults = {"skip:1@3"};
  ControllerOptions options;
  options.job = job;
  options.executable = RINGLAB_BINARY;
  options.interactive = true;
  EventStore events;
  Controller controller(options, events);
  const auto t0 = std::chrono::steady_clock::now();
  controller.start();
  const RunResult r = controller.wait();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK_FALSE(r.ok);
  CHECK(r.failure.find("mismatched collectives") != std::string::npos);
  CHECK(r.failure.find("all-reduce of bucket 0 (2737 floats) at step 3") != std::string::npos);
  const bool met_vote = r.failure.find("the stop vote before step 4") != std::string::npos;
  const bool met_next = r.failure.find("all-reduce of bucket 0 (2737 floats) at step 4") != std::string::npos;
  CHECK_MESSAGE((met_vote || met_next), r.failure);
  CHECK(seconds < job.timeout_s / 2);  // detected, not waited out (however busy the machine)
}
#endif
