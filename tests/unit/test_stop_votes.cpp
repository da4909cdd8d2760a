// Stopping a run: the ranks' votes at step boundaries (ranks as threads), and the controller's
// stop request against real worker processes, with the workers stopping together or, where
// they cannot, terminated once the patience has run out.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "engine/core/clock.h"
#include "engine/dist/local_process_group.h"
#include "engine/view_model/event_feed.h"
#include "engine/control/controller.h"
#include "engine/rank/step_votes.h"

using namespace ringlab;
using namespace std::chrono_literals;

namespace {

// Runs `steps` step boundaries on `world` ranks (threads) and returns the step at which each
// rank's votes said to stop (-1: never).
std::vector<int64_t> vote_through(int world, StepVotes::Cadence cadence, int64_t steps,
                                  const std::function<StepVoteHooks(int rank, std::atomic<int64_t>& step)>& hooks) {
  LocalWorld local(world, 5000ms);
  std::vector<int64_t> stopped_at(world, -1);
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.emplace_back([&, r] {
      std::atomic<int64_t> step{0};
      StepVotes votes(local.group(r), cadence, true, hooks(r, step));
      for (; step < steps; ++step) {
        if (votes.stop_here(step)) {
          stopped_at[r] = step;
          return;
        }
      }
    });
  }
  for (auto& t : ranks) t.join();
  return stopped_at;
}

}  // namespace

TEST_CASE("every rank stops at the same step boundary, the first vote after rank 0 is asked") {
  for (const auto cadence : {StepVotes::Cadence::EveryStep, StepVotes::Cadence::Spaced}) {
    const auto stopped = vote_through(3, cadence, 100000, [](int rank, std::atomic<int64_t>& step) {
      StepVoteHooks h;
      if (rank == 0) h.stop_requested = [&step] { return step >= 1000; };
      return h;
    });
    CHECK(stopped[0] >= 1000);
    if (cadence == StepVotes::Cadence::EveryStep) CHECK(stopped[0] == 1000);
    // Spaced votes come at least every kMaxGap steps.
    CHECK(stopped[0] < 1000 + StepVotes::kMaxGap);
    CHECK(stopped[1] == stopped[0]);
    CHECK(stopped[2] == stopped[0]);
  }
}

TEST_CASE("a controller that falls behind is waited for by every rank at the same boundary") {
  std::vector<std::atomic<int64_t>> waited_at(3);
  for (auto& w : waited_at) w = -1;
  std::atomic<int> behind_asked{0};
  const auto stopped = vote_through(3, StepVotes::Cadence::Spaced, 2000, [&](int rank, std::atomic<int64_t>& step) {
    StepVoteHooks h;
    if (rank == 0) h.controller_behind = [&] { return behind_asked++ == 2; };  // the third vote finds it behind
    h.wait_for_controller = [&, rank] {
      CHECK(waited_at[rank] == -1);
      waited_at[rank] = step.load();
    };
    return h;
  });
  CHECK(stopped == std::vector<int64_t>{-1, -1, -1});  // nobody asked to stop
  CHECK(waited_at[0] > 0);
  CHECK(waited_at[1] == waited_at[0]);
  CHECK(waited_at[2] == waited_at[0]);
}

#ifdef RINGLAB_BINARY
namespace {

// A long run on real processes, asked to stop once it has trained a few steps.
RunResult stop_after_a_few_steps(JobConfig job, std::chrono::milliseconds patience) {
  view_model::EventFeed feed;
  ControllerOptions options;
  options.job = job;
  options.executable = RINGLAB_BINARY;
  Controller controller(options, feed);
  controller.start();
  const int64_t give_up = now_ns() + static_cast<int64_t>(job.timeout_s * 1e9);
  while (controller.steps_done() < 5 && !controller.poll() && now_ns() < give_up) std::this_thread::sleep_for(2ms);
  controller.request_stop(StopCause::Interrupt, patience);
  return controller.wait();
}

JobConfig endless_job() {
  JobConfig job;
  job.world_size = 2;
  job.epochs = 1000000;
  job.timeout_s = 30;
  job.trace_level = "steps";
  return job;
}

}  // namespace

TEST_CASE("a stop request: the workers stop together at a step boundary, every rank's results in") {
  const RunResult r = stop_after_a_few_steps(endless_job(), 30s);
  CHECK(!r.ok);
  CHECK(r.stop_cause == StopCause::Interrupt);
  CHECK(r.interrupted());
  CHECK(r.failure.find("interrupted by SIGINT (Ctrl-C) at step") == 0);
  CHECK(r.failure.find("the workers stopped together at a step boundary") != std::string::npos);
  REQUIRE(r.exits.size() == 2);
  for (const RankExit& e : r.exits) {
    CHECK(e.ok());
    CHECK(!e.terminated);
  }
  CHECK(r.steps >= 5);
  CHECK(r.final_parameters.size() == 2737);  // rank 0's model where it stopped
  REQUIRE(r.history);
  CHECK(r.history->steps(0) == r.steps);
  CHECK(r.history->steps(1) == r.steps);
}

TEST_CASE("workers that do not vote are terminated once the patience has run out") {
  JobConfig job = endless_job();
  job.faults = {"skip:1@100000000"};  // a lesson that reorders collectives: no votes in that run
  const RunResult r = stop_after_a_few_steps(job, 200ms);
  CHECK(r.stop_cause == StopCause::Interrupt);
  CHECK(r.failure.find("the workers did not all reach a step boundary in time and were terminated") !=
        std::string::npos);
  CHECK(r.failure.find("where each rank was:") != std::string::npos);
  for (const RankExit& e : r.exits) CHECK(e.terminated);
}
#endif
