// What the controller keeps of a run, and that it keeps it in flat memory: the per-rank spool on
// disk, the run history (shards and losses), the accumulator that folds events into the result
// (restarts drop what is done again, where each rank was), and the heap after 40,000 rank-steps
// folded into the result, the metrics CSV and the Chrome trace.
#include <doctest/doctest.h>

#include <malloc.h>

#include <algorithm>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "engine/control/library_words.h"
#include "engine/control/run_accumulator.h"
#include "engine/control/run_history.h"
#include "engine/core/error.h"
#include "engine/events/flight_recorder.h"
#include "engine/events/rank_events.h"
#include "engine/events/rank_spool.h"
#include "engine/export/chrome_trace.h"
#include "engine/export/metrics_csv.h"
#include "engine/rank/seed_report.h"

using namespace ringlab;

namespace {

Event restart_marker(int epoch, int64_t step) {
  Event e = make_event(EventKind::Restart, -1, step, epoch);
  e.value = 1;
  e.text = "restart 1 of 2 from epoch " + std::to_string(epoch);
  return e;
}

std::vector<double> losses(const RunHistory& h, int rank) {
  std::vector<double> out;
  h.for_each_step_loss(rank, [&](double x) { out.push_back(x); });
  return out;
}

std::vector<std::vector<int64_t>> shards(const RunHistory& h, int rank) {
  std::vector<std::vector<int64_t>> out;
  h.for_each_shard(rank, [&](const std::vector<int64_t>& s) { out.push_back(s); });
  return out;
}

// One rank's training step as a worker reports it: begin, the three spans, a collective, end.
void emit_step(EventSink& sink, int rank, int64_t step, int epoch, int64_t t0) {
  auto span = [&](EventKind kind, int64_t b, int64_t e) {
    Event ev = make_event(kind, rank, step, epoch);
    ev.t_begin_ns = t0 + b;
    ev.t_end_ns = t0 + e;
    return ev;
  };
  sink.emit(span(EventKind::StepBegin, 0, 0));
  sink.emit(span(EventKind::Forward, 1'000, 2'000));
  sink.emit(span(EventKind::Backward, 2'000, 4'000));
  Event begin = span(EventKind::CollectiveBegin, 3'000, 3'000);
  begin.collective_id = step;
  begin.text = "ring";
  sink.emit(begin);
  Event chunk = span(EventKind::ChunkTransfer, 3'500, 4'500);
  chunk.collective_id = step;
  chunk.phase = 0;
  chunk.ring_step = 0;
  chunk.src = 1 - rank;
  chunk.dst = rank;
  chunk.values = {1.0f, 2.0f};
  sink.emit(chunk);
  Event end = span(EventKind::CollectiveEnd, 3'000, 5'000);
  end.collective_id = step;
  sink.emit(end);
  sink.emit(span(EventKind::OptimizerStep, 5'000, 6'000));
  Event done = span(EventKind::StepEnd, 0, 7'000);
  done.value = 1.0 / static_cast<double>(step + 1);
  sink.emit(done);
}

// The accumulator and the two writers fed together, as `ringlab run --metrics --trace` feeds them.
struct Fold : EventSink {
  RunAccumulator accumulator{JobConfig{}};
  MetricsCsvWriter metrics;
  ChromeTraceWriter trace;
  void emit(Event e) override {
    accumulator.add(e);
    metrics.emit(e);
    trace.emit(std::move(e));
  }
};

// Rank `rank`'s process, ended by SIGKILL.
RankExit killed(int rank) {
  RankExit exit;
  exit.rank = rank;
  exit.signal = 9;
  return exit;
}

RankExit exited(int rank, int code) {
  RankExit exit;
  exit.rank = rank;
  exit.exited = true;
  exit.exit_code = code;
  return exit;
}

// Rank `rank`'s begin or end of collective `id` (bucket 0) at `step`, as its CollectiveRunner reports it.
Event collective_event(EventKind kind, int rank, int64_t step, int64_t id, const char* algorithm = "ring") {
  Event e = make_event(kind, rank, step, 0);
  e.collective_id = id;
  e.bucket = 0;
  e.text = algorithm;
  return e;
}

// The chunk rank `rank` received (from `src`) at ring step `ring_step` of `phase` (0: reduce-scatter).
Event chunk_event(int rank, int64_t step, int64_t id, int phase, int ring_step, int src = -1) {
  Event e = make_event(EventKind::ChunkTransfer, rank, step, 0);
  e.collective_id = id;
  e.phase = static_cast<int8_t>(phase);
  e.ring_step = ring_step;
  e.src = src;
  return e;
}

}  // namespace

TEST_CASE("a rank spool keeps each rank's bytes apart, in order, across its memory block") {
  RankSpool spool("test spool");
  std::vector<int64_t> big(20'000);  // 160 KB: more than one block goes to the file
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int64_t>(i) * 3;
  spool.append(1, big.data(), big.size() * sizeof(int64_t));
  const int64_t seven = 7;
  spool.append(0, &seven, sizeof seven);
  CHECK(spool.ranks() == std::vector<int>{0, 1});
  CHECK(spool.size(1) == big.size() * sizeof(int64_t));
  int64_t x = 0;
  spool.read(1, 12'345 * sizeof(int64_t), &x, sizeof x);
  CHECK(x == 12'345 * 3);
  spool.read(0, 0, &x, sizeof x);
  CHECK(x == 7);
  RankSpool::Reader in(spool, 1);  // value by value, across the reader's blocks
  std::vector<int64_t> back;
  while (!in.done()) back.push_back(in.read<int64_t>());
  CHECK(back == big);
  CHECK_THROWS_WITH_AS(in.read<int64_t>(), doctest::Contains("past the end"), Error);
  spool.truncate(1, 100 * sizeof(int64_t));
  CHECK(spool.size(1) == 800);
  const int64_t after = -1;
  spool.append(1, &after, sizeof after);
  spool.read(1, 800, &x, sizeof x);
  CHECK(x == -1);
  CHECK_THROWS_WITH_AS(spool.read(1, 800, &x, 2 * sizeof x), doctest::Contains("test spool: rank 1"), Error);
  CHECK(spool.failure().empty());
}

TEST_CASE("the run history reads back every shard and loss, and a restart drops what is redone") {
  RunHistory h;
  for (int epoch = 0; epoch < 3; ++epoch)
    for (int rank = 0; rank < 2; ++rank)
      h.add_shard(rank, {epoch * 10 + rank, epoch * 10 + rank + 2, epoch});
  for (int step = 0; step < 30; ++step)
    for (int rank = 0; rank < 2; ++rank) h.add_step_loss(rank, step + rank * 0.5);
  CHECK(h.epochs(1) == 3);
  CHECK(h.steps(0) == 30);
  CHECK(h.first_shard(1) == std::vector<int64_t>{1, 3, 0});
  CHECK(shards(h, 0)[2] == std::vector<int64_t>{20, 22, 2});

  h.rewind(1, 10);  // back to the checkpoint after epoch 1 (step 10)
  CHECK(h.epochs(0) == 1);
  CHECK(h.steps(1) == 10);
  CHECK(losses(h, 1).back() == doctest::Approx(9.5));
  h.add_shard(0, {99});
  h.add_step_loss(0, -1.0);
  CHECK(shards(h, 0) == std::vector<std::vector<int64_t>>{{0, 2, 0}, {99}});
  CHECK(losses(h, 0).size() == 11);
  CHECK(losses(h, 0).back() == -1.0);
  CHECK(h.first_shard(5).empty());
  CHECK(h.failure().empty());
}

TEST_CASE("the accumulator folds a run: demo, shards, losses, epochs, steps and time per step") {
  RunAccumulator acc(JobConfig{});
  Event demo = make_event(EventKind::CollectiveEnd, 0, -1, 0);
  demo.text = "demo";
  demo.values = {3, 6, 9};
  acc.add(demo);
  for (int rank = 0; rank < 2; ++rank) {
    Event shard = make_event(EventKind::SamplerShard, rank, -1, 0);
    shard.indices = {rank, rank + 2};
    acc.add(shard);
    for (int step = 0; step < 4; ++step) {
      Event end = make_event(EventKind::StepEnd, rank, step, 0);
      end.value = 0.25 * step;
      acc.add(end);
    }
  }
  Event epoch = make_event(EventKind::EpochEnd, 0, -1, 0);
  epoch.value = 0.5;
  acc.add(epoch);
  Event parameters = make_event(EventKind::FinalParameters, 0, 4, -1);
  parameters.values = {1.5f};
  acc.add(parameters);
  Event run_end = make_event(EventKind::RunEnd, 0, 4, 0);
  run_end.value = 20.0;  // us per step
  acc.add(run_end);
  CHECK(acc.steps_done() == 4);

  const RunResult r = acc.finish({});
  CHECK(r.ok);
  CHECK(r.failure.empty());
  CHECK(r.allreduce_demo_output == std::vector<float>{3, 6, 9});
  CHECK(r.rank_count == 2);
  CHECK(r.epoch_mse == std::vector<double>{0.5});
  CHECK(r.steps == 4);
  CHECK(r.us_per_step == doctest::Approx(20.0));
  CHECK(r.final_parameters == std::vector<float>{1.5f});
  REQUIRE(r.history);
  CHECK(r.history->first_shard(1) == std::vector<int64_t>{1, 3});
  CHECK(losses(*r.history, 1) == std::vector<double>{0.0, 0.25, 0.5, 0.75});
}

TEST_CASE("after a restart marker the failed attempt's steps, epochs and errors are gone") {
  RunAccumulator acc(JobConfig{});
  for (int step = 0; step < 6; ++step) acc.add(make_event(EventKind::StepEnd, 0, step, 0));
  Event epoch = make_event(EventKind::EpochEnd, 0, -1, 0);
  epoch.value = 0.9;
  acc.add(epoch);
  acc.add(epoch);
  Event error = make_event(EventKind::Error, 1, 5, 0);
  error.text = "connection closed by peer";
  acc.add(error);
  acc.add(restart_marker(1, 3));
  CHECK(acc.steps_done() == 3);
  for (int step = 3; step < 6; ++step) acc.add(make_event(EventKind::StepEnd, 0, step, 0));
  const RunResult r = acc.finish({});
  CHECK(r.ok);  // the error belonged to the attempt that was restarted
  CHECK(r.epoch_mse.size() == 1);
  CHECK(r.history->steps(0) == 6);
}

TEST_CASE("a failed run says who failed, the first error, and where each rank was") {
  JobConfig job;
  job.world_size = 2;
  RunAccumulator acc(job);
  for (int rank = 0; rank < 2; ++rank) acc.add(collective_event(EventKind::CollectiveBegin, rank, 7, 14));
  acc.add(chunk_event(0, 7, 14, 1, 0));
  Event error = make_event(EventKind::Error, 0, 7, 0);
  error.text = "rank 0: ring_allreduce: timed out after 2 s";
  acc.add(error);
  const RunResult r = acc.finish({killed(1)});
  INFO(r.failure);
  CHECK_FALSE(r.ok);
  CHECK(r.failure.find("rank 1 failed") != std::string::npos);
  // Rank 1 raised nothing: rank 0's error is what its death did to the ring, and is said as such.
  CHECK(r.failure.find("first error, from a rank left without its peer (rank 1 raised none): rank 0: "
                       "ring_allreduce: timed out after 2 s") != std::string::npos);
  CHECK(r.failure.find("rank 0: step 7, collective 14 (ring, bucket 0), every ring step done") !=
        std::string::npos);
  CHECK(r.failure.find("rank 1: step 7, collective 14 (ring, bucket 0), in reduce-scatter step 1 of 1, no chunk received yet") !=
        std::string::npos);
  CHECK(r.failure.find("its last report") == std::string::npos);  // level with the others: nothing to add
}

TEST_CASE("traced without chunks, where each rank was names no ring step that nothing reported") {
  JobConfig job;
  job.world_size = 2;
  job.trace_level = "steps";
  RunAccumulator acc(job);
  for (int rank = 0; rank < 2; ++rank) acc.add(collective_event(EventKind::CollectiveBegin, rank, 7, 14));
  const RunResult r = acc.finish({killed(1)});
  INFO(r.failure);
  CHECK(r.failure.find("rank 0: step 7, collective 14 (ring, bucket 0), not finished") != std::string::npos);
  CHECK(r.failure.find("no chunk received yet") == std::string::npos);
}

// `--fault kill:2@3` fires as step 3 begins: rank 2 finished step 2's all-reduce and began step 3.
// The report puts it at step 3, as the app's Failure lab does, and names its last collective as
// step 2's.
TEST_CASE("a rank killed as a step begins is at that step, after the last step's collective") {
  JobConfig job;
  job.world_size = 4;
  RunAccumulator acc(job);
  for (EventKind kind : {EventKind::CollectiveBegin, EventKind::CollectiveEnd}) acc.add(collective_event(kind, 2, 2, 4));
  acc.add(make_event(EventKind::StepBegin, 2, 3, 1));
  const RunResult r = acc.finish({killed(2)});
  INFO(r.failure);
  CHECK(r.failure.find("rank 2: step 3, having completed collective 4 (ring, bucket 0) in step 2") != std::string::npos);
}

// The seed's [1, 2, 3] all-reduce comes before the first step (its events carry step -1): a rank
// held in step 0 after it is placed there in words, not "in step -1".
TEST_CASE("a collective before the first step is said to come before it") {
  JobConfig job;
  job.world_size = 2;
  RunAccumulator acc(job);
  for (int rank = 0; rank < 2; ++rank)
    for (EventKind kind : {EventKind::CollectiveBegin, EventKind::CollectiveEnd})
      acc.add(collective_event(kind, rank, -1, 1, "demo"));
  acc.add(make_event(EventKind::StepBegin, 1, 0, 1));
  acc.add(collective_event(EventKind::CollectiveBegin, 0, -1, 2, "demo"));
  const RunResult r = acc.finish({killed(1)});
  INFO(r.failure);
  CHECK(r.failure.find("rank 1: step 0, having completed collective 1 (the [1, 2, 3] demo all-reduce) before it") !=
        std::string::npos);
  CHECK(r.failure.find("rank 0: before the first step, collective 2 (the [1, 2, 3] demo all-reduce), in reduce-scatter "
                       "step 1 of 1, no chunk received yet") != std::string::npos);
  CHECK(r.failure.find("step -1") == std::string::npos);
}

// Killed as it began collective 11, rank 1's report ends at 10, which the others' ends (both wait
// in 11) would call done; rank 2 received rank 1's chunk in 11, so it died inside 11.
TEST_CASE("a killed rank whose chunk another rank received is placed inside that collective") {
  JobConfig job;
  job.world_size = 3;
  RunAccumulator acc(job);
  acc.add(collective_event(EventKind::CollectiveBegin, 1, 9, 10));
  acc.add(collective_event(EventKind::CollectiveEnd, 1, 9, 10));
  acc.add(collective_event(EventKind::CollectiveBegin, 0, 10, 11));
  acc.add(collective_event(EventKind::CollectiveBegin, 2, 10, 11));
  acc.add(chunk_event(2, 10, 11, 0, 0, 1));
  const RunResult r = acc.finish({killed(1)});
  INFO(r.failure);
  CHECK(r.failure.find("rank 1: step 9, having completed collective 10 (ring, bucket 0) (its last report: it died later, "
                       "inside collective 11 at step 10, with its unsent events)") != std::string::npos);
}

// After a restart the new group redoes the steps from the checkpoint and numbers its collectives
// from 0: rank 1, killed before it reported anything in the new attempt, is not placed where the
// failed attempt left it (step 7, collective 14).
TEST_CASE("after a restart a rank's position comes from the new attempt only") {
  JobConfig job;
  job.world_size = 2;
  RunAccumulator acc(job);
  acc.add(collective_event(EventKind::CollectiveBegin, 0, 7, 14));
  acc.add(collective_event(EventKind::CollectiveBegin, 1, 7, 14));
  acc.add(restart_marker(1, 3));
  acc.add(collective_event(EventKind::CollectiveBegin, 0, 3, 0));
  const RunResult r = acc.finish({killed(1)});
  INFO(r.failure);
  CHECK(r.failure.find("rank 0: step 3, collective 0 (ring, bucket 0)") != std::string::npos);
  CHECK(r.failure.find("rank 1: no step or collective reported") != std::string::npos);
  CHECK(r.failure.find("collective 14") == std::string::npos);
  CHECK(r.failure.find("step 7") == std::string::npos);
}

// MPI, rank 1 killed: rank 0's step-1 chunk came in from rank 2, but its send to rank 1 never
// completed, so its flight recorder never began step 2. The line says the recorder's step, and why
// the chunk is ahead of it, as the table under it does.
TEST_CASE("a rank whose chunk arrived but whose send did not finish is in the step its flight record says") {
  JobConfig job;
  job.world_size = 3;
  RunAccumulator acc(job);
  acc.add(collective_event(EventKind::CollectiveBegin, 0, 3, 5));
  acc.add(chunk_event(0, 3, 5, 0, 0, 2));
  FlightRecorder recorder;
  for (int i = 0; i < 5; ++i) recorder.complete(recorder.schedule("allreduce", 2737, "mpi", "ring", i / 2));
  const int64_t seq = recorder.schedule("allreduce", 2737, "mpi", "ring", 3);
  recorder.start(seq);
  recorder.ring_step(seq, 0);
  Event record = make_event(EventKind::FlightRecord, 0, 3, 0);
  record.text = recorder.to_json(0).dump();
  acc.add(record);
  const RunResult r = acc.finish({killed(1)});
  INFO(r.failure);
  CHECK(r.failure.find("rank 0: step 3, collective 5 (ring, bucket 0), in reduce-scatter step 1 of 2 (its chunk "
                       "arrived; its send had not finished)") != std::string::npos);
}

// A fault injected on purpose is named in the report, whichever rank's process failed first.
TEST_CASE("a failed run names the fault that was injected") {
  JobConfig job;
  job.world_size = 2;
  RunAccumulator acc(job);
  Event fault = make_event(EventKind::Fault, 1, 5, 0);
  fault.text = "skip: leaving out this step's gradient all-reduce";
  acc.add(fault);
  Event error = make_event(EventKind::Error, 0, 5, 0);
  error.text = "rank 0: collective check: step 5: mismatched collectives";
  acc.add(error);
  const RunResult r = acc.finish({exited(0, 1)});
  INFO(r.failure);
  // On rank 1, caught by rank 0: the fault first, where a reader looks, then the rank that failed.
  CHECK(r.failure.rfind("fault injected: rank 1 at step 5: skip: leaving out this step's gradient all-reduce\nthen "
                        "rank 0 failed: exit code 1\n", 0) == 0);
  // A fault that ended its own rank (a kill) leaves that rank's failure first.
  RunAccumulator killed_acc(job);
  Event kill = make_event(EventKind::Fault, 1, 5, 0);
  kill.text = "kill: SIGKILL to this process";
  killed_acc.add(kill);
  CHECK(killed_acc.finish({killed(1)}).failure.rfind("rank 1 failed: killed by SIGKILL\nfault injected: rank 1 at step 5: kill", 0) == 0);
  // A restart forgets it with the rest of the failed attempt.
  RunAccumulator restarted(job);
  restarted.add(fault);
  restarted.add(restart_marker(0, 0));
  restarted.add(error);
  CHECK(restarted.finish({exited(0, 1)}).failure.find("fault injected") == std::string::npos);
}

// Killed by a signal, a rank takes its unsent events with it: its last report is steps behind
// the others, who wait for it in step 30; the report says so rather than placing it at step 9.
TEST_CASE("a killed rank's stale position is marked as its last report") {
  JobConfig job;
  job.world_size = 3;
  RunAccumulator acc(job);
  const auto in_collective = [&](int rank, int64_t step, int64_t id) {
    acc.add(collective_event(EventKind::CollectiveBegin, rank, step, id));
  };
  in_collective(1, 9, 10);
  in_collective(0, 30, 31);
  in_collective(2, 30, 31);
  const RunResult r = acc.finish({killed(1)});
  INFO(r.failure);
  CHECK(r.failure.find("rank 1: step 9, collective 10 (ring, bucket 0), in reduce-scatter step 1 of 2, no chunk received yet (its last report: "
                       "it died later, having completed collective 30, by step 30, with its unsent events)") != std::string::npos);
  CHECK(r.failure.find("rank 0: step 30, collective 31 (ring, bucket 0), in reduce-scatter step 1 of 2, no chunk received yet\n") !=
        std::string::npos);
}

// A script's os._exit(3): a failing exit code, no error, and its last events unsent. The others
// place it, and the first error (a peer's lost connection) is said to be the echo it is; a rank
// that raised its own error keeps "first error".
TEST_CASE("a rank that exits failing without a word is placed by the others, and the first error is its echo") {
  JobConfig job;
  job.world_size = 3;
  const auto in_collective = [](RunAccumulator& acc, int rank, int64_t step, int64_t id) {
    acc.add(collective_event(EventKind::CollectiveBegin, rank, step, id, "native"));
  };
  const auto error_of = [](int rank, const char* text) {
    Event e = make_event(EventKind::Error, rank, 6, 0);
    e.text = text;
    return e;
  };
  {
    RunAccumulator acc(job);
    in_collective(acc, 1, 4, 5);
    in_collective(acc, 0, 6, 7);
    in_collective(acc, 2, 6, 7);
    acc.add(error_of(2, "rank 2: step 6: Connection reset by peer"));
    const RunResult r = acc.finish({exited(1, 3), exited(0, 1), exited(2, 1)});
    INFO(r.failure);
    CHECK(r.failure.find("rank 1 failed: exit code 3") == 0);
    CHECK(r.failure.find("first error, from a rank left without its peer (rank 1 raised none): rank 2: step 6: "
                         "Connection reset by peer") != std::string::npos);
    CHECK(r.failure.find("rank 1: step 4, collective 5 (native, bucket 0), not finished (its last "
                         "report: it ended later, having completed collective 6, by step 6, with its unsent events)") != std::string::npos);
  }
  {
    RunAccumulator acc(job);
    in_collective(acc, 1, 6, 7);
    acc.add(error_of(1, "rank 1: step 6: ValueError: a bad batch"));
    acc.add(error_of(2, "rank 2: step 6: Connection reset by peer"));
    const RunResult r = acc.finish({exited(1, 1), exited(0, 1), exited(2, 1)});
    INFO(r.failure);
    CHECK(r.failure.find("first error: rank 1: step 6: ValueError: a bad batch") != std::string::npos);
    CHECK(r.failure.find("left without its peer") == std::string::npos);
    CHECK(r.failure.find("its last report") == std::string::npos);
  }
}

TEST_CASE("ranks that raised errors of their own at once are named together, whichever exited first") {
  // Two ranks of a script raise at the same step: which process exits first and whose error
  // arrives first are a race, and the two may differ ("rank 2 failed" over "first error: rank
  // 1"). A peer's echo of the lost connection is not an error of its own.
  JobConfig job;
  job.world_size = 3;
  const auto error_of = [](int rank, ErrorCode code, const char* text) {
    Event e = make_event(EventKind::Error, rank, 4, 0);
    e.code = static_cast<int32_t>(code);
    e.text = text;
    return e;
  };
  RunAccumulator acc(job);
  acc.add(error_of(1, ErrorCode::Other, "step 4: RuntimeError: rank 1 gives up"));
  acc.add(error_of(2, ErrorCode::Other, "step 4: RuntimeError: rank 2 gives up"));
  acc.add(error_of(0, ErrorCode::PeerClosed, "step 4: Connection closed by peer"));
  const RunResult r = acc.finish({exited(2, 1), exited(1, 1), exited(0, 1)});
  INFO(r.failure);
  CHECK(r.failure.find("ranks 1, 2 raised errors of their own\nrank 2 failed: exit code 1") == 0);
  CHECK(r.failure.find("first error: rank 1: step 4: RuntimeError: rank 1 gives up") != std::string::npos);

  // The first to exit failed on a lost peer only; the rank whose error (a cause) came first
  // exited a moment later: it heads the failure, as "first error" names it.
  RunAccumulator echo(job);
  echo.add(error_of(2, ErrorCode::CollectiveMismatch, "collective check: step 5: mismatched collectives"));
  echo.add(error_of(0, ErrorCode::PeerClosed, "step 5: Connection reset by peer"));
  const RunResult re = echo.finish({exited(0, 1), exited(2, 1), exited(1, 1)});
  INFO(re.failure);
  CHECK(re.failure.find("rank 2 failed: exit code 1") == 0);

  RunAccumulator one(job);  // one rank raised; the other's error is its echo: said as before
  one.add(error_of(1, ErrorCode::Other, "step 4: RuntimeError: rank 1 gives up"));
  one.add(error_of(0, ErrorCode::PeerClosed, "step 4: Connection closed by peer"));
  const RunResult r1 = one.finish({exited(1, 1), exited(0, 1), exited(2, 1)});
  INFO(r1.failure);
  CHECK(r1.failure.find("rank 1 failed: exit code 1") == 0);
  CHECK(r1.failure.find("raised errors of their own") == std::string::npos);
}

// Gloo pairs each rank's Nth all-reduce with the others' Nth: a rank that skipped a step goes on
// until it ends one collective early, and the rank left waiting fails on the closed connection.
TEST_CASE("a rank that ended normally while another waited for it in a later collective is named as the cause") {
  JobConfig job;
  job.world_size = 3;
  RunAccumulator acc(job);
  const auto collective = [&](int rank, int64_t step, int64_t id, bool done) {
    acc.add(collective_event(done ? EventKind::CollectiveEnd : EventKind::CollectiveBegin, rank, step, id, "native"));
  };
  for (int64_t id = 10; id <= 11; ++id) {
    for (int rank : {0, 2}) collective(rank, id - 1, id, false), collective(rank, id - 1, id, true);
    collective(1, id - 2, id, false), collective(1, id - 2, id, true);  // one step behind: it skipped one
  }
  collective(0, 11, 12, false);
  collective(2, 11, 12, false);
  Event error = make_event(EventKind::Error, 0, 11, 0);
  error.text = "rank 0: step 11: Connection closed by peer";
  acc.add(error);
  RankExit rank0 = exited(0, 1), rank1 = exited(1, 0), rank2 = exited(2, 0);
  rank2.terminated = true, rank2.exited = false, rank2.signal = 15;  // torn down after rank 0 failed
  const RunResult r = acc.finish({rank1, rank0, rank2});
  INFO(r.failure);
  // The rank that ended early comes first: rank 0's failure only echoes it.
  CHECK(r.failure.rfind("rank 1 ended its training after collective 11, while rank 0 in collective 12, rank 2 in collective "
                        "12 still waited for it: the ranks did not call the same collectives.", 0) == 0);
  CHECK(r.failure.find("made for uneven inputs).\nrank 0 failed: exit code 1\n") != std::string::npos);
  CHECK(r.failure.find("first error: rank 0: step 11: Connection closed by peer") != std::string::npos);
  // No flight recorder was sent: the last reports line up.
  CHECK(r.failure.find("\nfrom the ranks' last reports: collective 12 has ranks {0, 2} waiting in it; missing ranks: {1}") !=
        std::string::npos);

  // Torn down on its way out, after rank 0 had failed: its RunEnd "done" still says it ended.
  RunAccumulator torn(job);
  for (int rank : {0, 2}) {
    Event e = make_event(EventKind::CollectiveBegin, rank, 11, 0);
    e.collective_id = 12;
    torn.add(e);
  }
  Event last = make_event(EventKind::CollectiveEnd, 1, 10, 0);
  last.collective_id = 11;
  Event begin_last = last;
  begin_last.kind = EventKind::CollectiveBegin;
  torn.add(begin_last);
  torn.add(last);
  Event done = make_event(EventKind::RunEnd, 1, 10, 0);
  done.text = "done";
  torn.add(done);
  RankExit terminated = exited(1, 0);
  terminated.exited = false, terminated.signal = 15, terminated.terminated = true;
  CHECK(torn.finish({rank0, terminated}).failure.find("rank 1 ended its training after collective 11") != std::string::npos);

  // --uneven: the rank out of data ended its training, then timed out in its final barrier; a
  // rank it left waiting timed out a moment earlier. The second line names the rank the first
  // line blames, whichever timed out first.
  RunAccumulator uneven(job);
  for (int rank : {0, 2}) {
    Event e = make_event(EventKind::CollectiveBegin, rank, 11, 0);
    e.collective_id = 12;
    uneven.add(e);
  }
  uneven.add(begin_last);
  uneven.add(last);
  uneven.add(done);
  for (int rank : {0, 1}) {
    Event timeout = make_event(EventKind::Error, rank, 11, 0);
    timeout.code = static_cast<int32_t>(ErrorCode::Timeout);
    timeout.text = rank == 0 ? "ring_allreduce: timed out" : "barrier: timed out";
    uneven.add(timeout);
  }
  const RunResult ru = uneven.finish({exited(0, 1), exited(1, 1), rank2});
  INFO(ru.failure);
  CHECK(ru.failure.find("made for uneven inputs).\nrank 1 failed: exit code 1\n") != std::string::npos);

  RunAccumulator level(job);  // every rank ended its last collective: nobody was left waiting
  for (int rank = 0; rank < 3; ++rank)
    for (EventKind kind : {EventKind::CollectiveBegin, EventKind::CollectiveEnd}) {
      Event e = make_event(kind, rank, 4, 0);
      e.collective_id = 5;
      level.add(e);
    }
  CHECK(level.finish({exited(1, 0), exited(0, 3), exited(2, 0)}).failure.find("ended its training") == std::string::npos);
}

TEST_CASE("when mpirun started the ranks, the one that ended without a word is named first") {
  JobConfig job;
  job.world_size = 3;
  RunAccumulator acc(job);
  for (int rank : {0, 2}) {  // stopped after rank 1 died: each says so, and sends its flight record
    Event torn = make_event(EventKind::TornDown, rank, 3, 0);
    torn.text = fmt::format("rank {}: stopped by the controller (SIGTERM)", rank);
    acc.add(torn);
    Event record = make_event(EventKind::FlightRecord, rank, 3, 0);
    record.text = "{}";
    acc.add(record);
  }
  RankExit mpirun;
  mpirun.program = "mpirun";
  mpirun.exited = true;
  mpirun.exit_code = 137;
  RunResult r = acc.finish({mpirun});
  INFO(r.failure);
  CHECK(r.failure.rfind("rank 1 failed: killed by SIGKILL (mpirun's exit code 137 is 128 + 9); "
                        "mpirun failed: exit code 137", 0) == 0);
  // An exit code that names no signal: the rank is still named, the how left to mpirun's words.
  mpirun.exit_code = 1;
  r = acc.finish({mpirun});
  CHECK(r.failure.rfind("rank 1 failed: it ended without a word, killed or crashed (mpirun's own message says how); "
                        "mpirun failed: exit code 1", 0) == 0);
  mpirun.exit_code = 137;
  // Nobody said anything (mpirun could not start them): no rank is blamed.
  RunAccumulator quiet(job);
  r = quiet.finish({mpirun});
  CHECK(r.failure.rfind("mpirun failed: exit code 137", 0) == 0);
}

// `kill -TERM` on one worker (or scancel): it said "stopped by the controller (SIGTERM)", the
// account listed it as the stop's echo and led with a healthy rank's lost connection.
TEST_CASE("a rank ended by a SIGTERM from outside ringlab is named as the cause, not as the stop's echo") {
  JobConfig job;
  job.world_size = 3;
  RunAccumulator acc(job);
  Event torn = make_event(EventKind::TornDown, 2, 7, 0);
  torn.text = "ended by a SIGTERM from process 4242, which is not ringlab's: kill, scancel, or a job's time limit";
  torn.code = kTornDownFromOutside;
  acc.add(torn);
  for (int rank : {0, 1}) {
    Event lost = make_event(EventKind::Error, rank, 8, 0);
    lost.code = static_cast<int32_t>(ErrorCode::PeerClosed);
    lost.text = "ring_allreduce: recv: Connection closed by peer";
    acc.add(lost);
  }
  RankExit two = exited(2, 143);
  RankExit zero = exited(0, 1), one = exited(1, 1);
  zero.terminated = one.terminated = true;  // the controller took the rest down after rank 2 went
  const RunResult r = acc.finish({two, zero, one});
  INFO(r.failure);
  CHECK(r.failure.rfind("rank 2 failed: it was ended by a SIGTERM that ringlab did not send (exit code 143): kill, "
                        "scancel, or a job's time limit; the others then lost it\n", 0) == 0);
  CHECK(r.failure.find("first error, from a rank left without its peer (rank 2 raised none): rank 0: ") != std::string::npos);
  // The report's field: not `interrupted` (nobody asked ringlab), but stopped all the same.
  CHECK(r.stopped_from_outside == "rank 2 was ended by a SIGTERM that ringlab did not send (exit code 143): kill, "
                                  "scancel, or a job's time limit");
  CHECK_FALSE(r.interrupted());
  // The ranks that lost it exited first (it was held a moment to report): it still heads the story.
  zero.terminated = one.terminated = false;
  CHECK(acc.finish({zero, one, two}).failure.rfind("rank 2 failed: it was ended by a SIGTERM that ringlab did not send", 0) == 0);
  // The controller's own stop says what it always said.
  RunAccumulator stopped(job);
  torn.code = 0;
  torn.text = "stopped by the controller (SIGTERM)";
  stopped.add(torn);
  two.terminated = true;
  const RunResult own = stopped.finish({two});
  CHECK(own.failure.find("ended by a SIGTERM that ringlab did not send") == std::string::npos);
  CHECK(own.stopped_from_outside.empty());
}

TEST_CASE("metrics rows of steps redone after a restart are written once, from the new attempt") {
  MetricsCsvWriter w;
  for (int step = 0; step < 5; ++step) emit_step(w, 0, step, step / 2, 1'000'000 * (step + 1));
  w.emit(restart_marker(1, 2));
  for (int step = 2; step < 4; ++step) emit_step(w, 0, step, step / 2, 9'000'000 * (step + 1));
  std::ostringstream out;
  w.write(out);
  const std::string csv = out.str();
  const std::string expected_tail = "0,1,2,0.333333333,7.000,1.000,2.000,2.000,1.000\n"
                                    "0,1,3,0.25,7.000,1.000,2.000,2.000,1.000\n";
  CHECK(csv.substr(csv.size() - expected_tail.size()) == expected_tail);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 4);  // header + steps 0..3
}

TEST_CASE("folding a long run keeps the controller's heap flat") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  MESSAGE("skipped under a sanitizer: its allocator does not report through mallinfo2");
#else
  Fold fold;
  int64_t t = 1'000'000;
  auto run_steps = [&](int64_t from, int64_t to) {
    for (int64_t step = from; step < to; ++step) {
      for (int rank = 0; rank < 2; ++rank) {
        if (step % 100 == 0) {  // a new epoch: every rank reports its shard
          Event shard = make_event(EventKind::SamplerShard, rank, -1, static_cast<int>(step / 100));
          shard.indices.assign(3'200, step);
          fold.emit(shard);
        }
        emit_step(fold, rank, step, static_cast<int>(step / 100), t);
      }
      t += 10'000;
    }
  };
  run_steps(0, 2'000);  // warm-up: the spools' blocks and the lanes exist
  const size_t warm = mallinfo2().uordblks;
  run_steps(2'000, 20'000);
  const size_t end = mallinfo2().uordblks;
  MESSAGE("heap in use after 4,000 rank-steps: " << warm << " bytes; after 40,000: " << end);
  // Kept in memory these 36,000 rank-steps were ~55 MB of events; folded, at most a few blocks.
  CHECK(end < warm + 512 * 1024);
  std::ostringstream out;
  fold.metrics.write(out);
  const std::string csv = out.str();
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 40'000);
  std::ostringstream trace;
  fold.trace.write(trace);
  const std::string json = trace.str();
  CHECK(std::count(json.begin(), json.end(), '\n') > 40'000 * 7);  // 7 slices, 2 arrows, a counter per rank-step
  const RunResult r = fold.accumulator.finish({});
  CHECK(r.history->steps(1) == 20'000);
  CHECK(r.history->epochs(0) == 200);
#endif
}

TEST_CASE("a step that ended just before its rank died is kept when the restart resumes after it") {
  MetricsCsvWriter w;
  for (int step = 0; step < 3; ++step) emit_step(w, 0, step, 0, 1'000'000 * (step + 1));
  // Rank 0 is killed after step 2 ended and before step 3 began; the group resumes at step 3.
  w.emit(restart_marker(1, 3));
  emit_step(w, 0, 3, 1, 9'000'000);
  std::ostringstream out;
  w.write(out);
  const std::string csv = out.str();
  CHECK(csv.find("\n0,0,2,0.333333333,") != std::string::npos);
  CHECK(csv.find("\n0,1,3,0.25,") != std::string::npos);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 4);
}

TEST_CASE("without keep_all the history keeps each rank's first shard only, and says it is not complete") {
  RunHistory h(false);
  h.add_shard(0, {4, 5});
  h.add_shard(0, {6, 7});
  h.add_step_loss(0, 0.5);
  CHECK_FALSE(h.complete());
  CHECK(h.epochs(0) == 1);
  CHECK(h.steps(0) == 0);
  CHECK(h.first_shard(0) == std::vector<int64_t>{4, 5});
}

TEST_CASE("an event that names a rank beyond the largest world size is not counted as a rank") {
  RunAccumulator acc(JobConfig{});
  acc.add(make_event(EventKind::StepEnd, 1, 0, 0));
  acc.add(make_event(EventKind::StepEnd, kMaxWorldSize, 0, 0));
  acc.add(make_event(EventKind::StepEnd, 1'000'000, 0, 0));
  const RunResult r = acc.finish({});
  CHECK(r.rank_count == 2);
  CHECK(r.history->steps(kMaxWorldSize) == 0);
}

TEST_CASE("a shard in pieces is kept whole once its last piece is in; one left incomplete is dropped") {
  RunHistory h;
  h.add_shard_piece(0, 5, 0, {1, 2});
  CHECK(h.epochs(0) == 0);
  h.add_shard_piece(0, 5, 2, {3, 4, 5});
  CHECK(h.epochs(0) == 1);
  h.add_shard_piece(0, 4, 0, {9, 9});     // its rank died after the first piece of this one
  h.add_shard_piece(0, 3, 0, {6, 7, 8});  // the next one starts over where the last whole one ended
  h.add_shard_piece(0, 4, 2, {0, 0});     // a piece whose beginning is missing is not kept
  CHECK(h.epochs(0) == 2);
  CHECK(shards(h, 0) == std::vector<std::vector<int64_t>>{{1, 2, 3, 4, 5}, {6, 7, 8}});
  h.add_shard_piece(0, 4, 0, {5, 5});
  h.rewind(1, 0);  // a restart from epoch 1 drops the second shard and the open third one
  CHECK(h.epochs(0) == 1);
  h.add_shard_piece(0, 1, 0, {4});
  CHECK(shards(h, 0) == std::vector<std::vector<int64_t>>{{1, 2, 3, 4, 5}, {4}});
}

TEST_CASE("a shard and the parameters longer than a frame may carry travel in pieces and arrive whole") {
  struct Count : EventSink {
    RunAccumulator accumulator{JobConfig{}};
    int events = 0;
    void emit(Event e) override {
      ++events;
      CHECK(e.indices.size() <= kPieceElements);
      CHECK(e.values.size() <= kPieceElements);
      accumulator.add(e);
    }
  } sink;
  std::vector<int64_t> shard(2 * kPieceElements + 3);
  for (size_t i = 0; i < shard.size(); ++i) shard[i] = static_cast<int64_t>(shard.size() - i);
  emit_shard(sink, 1, 0, 0, shard);
  CHECK(sink.events == 3);
  std::vector<float> parameters(kPieceElements + 1);
  for (size_t i = 0; i < parameters.size(); ++i) parameters[i] = static_cast<float>(i) * 0.5f;
  emit_final_parameters(sink, 0, 7, parameters);
  CHECK(sink.events == 5);
  emit_shard(sink, 0, 0, 0, std::vector<int64_t>{3, 1, 2});  // short: one event, as before
  CHECK(sink.events == 6);
  const RunResult r = sink.accumulator.finish({});
  CHECK(r.final_parameters == parameters);
  REQUIRE(r.history);
  CHECK(r.history->first_shard(1) == shard);
  CHECK(r.history->first_shard(0) == std::vector<int64_t>{3, 1, 2});
}

// Rank 0 died before its RunEnd (a kill, a failure): its steps still took time, timed by their
// spans, not reported as 0 s (a 37 s failed run's report said train_seconds 0.0).
TEST_CASE("a failed run whose rank 0 never reported its end is timed by its steps' spans") {
  JobConfig job;
  job.world_size = 2;
  RunAccumulator acc(job);
  for (int step = 0; step < 3; ++step) {
    Event end = make_event(EventKind::StepEnd, 0, step, 0);
    end.t_begin_ns = 1'000'000'000 + step * 1'000'000;
    end.t_end_ns = end.t_begin_ns + 100'000;  // 100 µs
    acc.add(end);
  }
  const RunResult r = acc.finish({killed(1)});
  CHECK_FALSE(r.ok);
  CHECK(r.steps == 3);
  CHECK(r.train_seconds == doctest::Approx(300e-6));
  CHECK(r.us_per_step == doctest::Approx(100.0));
}

TEST_CASE("a PyTorch script stopped by Ctrl-C: its processes were sent SIGTERM, its epochs are not ringlab's to count") {
  JobConfig job;
  job.world_size = 2;
  RunAccumulator acc(job);
  for (int64_t step = 0; step < 13; ++step) acc.add(make_event(EventKind::StepEnd, 0, step, 0));
  RankExit torn = killed(1);
  torn.signal = 15;
  torn.terminated = true;
  const RunResult r = acc.finish({torn}, StopInfo{StopCause::Interrupt, "", true, -1, {}});
  INFO(r.failure);
  CHECK(r.failure.rfind("interrupted by SIGINT (Ctrl-C) at step 13: the script's processes were sent SIGTERM (a script "
                        "does not stop together at a step boundary)", 0) == 0);
  CHECK(r.failure.find("of 4 epochs") == std::string::npos);  // the job's default, not the script's
}

TEST_CASE("a stop asked for on another node is named once: by its cause, then the node") {
  JobConfig job;
  job.world_size = 2;
  for (const StopCause cause : {StopCause::Hangup, StopCause::Terminate}) {
    RunAccumulator acc(job);
    for (int64_t step = 0; step < 5; ++step) acc.add(make_event(EventKind::StepEnd, 0, step, 0));
    const RunResult r = acc.finish({exited(0, 0), exited(1, 0)}, StopInfo{cause, "on node 1", false, 1, {}});
    INFO(r.failure);
    const std::string named = cause == StopCause::Hangup ? "stopped by SIGHUP (the terminal closed) on node 1 at step 5"
                                                         : "stopped by SIGTERM on node 1 at step 5";
    CHECK(r.failure.rfind(named, 0) == 0);
    CHECK(r.failure.find("on node 1 on node 1") == std::string::npos);
    CHECK(r.stop_cause == cause);
    CHECK(r.stop_node == 1);  // the report's stopped_on_node
  }
}

TEST_CASE("a rank killed on node 0 while node 1's note of its own victim came first: the killed rank heads the failure") {
  JobConfig job;
  job.world_size = 4;
  job.ranks_per_node = {2, 2};
  RunAccumulator acc(job);
  RankExit victim = exited(2, 1);
  victim.node = 1;
  const RankExit cause = killed(1);  // merged: killed by a signal first, whichever node saw it
  const RunResult r = acc.finish({cause, victim}, StopInfo{StopCause::OtherNode, "node 1: rank 2 exit code 1", false, 1, {}});
  INFO(r.failure);
  CHECK(r.failure.rfind("rank 1 (node 0) failed: killed by SIGKILL", 0) == 0);
  CHECK(r.failure.find("node 1: rank 2 exit code 1") == std::string::npos);
}

TEST_CASE("srun ended by a SIGTERM ringlab did not send (scancel): said as Slurm's stop") {
  JobConfig job;
  job.world_size = 4;
  RunAccumulator acc(job);
  RankExit srun = exited(-1, 143);
  srun.program = "srun";
  const RunResult r = acc.finish({srun});
  INFO(r.failure);
  CHECK(r.failure.rfind("srun was stopped by SIGTERM (exit code 143: Slurm stops a step so on scancel or at the job's "
                        "time limit)", 0) == 0);
  CHECK(r.stopped_from_outside == "srun was stopped by SIGTERM (exit code 143: Slurm stops a step so on scancel or at "
                                  "the job's time limit)");
  srun.exit_code = 1;  // a task failed: srun's own failure, as before
  const RunResult failed = RunAccumulator(job).finish({srun});
  CHECK(failed.failure.find("srun failed: exit code 1") != std::string::npos);
  CHECK(failed.stopped_from_outside.empty());
}

// A 2-rank run whose ranks report loss(step, rank) at the end of each of `steps` steps, every
// process then ending well: what the accumulator makes of the losses alone.
namespace {
RunResult two_ranks_reporting(int64_t steps, const std::function<double(int64_t, int)>& loss) {
  JobConfig job;
  job.world_size = 2;
  RunAccumulator acc(job);
  for (int64_t step = 0; step < steps; ++step)
    for (int rank = 0; rank < 2; ++rank) {
      Event end = make_event(EventKind::StepEnd, rank, step, 0);
      end.value = loss(step, rank);
      acc.add(end);
    }
  return acc.finish({exited(0, 0), exited(1, 0)});
}
}  // namespace

TEST_CASE("every process ended well on a loss that is no number: the run diverged, and says where") {
  // Rank 1's loss overflows at step 17 (rank 0's a step later); nan from there on.
  const RunResult r = two_ranks_reporting(20, [](int64_t step, int rank) {
    return step < 17 || (step == 17 && rank == 0) ? 1e30 * double(step) : step == 17 ? INFINITY : NAN;
  });
  INFO(r.failure);
  CHECK_FALSE(r.ok);
  CHECK(r.failure.rfind("the training diverged: rank 1's loss was inf at step 17", 0) == 0);
  // A run whose losses stay numbers is not touched.
  JobConfig job;
  job.world_size = 2;
  RunAccumulator fine(job);
  Event end = make_event(EventKind::StepEnd, 0, 0, 0);
  end.value = 0.5;
  fine.add(end);
  CHECK(fine.finish({exited(0, 0), exited(1, 0)}).ok);
}

// lr 50 on the course's script: the loss went from 1.27 to 20,790 at step 1 and was inf only at
// step 7; the failure named step 7 alone.
TEST_CASE("a diverged run says where its loss began to blow up, before it stopped being a number") {
  const double losses[] = {1.27, 20790, 3.1e9, 4.4e17, 8e25, 1e33, 2e37};
  const RunResult r = two_ranks_reporting(9, [&](int64_t step, int) { return step < 7 ? losses[step] : step == 7 ? INFINITY : NAN; });
  INFO(r.failure);
  CHECK(r.failure.rfind("the training diverged: rank 0's loss was inf at step 7 (it began earlier: rank 0's loss was "
                        "20790 at step 1, over 100 times its first, 1.27), and every process went on",
                        0) == 0);
  CHECK(r.failure.find("; a learning rate too large for the model and its data is the usual cause") != std::string::npos);
}

TEST_CASE("a loss that turns nan from one step to the next is not blamed on the learning rate alone") {
  const RunResult r = two_ranks_reporting(6, [](int64_t step, int) { return step < 4 ? 1.0 - 0.1 * double(step) : NAN; });
  INFO(r.failure);
  CHECK(r.failure.rfind("the training diverged: rank 0's loss was nan at step 4, and every process went on", 0) == 0);
  CHECK(r.failure.find("rank 0's loss had not grown 100-fold before: a learning rate far too large can do that in a "
                       "step or two, as can a NaN or infinity in the data") != std::string::npos);
}

TEST_CASE("a script that did not announce its epochs is reported with the epochs it trained in") {
  const auto run = [](const std::string& job_json) {
    RunAccumulator acc(JobConfig{});
    Event begin = make_event(EventKind::RunBegin, 0, -1, 0);
    begin.value = 1;
    begin.text = job_json;
    acc.add(begin);
    for (int64_t step = 0; step < 9; ++step) acc.add(make_event(EventKind::StepEnd, 0, step, static_cast<int>(step / 3)));
    return acc.finish({});
  };
  CHECK(run(R"({"world_size": 1})").job.epochs == 3);              // JobConfig would say 4
  CHECK(run(R"({"world_size": 1, "epochs": 5})").job.epochs == 5);  // what it announced stands
}

// A script whose watch() got no sampler (nor samples=, epochs=) leaves those fields to JobConfig's
// defaults: the result names them, so that neither the report nor the summary presents them as the
// script's. Its epochs are unknown unless something said where one begins.
TEST_CASE("a script's training fields it did not report are named, its epochs among them only when unseen") {
  const auto run = [](const std::string& job_json, bool shard) {
    RunAccumulator acc(JobConfig{});
    Event begin = make_event(EventKind::RunBegin, 0, -1, 0);
    begin.value = 1;
    begin.text = job_json;
    acc.add(begin);
    if (shard) {
      Event s = make_event(EventKind::SamplerShard, 0, 0, 0);
      s.indices = {1, 0};
      acc.add(s);
    }
    for (int64_t step = 0; step < 4; ++step) acc.add(make_event(EventKind::StepEnd, 0, step, 0));
    return acc.finish({});
  };
  const std::string no_sampler = R"({"world_size": 1, "lr": 0.1, "momentum": 0, "weight_decay": 0, "seed": 3,
                                     "batch_size": 8, "features": 6, "hidden": [16]})";
  CHECK(run(no_sampler, false).job_not_reported == std::vector<std::string>{"samples", "epochs", "shuffle", "drop_last", "set_epoch"});
  CHECK(run(no_sampler, true).job_not_reported == std::vector<std::string>{"samples", "shuffle", "drop_last", "set_epoch"});
  CHECK(run(no_sampler, true).job.epochs == 1);
  JobConfig full;
  CHECK(run(nlohmann::json(full).dump(), false).job_not_reported.empty());  // ringlab's own workers
}

// Rank `rank`'s process, ended by the launcher's SIGKILL after it ended the run.
RankExit terminated(int rank, bool was_stopped = false) {
  RankExit exit = killed(rank);
  exit.terminated = true;
  exit.was_stopped = was_stopped;
  return exit;
}

// Rank 0 waits in collective 6; rank 1 finished collective 5 and never came.
void rank_1_never_came(RunAccumulator& acc) {
  for (int rank = 0; rank < 2; ++rank) acc.add(collective_event(EventKind::CollectiveBegin, rank, 4, 5));
  for (int rank = 0; rank < 2; ++rank) acc.add(collective_event(EventKind::CollectiveEnd, rank, 4, 5));
  acc.add(collective_event(EventKind::CollectiveBegin, 0, 5, 6));
}

std::string first_lines(const std::string& text, int n) {
  size_t end = 0;
  for (int i = 0; i < n && end != std::string::npos; ++i) end = text.find('\n', end + (i ? 1 : 0));
  return text.substr(0, end);
}

TEST_CASE("the watchdog's stop says who never joined the collective the others waited in") {
  JobConfig job;
  job.world_size = 2;
  RunAccumulator acc(job);
  rank_1_never_came(acc);
  const RunResult r = acc.finish({terminated(0), terminated(1)}, StopInfo{StopCause::NoProgress, "", true, -1, {}});
  CHECK(first_lines(r.failure, 2) ==
        "stopped by the controller's watchdog (no progress)\nrank 1 never joined collective 6, where rank 0 waited for it");
}

TEST_CASE("a rank whose process was stopped is named first, then the rank that timed out waiting for it") {
  JobConfig job;
  job.world_size = 2;
  RunAccumulator acc(job);
  rank_1_never_came(acc);
  const RunResult r = acc.finish({exited(0, 1), terminated(1, true)});
  CHECK(first_lines(r.failure, 2) ==
        "rank 1's process was stopped (SIGSTOP, or Ctrl-Z on it): the other ranks waited for it in their collective "
        "until their timeout\nthen rank 0 failed: exit code 1");
}

TEST_CASE("a straggler's delay that failed the run is named first, from the job") {
  JobConfig job;
  job.world_size = 2;
  job.faults = {"delay:1:5000"};
  RunAccumulator acc(job);
  rank_1_never_came(acc);
  const RunResult r = acc.finish({exited(0, 1), terminated(1)});
  CHECK(first_lines(r.failure, 2) ==
        "fault injected: rank 1: delay: 5000 ms before each of its steps (a straggler: the others wait for it in every "
        "all-reduce)\nthen rank 0 failed: exit code 1");
}

// A script whose rank 1 called one dist.all_reduce more than rank 0 died of gloo's abort; the
// failure quoted "op.preamble.length <= op.nbytes. 2740 vs 4" and said nothing of what it means.
TEST_CASE("gloo's abort on a message larger than its buffer is said in words: the ranks were in different collectives") {
  JobConfig job;
  job.world_size = 2;
  RunAccumulator acc(job);
  RankExit aborted = killed(1);
  aborted.signal = 6;
  aborted.last_words = "what():  [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] "
                       "op.preamble.length <= op.nbytes. 2740 vs 4";
  const RunResult r = acc.finish({aborted});
  INFO(r.failure);
  CHECK(r.failure.find("op.preamble.length <= op.nbytes. 2740 vs 4 (gloo: a message of 2740 bytes came for a buffer of "
                       "4: the ranks were in different collectives, one calling a collective the other did not, or "
                       "the same one with another tensor size)") != std::string::npos);
  CHECK(library_words_explained("RuntimeError: Connection closed by peer").empty());
}

// A script's rank in a dist.all_reduce of its own (outside DDP, so not reported) read as "never
// joined collective 7": the failure says what ringlab cannot see.
TEST_CASE("a script's failure that names a rank missing says its own collectives are not seen") {
  CHECK(script_collectives_note("ringlab run: stopped by the controller's watchdog\nrank 1 never joined collective 7, "
                                "where rank 0 waited for it")
            .find("a dist.all_reduce or barrier of its own") != std::string::npos);
  CHECK(script_collectives_note("rank 1 failed: killed by SIGKILL").empty());
}

// A worker killed during the demo all-reduce left rank 0 without its sum: the header printed
// "all-reduce SUM (rank 0): []", which reads as a sum of nothing.
TEST_CASE("the seed's header says the demo all-reduce was not reached, not an empty sum") {
  JobConfig job;
  job.world_size = 4;
  CHECK(seed_header(job, {4, 8, 12}, 2, 64, {}).find("all-reduce SUM (rank 0): [4.0, 8.0, 12.0] (sum over all ranks)\n") !=
        std::string::npos);
  const std::string early = seed_header(job, {}, 2, 64, {});
  CHECK(early.find("all-reduce SUM (rank 0): not reached (the run ended before this all-reduce did)\n") != std::string::npos);
  CHECK(early.find("[]") == std::string::npos);
}

// Killed during the demo all-reduce, before any step: its place read "having completed
// collective 0, by step -1".
TEST_CASE("a rank killed before the first step is placed before the first step, not at step -1") {
  JobConfig job;
  job.world_size = 3;
  RunAccumulator acc(job);
  acc.add(collective_event(EventKind::CollectiveBegin, 0, -1, 1));
  acc.add(collective_event(EventKind::CollectiveBegin, 2, -1, 1));
  const RunResult r = acc.finish({killed(1)});
  INFO(r.failure);
  CHECK(r.failure.find("it died later, having completed collective 0 before the first step, with its unsent events)") !=
        std::string::npos);
  CHECK(r.failure.find("step -1") == std::string::npos);
}
