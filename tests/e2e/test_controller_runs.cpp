// Real runs through the controller: `ringlab worker` processes started, killed and stopped,
// and what the result and the app's failure view say about them. These start the ringlab
// binary, so they build after it and run in the e2e tier.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <functional>
#include <map>
#include <utility>
#include <vector>
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
  // Its last events died with it; the others, waiting for it, place it no earlier than the step
  // before theirs (the Failure lab's command repeats the kill at that step).
  const int64_t others = std::min(d.ranks[0].step, d.ranks[2].step);
  CHECK(others >= 0);
  CHECK(d.ranks[1].step + 1 >= others);
  CHECK(d.ranks[1].collective + 1 >= std::min(d.ranks[0].collective, d.ranks[2].collective));
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
namespace {

// Drains `feed` into `gate_waits` (each rank's GateWait events, in order) until every rank of
// `world` has `each` of them, the controller ends or the job's timeout passes; false unless
// every rank got there.
bool wait_for_gate_waits(Controller& controller, EventFeed& feed, int world, size_t each,
                         std::map<int, std::vector<Event>>& gate_waits) {
  std::vector<Event> batch;
  const auto got_there = [&] {
    batch.clear();
    feed.drain(batch, 1 << 20);
    for (Event& e : batch)
      if (e.kind == EventKind::GateWait) gate_waits[e.rank].push_back(std::move(e));
    bool all = static_cast<int>(gate_waits.size()) == world;
    for (const auto& [rank, waits] : gate_waits) all = all && waits.size() >= each;
    return all;
  };
  const int64_t give_up = now_ns() + static_cast<int64_t>(controller.options().job.timeout_s * 1e9);
  while (now_ns() < give_up) {
    if (got_there()) return true;
    // Ended: its last events are in the feed by now, but may have come after the drain above.
    if (controller.poll()) return got_there();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace

TEST_CASE("step-through: a run started at the gate is held from its first ring step, one release at a time") {
  // Held from the first ring step on, each release lets every rank take exactly one ring step,
  // and opening the gate lets the run finish without another wait. Two ranks: each all-reduce is
  // reduce-scatter step 0, then all-gather step 0. The seed's demo all-reduce of [1, 2, 3] comes
  // first (before the first stop vote, so each rank reads the gate itself), then step 0's
  // gradients (the gate's mode from the vote before it). The releases come at once: a gate
  // closed from the start counts every release since the run's store was made, whether or not
  // the ranks had reached it yet.
  JobConfig job;
  job.world_size = 2;
  job.epochs = 1;
  job.timeout_s = 120;
  ControllerOptions options;
  options.job = job;
  options.executable = RINGLAB_BINARY;
  options.interactive = true;
  options.gated = true;
  EventFeed feed;
  Controller controller(options, feed);
  controller.start();
  std::map<int, std::vector<Event>> waits;
  constexpr int kReleases = 3;
  for (int k = 1; k <= kReleases; ++k) {
    controller.release_gate();
    REQUIRE_MESSAGE(wait_for_gate_waits(controller, feed, 2, k, waits), "release " << k);
  }
  controller.set_gated(false);
  REQUIRE_MESSAGE(wait_for_gate_waits(controller, feed, 2, kReleases + 1, waits), "the gate opened");
  const RunResult r = controller.wait();
  CHECK_MESSAGE(r.ok, r.failure);
  std::vector<Event> rest;
  feed.drain(rest, 1 << 20);
  for (Event& e : rest)
    if (e.kind == EventKind::GateWait) waits[e.rank].push_back(std::move(e));
  const int8_t rs = static_cast<int8_t>(RingPhase::ReduceScatter), ag = static_cast<int8_t>(RingPhase::AllGather);
  const std::vector<std::pair<int8_t, int>> expected = {{rs, 0}, {ag, 0}, {rs, 0}, {ag, 0}};
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<std::pair<int8_t, int>> seen;
    std::string text;
    for (const Event& e : waits[rank]) {
      seen.emplace_back(e.phase, e.ring_step);
      text += fmt::format(" ({}, {})", e.phase, e.ring_step);
    }
    CHECK_MESSAGE(seen == expected, "rank " << rank << " waited at the gate at (phase, ring step):" << text);
  }
}

TEST_CASE("a live change asked while the ranks are paused at the gate trains no step past the one they were in") {
  // Paused in the app, the class changes the world. The ranks, held inside a step, let go of the
  // gate for the stop, finish that step (the checkpoint is taken at a step boundary) and vote to
  // stop at its end; the new world starts from there and waits at the gate, still paused. Their
  // votes had been spaced about 50 ms of training apart: at this seed's speed a hundred or more
  // steps, which they trained while the window said "paused".
  JobConfig job;
  job.world_size = 2;
  job.epochs = 100000;
  job.timeout_s = 30;
  job.trace_level = "steps";
  ControllerOptions options;
  options.job = job;
  options.executable = RINGLAB_BINARY;
  options.interactive = true;
  EventFeed feed;
  RunModel model;
  Controller controller(options, feed);
  controller.start();
  std::vector<Event> batch;
  bool world_changed = false;
  int64_t last_step = -1;  // of either world: the model shows the current one's
  const auto take = [&] {
    batch.clear();
    feed.drain(batch, 1 << 20);
    for (const Event& e : batch) {
      world_changed = world_changed || e.kind == EventKind::WorldChange;
      if (e.kind == EventKind::StepEnd) last_step = std::max(last_step, e.step);
      model.consume(e);
    }
  };
  // Drains until `done` or the job's timeout; false on the timeout or an ended run.
  const auto take_until = [&](const std::function<bool()>& done) {
    const int64_t give_up = now_ns() + static_cast<int64_t>(job.timeout_s * 1e9);
    while (now_ns() < give_up && !controller.poll()) {
      take();
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  };
  REQUIRE(take_until([&] { return last_step >= 500; }));  // the votes spaced far apart
  controller.set_gated(true);
  // Paused once no step has come for half a second.
  int64_t held_at = -1, since = now_ns();
  REQUIRE(take_until([&] {
    if (last_step != held_at) held_at = last_step, since = now_ns();
    return now_ns() - since > 500'000'000;
  }));
  controller.change_world(3, "gloo");
  REQUIRE_MESSAGE(take_until([&] { return world_changed; }), "the new world was not started");
  since = now_ns();
  take_until([&] { return now_ns() - since > 1'000'000'000; });  // a second for any stray step
  const Generation* now = model.current_generation();
  REQUIRE(now != nullptr);
  CHECK(now->world_size == 3);
  CHECK_MESSAGE(last_step <= held_at + 1, "paused at step " << held_at << ", the old world trained on to step " << last_step);
  // Resumed, the new world trains on from there.
  controller.set_gated(false);
  CHECK(take_until([&] { return last_step > held_at + 20; }));
  controller.request_stop(StopCause::StopButton, std::chrono::seconds(20));
  const RunResult r = controller.wait();
  CHECK(r.stop_cause == StopCause::StopButton);
  CHECK_MESSAGE(r.failure.find("the workers stopped together at a step boundary") != std::string::npos, r.failure);
  CHECK(r.exits.size() == 3);
}

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
