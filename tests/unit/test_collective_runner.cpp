// The collective runner every DDP reducer uses (CPU and GPU): numbering, the fingerprint check on
// both of its routes, the flight recorder, the events, and the failure labs' faults.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "tests/unit/on_ranks.h"
#include "engine/ddp/collective_check.h"
#include "engine/ddp/collective_runner.h"
#include "engine/dist/local_process_group.h"
#include "engine/events/collective_fingerprint.h"
#include "engine/events/event_store.h"
#include "engine/events/flight_recorder.h"

using namespace ringlab;

namespace {

constexpr std::chrono::milliseconds kTimeout(20000);

std::vector<Event> events_of(const EventStore& store, int rank, EventKind kind) {
  std::vector<Event> out;
  for (const Event& e : store.snapshot())
    if (e.rank == rank && e.kind == kind) out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE("the runner numbers, checks, records and reports every collective, ring or native") {
  for (const char* algorithm : {"ring", "native"}) {
    CAPTURE(algorithm);
    constexpr int kWorld = 3;
    LocalWorld world(kWorld, kTimeout);
    EventStore events;
    std::vector<FlightRecorder> recorders(kWorld);
    std::vector<std::vector<float>> weights(kWorld), sums(kWorld);
    on_ranks(kWorld, [&](int r) {
      ddp::DdpOptions options;
      options.algorithm = algorithm;
      options.events = &events;
      options.recorder = &recorders[r];
      ddp::CollectiveRunner runner(world.group(r), options);
      weights[r] = {static_cast<float>(r), 1.0f};
      runner.broadcast(weights[r], 0);
      runner.set_step(4);
      sums[r] = {1.0f * (r + 1), 2.0f * (r + 1), 3.0f * (r + 1), 4.0f * (r + 1)};
      runner.allreduce(sums[r], 0, algorithm);
    });
    for (int r = 0; r < kWorld; ++r) {
      CAPTURE(r);
      CHECK(weights[r] == std::vector<float>{0.0f, 1.0f});
      CHECK(sums[r] == std::vector<float>{6.0f, 12.0f, 18.0f, 24.0f});

      const std::vector<Event> begins = events_of(events, r, EventKind::CollectiveBegin);
      const std::vector<Event> ends = events_of(events, r, EventKind::CollectiveEnd);
      REQUIRE(begins.size() == 1);
      REQUIRE(ends.size() == 2);
      CHECK(ends[0].text == "broadcast");  // the start: numbered first, no values
      CHECK(ends[0].collective_id == 0);
      CHECK(ends[0].bytes == 8);
      CHECK(ends[0].values.empty());
      CHECK(begins[0].collective_id == 1);
      CHECK(begins[0].step == 4);
      CHECK(begins[0].bucket == 0);
      CHECK(begins[0].values == std::vector<float>{1.0f * (r + 1), 2.0f * (r + 1), 3.0f * (r + 1), 4.0f * (r + 1)});
      CHECK(ends[1].values == sums[r]);

      const std::vector<CollectiveRecord> records = recorders[r].records();
      REQUIRE(records.size() == 2);
      CHECK(records[0].op == "broadcast");
      CHECK(records[1].op == "allreduce");
      CHECK(records[1].step == 4);
      for (const CollectiveRecord& record : records) CHECK(record.state == CollectiveState::Completed);
      // The ring reports its steps across both phases, 0 .. 2(N-1)-1; the native one has none.
      CHECK(records[1].ring_step == (std::string(algorithm) == "ring" ? 2 * (kWorld - 1) - 1 : -1));
    }
  }
}

TEST_CASE("the runner cuts its ring into the segments asked for: a chunk of 10 floats in 4-float pieces") {
  constexpr int kWorld = 2;
  LocalWorld world(kWorld, kTimeout);
  EventStore events;
  std::vector<std::vector<float>> sums(kWorld);
  on_ranks(kWorld, [&](int r) {
    ddp::DdpOptions options;
    options.events = &events;
    options.segment_elems = 4;
    options.pipeline_depth = 2;
    ddp::CollectiveRunner runner(world.group(r), options);
    sums[r].assign(20, static_cast<float>(r + 1));
    runner.allreduce(sums[r], 0, "ring");
  });
  for (int r = 0; r < kWorld; ++r) {
    CAPTURE(r);
    CHECK(sums[r] == std::vector<float>(20, 3.0f));
    // Each of the two ring steps receives its chunk of 10 in three segments: 4, 4 and 2 floats.
    std::vector<std::pair<int, int64_t>> pieces;  // (segment, bytes)
    for (const Event& e : events_of(events, r, EventKind::ChunkTransfer)) pieces.emplace_back(e.segment, e.bytes);
    CHECK(pieces == std::vector<std::pair<int, int64_t>>{{0, 16}, {1, 16}, {2, 8}, {0, 16}, {1, 16}, {2, 8}});
  }
}

TEST_CASE("an unknown algorithm is refused") {
  LocalWorld world(1, kTimeout);
  ddp::DdpOptions options;
  options.algorithm = "tree";
  CHECK_THROWS_AS(ddp::CollectiveRunner(world.group(0), options), InputError);
}

TEST_CASE("faults are taken once, and a Resize shortens only the next bucket") {
  LocalWorld world(1, kTimeout);
  EventStore events;
  ddp::DdpOptions options;
  options.events = &events;
  ddp::CollectiveRunner runner(world.group(0), options);
  CHECK(runner.take_fault() == ddp::CollectiveFault::None);
  runner.inject(ddp::CollectiveFault::Skip);
  CHECK(runner.take_fault() == ddp::CollectiveFault::Skip);
  CHECK(runner.take_fault() == ddp::CollectiveFault::None);

  runner.inject(ddp::CollectiveFault::Resize);
  CHECK(runner.take_fault() == ddp::CollectiveFault::Resize);
  std::vector<float> bucket(4, 1.0f);
  runner.allreduce(bucket, kDemoBucket, "demo");  // not a bucket: left whole
  runner.allreduce_bucket(bucket, 0);
  runner.allreduce_bucket(bucket, 0);
  const std::vector<Event> begins = events_of(events, 0, EventKind::CollectiveBegin);
  REQUIRE(begins.size() == 3);
  CHECK(begins[0].bytes == 16);
  CHECK(begins[1].bytes == 12);
  CHECK(begins[2].bytes == 16);
  CHECK(runner.collectives() == 3);
}

TEST_CASE("fingerprints travel inside an all-reduce as they are, and a mismatch names the left neighbour") {
  constexpr int kWorld = 3;
  LocalWorld world(kWorld, kTimeout);
  // Large, negative and odd numbers: every byte must come back as it went.
  const CollectiveFingerprint same{(int64_t{1} << 40) + 7, -1, 2, kStopVoteBucket, 123456789, 0, 0};
  std::vector<std::optional<ddp::CollectiveMismatchError>> errors(kWorld);
  on_ranks(kWorld, [&](int r) {
    ddp::check_collective(world.group(r), same, ddp::FingerprintRoute::NativeAllreduce);
    CollectiveFingerprint mine = same;
    if (r == 1) mine.numel -= 1;
    try {
      ddp::check_collective(world.group(r), mine, ddp::FingerprintRoute::NativeAllreduce);
    } catch (const ddp::CollectiveMismatchError& e) {
      errors[r] = e;
    }
  });
  CHECK_FALSE(errors[0].has_value());  // its left neighbour, rank 2, is at the same collective
  REQUIRE(errors[1].has_value());
  CHECK(errors[1]->neighbour == 0);
  CHECK(errors[1]->theirs == same);
  REQUIRE(errors[2].has_value());
  CHECK(errors[2]->neighbour == 1);
  CHECK(errors[2]->theirs.numel == same.numel - 1);
  CHECK(errors[2]->mine == same);
}
