// The failure labs' building blocks: fault parsing, the flight recorder's line-up, collective
// fingerprints between ring neighbours, and checkpoints that refuse to load when damaged.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/ddp/collective_check.h"
#include "engine/dist/local_process_group.h"
#include "engine/rank/checkpoint.h"
#include "engine/job/fault_plan.h"
#include "engine/events/flight_recorder.h"

using namespace ringlab;

TEST_CASE("faults parse, and bad ones name the entry") {
  JobConfig job;
  job.world_size = 4;
  job.faults = {"kill:2@10", "delay:1:25", "resize:3@0"};
  const auto faults = parse_faults(job);
  REQUIRE(faults.size() == 3);
  CHECK(faults[0].kind == FaultKind::Kill);
  CHECK(faults[0].rank == 2);
  CHECK(faults[0].step == 10);
  CHECK(faults[1].delay_ms == 25.0);
  FaultPlan plan(job, 2);
  CHECK(plan.at(FaultKind::Kill, 10) != nullptr);
  CHECK(plan.at(FaultKind::Kill, 9) == nullptr);
  CHECK(FaultPlan(job, 1).delay_ms() == 25.0);

  for (const char* bad : {"kill:9@1", "kill:x@1", "explode:1@1", "kill:1", "delay:1@5", "kill:-1@2"}) {
    job.faults = {bad};
    CAPTURE(bad);
    try {
      parse_faults(job);
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(bad) != std::string::npos);
    }
  }
  job.faults.clear();
  job.uneven = {"1:2", "3:1"};
  CHECK(parse_uneven(job) == std::vector<int64_t>{0, 2, 0, 1});
  job.uneven = {"4:1"};
  CHECK_THROWS_AS(parse_uneven(job), InputError);
}

TEST_CASE("flight recorder keeps the last K collectives and their states") {
  FlightRecorder fr(3);
  for (int i = 0; i < 5; ++i) {
    const int64_t s = fr.schedule("allreduce", 100, "gloo", "ring", i);
    fr.start(s);
    if (i < 4) fr.complete(s);
  }
  fr.ring_step(4, 2);
  const auto recs = fr.records();
  REQUIRE(recs.size() == 3);
  CHECK(recs.front().seq == 2);
  CHECK(recs.back().seq == 4);
  CHECK(recs.back().state == CollectiveState::Started);
  CHECK(recs.back().ring_step == 2);
}

TEST_CASE("the controller's line-up names the missing rank") {
  // Ranks 0, 2 wait in all-reduce #3; rank 1 is in a barrier with the same number; rank 3 sent
  // nothing (its process is gone).
  auto rank_json = [](int rank, const std::string& op, const std::string& state, int ring_step = -1) {
    FlightRecorder fr;
    for (int i = 0; i < 3; ++i) fr.complete(fr.schedule("allreduce", 10, "gloo", "ring", i));
    const int64_t s = fr.schedule(op, 10, "gloo", "ring", 3);
    if (state != "scheduled") fr.start(s);
    if (ring_step >= 0) fr.ring_step(s, ring_step);
    return fr.to_json(rank);
  };
  // Rank 0 began the ring's fourth step of six: the first all-gather step, after 3 reduce-scatter steps.
  std::vector<nlohmann::json> reported = {rank_json(0, "allreduce", "started", 3), rank_json(1, "barrier", "started"),
                                          rank_json(2, "allreduce", "scheduled")};
  const nlohmann::json j = flight_report_json(reported, 4);
  CHECK(j["stuck_seq"] == 3);
  CHECK(j["stuck_op"] == "allreduce");
  CHECK(j["waiting_ranks"] == std::vector<int>{0, 2});
  CHECK(j["missing_ranks"] == std::vector<int>{1, 3});
  CHECK(j["silent_ranks"] == std::vector<int>{3});
  const std::string table = format_flight_report(reported, 4);
  CHECK(table.find("missing ranks: {1, 3}") != std::string::npos);
  CHECK(table.find("rank 1 is elsewhere: barrier #3") != std::string::npos);
  CHECK(table.find("no record (its process did not answer: gone, or stopped)") != std::string::npos);
  // The ring step in the words of the report's other lines: counted from 1 within its phase.
  CHECK(table.find("started         3  all-gather step 1 of 3\n") != std::string::npos);
  CHECK(table.find("started         3  -\n") != std::string::npos);  // the barrier: no ring
}

