// The controller's event store: appends in order, bounded memory by dropping the older half of
// the detail events, counters views rely on, and appends from several threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "engine/events/event_store.h"

using namespace ringlab;

namespace {

Event make(EventKind kind, int rank, int64_t step) {
  Event e;
  e.kind = kind;
  e.rank = rank;
  e.step = step;
  return e;
}

}  // namespace

TEST_CASE("events are kept in arrival order and every append bumps the version") {
  EventStore store;
  CHECK(store.size() == 0);
  const uint64_t v0 = store.version();
  for (int i = 0; i < 10; ++i) store.emit(make(EventKind::StepEnd, 0, i));
  CHECK(store.size() == 10);
  CHECK(store.version() == v0 + 10);
  const auto all = store.snapshot();
  for (int i = 0; i < 10; ++i) CHECK(all[static_cast<size_t>(i)].step == i);
  CHECK(store.dropped_detail() == 0);
}

TEST_CASE("for_each reads incrementally from an index") {
  EventStore store;
  for (int i = 0; i < 5; ++i) store.emit(make(EventKind::Log, 0, i));
  std::vector<int64_t> seen;
  size_t next = store.for_each(0, [&](const Event& e) { seen.push_back(e.step); });
  CHECK(next == 5);
  CHECK(seen == std::vector<int64_t>{0, 1, 2, 3, 4});

  for (int i = 5; i < 8; ++i) store.emit(make(EventKind::Log, 0, i));
  seen.clear();
  next = store.for_each(next, [&](const Event& e) { seen.push_back(e.step); });
  CHECK(next == 8);
  CHECK(seen == std::vector<int64_t>{5, 6, 7});

  seen.clear();
  CHECK(store.for_each(next, [&](const Event& e) { seen.push_back(e.step); }) == 8);
  CHECK(seen.empty());
}

TEST_CASE("past the cap the older half of the detail events is dropped and every other kind kept") {
  constexpr size_t kCap = 100;
  EventStore store(kCap);
  const uint64_t generation = store.generation();
  int64_t chunk_id = 0;
  int64_t steps = 0;
  for (int round = 0; round < 100; ++round) {
    store.emit(make(EventKind::StepEnd, 0, steps++));
    for (int c = 0; c < 9; ++c) {
      Event e = make(c % 3 == 2 ? EventKind::GateWait : EventKind::ChunkTransfer, 0, -1);
      e.chunk = static_cast<int32_t>(chunk_id++);
      store.emit(std::move(e));
      REQUIRE(store.detail_events() <= kCap);  // bounded at every moment
    }
  }
  const auto all = store.snapshot();
  std::vector<int64_t> kept_steps, kept_chunks;
  for (const Event& e : all) {
    if (e.kind == EventKind::StepEnd) kept_steps.push_back(e.step);
    else kept_chunks.push_back(e.chunk);
  }
  // Every step survives, in order.
  REQUIRE(kept_steps.size() == 100);
  for (int64_t i = 0; i < 100; ++i) CHECK(kept_steps[static_cast<size_t>(i)] == i);
  // The detail that survives is the most recent, contiguous and in order.
  REQUIRE(!kept_chunks.empty());
  CHECK(kept_chunks.size() == store.detail_events());
  CHECK(kept_chunks.back() == chunk_id - 1);
  for (size_t i = 1; i < kept_chunks.size(); ++i) CHECK(kept_chunks[i] == kept_chunks[i - 1] + 1);
  CHECK(store.dropped_detail() + store.detail_events() == static_cast<size_t>(chunk_id));
  CHECK(store.dropped_detail() > 0);
  CHECK(store.size() == kept_steps.size() + kept_chunks.size());
  // Indices moved: views that read incrementally can tell.
  CHECK(store.generation() > generation);
}

TEST_CASE("down-sampling halves the detail: the oldest half goes at once") {
  EventStore store(10);
  for (int i = 0; i < 10; ++i) store.emit(make(EventKind::ChunkTransfer, 0, i));
  CHECK(store.detail_events() == 10);
  CHECK(store.dropped_detail() == 0);
  store.emit(make(EventKind::ChunkTransfer, 0, 10));  // 11 > 10: drop 6 (the older half, rounded up)
  CHECK(store.detail_events() == 5);
  CHECK(store.dropped_detail() == 6);
  const auto all = store.snapshot();
  REQUIRE(all.size() == 5);
  CHECK(all.front().step == 6);
  CHECK(all.back().step == 10);
}

TEST_CASE("a cap of zero keeps no detail but everything else") {
  EventStore store(0);
  store.emit(make(EventKind::ChunkTransfer, 0, 0));
  store.emit(make(EventKind::CollectiveEnd, 0, 0));
  store.emit(make(EventKind::GateWait, 0, 0));
  CHECK(store.size() == 1);
  CHECK(store.snapshot()[0].kind == EventKind::CollectiveEnd);
  CHECK(store.dropped_detail() == 2);
}

TEST_CASE("clear empties the store and tells the views") {
  EventStore store(4);
  for (int i = 0; i < 9; ++i) store.emit(make(EventKind::ChunkTransfer, 0, i));
  const uint64_t version = store.version();
  const uint64_t generation = store.generation();
  store.clear();
  CHECK(store.size() == 0);
  CHECK(store.detail_events() == 0);
  CHECK(store.dropped_detail() == 0);
  CHECK(store.version() > version);
  CHECK(store.generation() > generation);
  store.emit(make(EventKind::Log, 0, 1));
  CHECK(store.size() == 1);
}

TEST_CASE("appends from several threads while a reader walks the store") {
  EventStore store(1000);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5000;
  std::atomic<bool> done{false};
  std::atomic<size_t> reads{0};
  size_t reader_next = 0;
  std::thread reader([&] {
    uint64_t generation = store.generation();
    while (true) {
      const bool last_pass = done.load();  // one more pass after the writers finished
      if (store.generation() != generation) {  // indices moved: start again
        generation = store.generation();
        reader_next = 0;
      }
      reader_next = store.for_each(reader_next, [&](const Event&) { reads.fetch_add(1); });
      if (last_pass) break;
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t)
    writers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i)
        store.emit(make(i % 2 ? EventKind::ChunkTransfer : EventKind::StepEnd, t, i));
    });
  for (auto& w : writers) w.join();
  done = true;
  reader.join();

  const auto all = store.snapshot();
  // Every non-detail event is there, and each thread's events are in that thread's order.
  std::vector<std::vector<int64_t>> steps(kThreads);
  for (const Event& e : all)
    if (e.kind == EventKind::StepEnd) steps[static_cast<size_t>(e.rank)].push_back(e.step);
  for (int t = 0; t < kThreads; ++t) {
    CHECK(steps[static_cast<size_t>(t)].size() == kPerThread / 2);
    CHECK(std::is_sorted(steps[static_cast<size_t>(t)].begin(), steps[static_cast<size_t>(t)].end()));
  }
  CHECK(store.detail_events() <= 1000);
  CHECK(store.detail_events() + store.dropped_detail() == kThreads * kPerThread / 2);
  CHECK(store.version() >= static_cast<uint64_t>(kThreads * kPerThread));
  CHECK(reads.load() >= store.size());
  CHECK(reader_next == store.size());  // the reader caught up
}