// Rank 1 never began step 0's all-reduce: its last collective is the one before the first step
// (step -1 in the records), which the table and the line under it say without a "-1".
TEST_CASE("the flight recorder's table places a collective before the first step in words") {
  auto rank_json = [](int rank, bool began_step_0) {
    FlightRecorder fr;
    fr.complete(fr.schedule("allreduce", 3, "gloo", "ring", -1));
    if (began_step_0) fr.start(fr.schedule("allreduce", 10, "gloo", "ring", 0));
    return fr.to_json(rank);
  };
  const std::string table = format_flight_report({rank_json(0, true), rank_json(1, false)}, 2);
  INFO(table);
  CHECK(table.find("completed       -  -\n") != std::string::npos);
  CHECK(table.find("rank 1 is elsewhere: allreduce #0 (completed) before the first step") != std::string::npos);
  CHECK(table.find("-1") == std::string::npos);
}

// --fault skip:1@5: rank 1 left out step 5's all-reduce, so its collective 7 is step 6's while the
// others' is step 5's. Every rank waits "in collective 7", none is missing: the steps tell.
TEST_CASE("the line-up says when ranks wait in the same collective number at different steps") {
  auto rank_json = [](int rank, int64_t step) {
    FlightRecorder fr;
    for (int i = 0; i < 7; ++i) fr.complete(fr.schedule("allreduce", 2737, "gloo", "ring", i));
    fr.start(fr.schedule("allreduce", 2737, "gloo", "ring", step));
    return fr.to_json(rank);
  };
  const std::vector<nlohmann::json> skipped = {rank_json(0, 5), rank_json(1, 6), rank_json(2, 5), rank_json(3, 5)};
  const std::string table = format_flight_report(skipped, 4);
  INFO(table);
  CHECK(table.find("missing ranks: {}") != std::string::npos);
  CHECK(table.find("but not at one training step: ranks 0, 2, 3 at step 5; rank 1 at step 6; their collective 7 "
                   "is not the same all-reduce") != std::string::npos);
  const std::vector<nlohmann::json> level = {rank_json(0, 5), rank_json(1, 5), rank_json(2, 5), rank_json(3, 5)};
  CHECK(format_flight_report(level, 4).find("not at one training step") == std::string::npos);
}

TEST_CASE("collective fingerprints: equal passes, a different size is caught by the neighbour") {
  LocalWorld world(3, std::chrono::milliseconds(3000));
  std::vector<std::string> errors(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      ddp::CollectiveFingerprint fp{7, 2, 1, 0, r == 1 ? 99 : 100, 0, 0};
      try {
        ddp::check_collective(world.group(r), {6, 2, 1, 0, 100, 0, 0});  // all equal
        ddp::check_collective(world.group(r), fp);
      } catch (const Error& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  CHECK(errors[0].empty());  // rank 0 compares with rank 2: equal
  CHECK(errors[1].find("this rank is at #7 all-reduce of bucket 0 (99 floats) at step 2, but rank 0 is at #7 "
                       "all-reduce of bucket 0 (100 floats)") != std::string::npos);
  CHECK(errors[2].find("but rank 1 is at #7 all-reduce of bucket 0 (99 floats)") != std::string::npos);
}

TEST_CASE("checkpoints round-trip, and damaged ones are refused without touching the good one") {
  char dir[] = "/tmp/ringlab-ckpt-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/c.ckpt";
  Checkpoint c;
  c.job.world_size = 2;
  c.state = {3, 1, 17, {1.0f, -2.5f, 3.25f}, {0.5f, 0.25f, 0.0f}};
  save_checkpoint(c, path);
  const Checkpoint back = load_checkpoint(path);
  CHECK(back.state.parameters == c.state.parameters);
  CHECK(back.state.momentum == c.state.momentum);
  CHECK(back.state.epoch == 3);
  CHECK(back.state.steps_done == 17);
  CHECK(back.job.world_size == 2);

  // Truncated and bit-flipped copies are refused with the file's name in the message.
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string bad = std::string(dir) + "/bad.ckpt";
  for (size_t cut : {size_t{0}, size_t{5}, bytes.size() / 2, bytes.size() - 1}) {
    std::ofstream(bad, std::ios::binary) << bytes.substr(0, cut);
    CHECK_THROWS_WITH_AS(load_checkpoint(bad), doctest::Contains(bad.c_str()), InputError);
  }
  std::string flipped = bytes;
  flipped[flipped.size() - 3] ^= 0x10;
  std::ofstream(bad, std::ios::binary) << flipped;
  CHECK_THROWS_WITH_AS(load_checkpoint(bad), doctest::Contains("checksum"), InputError);

  // A save that cannot complete leaves the last good checkpoint as it was.
  c.state.steps_done = 99;
  CHECK_THROWS_AS(save_checkpoint(c, std::string(dir) + "/no-such-dir/c.ckpt"), Error);
  CHECK(load_checkpoint(path).state.steps_done == 17);
  std::remove(bad.c_str());
  std::remove(path.c_str());
  rmdir(dir);
}
