// The ring view's model checked against hand-built events of a 4-rank all-reduce of 8 floats.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/view_model/collective_log.h"
#include "engine/view_model/ring_state.h"

using namespace ringlab;
using namespace ringlab::view_model;

namespace {

constexpr int kRanks = 4;
constexpr int kElems = 8;  // two floats per chunk

// Which chunk rank r receives from its left neighbour at each step of a 4-rank ring, written
// out by hand. Reduce-scatter: rank r receives chunk (r - s - 1) mod 4 and adds it;
// all-gather: rank r receives chunk (r - s) mod 4 and keeps it.
const int kReduceScatterRecv[3][kRanks] = {{3, 0, 1, 2}, {2, 3, 0, 1}, {1, 2, 3, 0}};
const int kAllGatherRecv[3][kRanks] = {{0, 1, 2, 3}, {3, 0, 1, 2}, {2, 3, 0, 1}};

// Rank r starts with (r + 1) * (i + 1): the sum over ranks is 10 * (i + 1).
std::vector<float> input_of(int rank) {
  std::vector<float> v(kElems);
  for (int i = 0; i < kElems; ++i) v[i] = float((rank + 1) * (i + 1));
  return v;
}

Event begin_event(int rank, int64_t t) {
  Event e;
  e.kind = EventKind::CollectiveBegin;
  e.rank = rank;
  e.collective_id = 7;
  e.bucket = 0;
  e.bytes = kElems * 4;
  e.text = "ring";
  e.values = input_of(rank);
  e.t_begin_ns = e.t_end_ns = t;
  return e;
}

// Plays the ring on plain vectors to produce what each receiver reports after each step.
std::vector<Event> ring_events(int steps_to_record = 6) {
  std::vector<std::vector<float>> buf(kRanks);
  std::vector<Event> events;
  for (int r = 0; r < kRanks; ++r) {
    buf[r] = input_of(r);
    events.push_back(begin_event(r, 1000 + r));
  }
  int64_t t = 2000;
  int recorded = 0;
  for (int phase = 0; phase < 2; ++phase)
    for (int s = 0; s < kRanks - 1; ++s) {
      if (recorded++ == steps_to_record) return events;
      const auto before = buf;
      for (int r = 0; r < kRanks; ++r) {
        const int left = (r + kRanks - 1) % kRanks;
        const int c = phase == 0 ? kReduceScatterRecv[s][r] : kAllGatherRecv[s][r];
        for (int i = 2 * c; i < 2 * c + 2; ++i)
          buf[r][i] = phase == 0 ? before[r][i] + before[left][i] : before[left][i];
        Event e;
        e.kind = EventKind::ChunkTransfer;
        e.rank = r;
        e.collective_id = 7;
        e.bucket = 0;
        e.phase = static_cast<int8_t>(phase);
        e.ring_step = s;
        e.chunk = c;
        e.segment = 0;
        e.src = left;
        e.dst = r;
        e.bytes = 8;
        e.t_begin_ns = t;
        e.t_end_ns = t + 500;
        e.values.assign(buf[r].begin() + 2 * c, buf[r].begin() + 2 * c + 2);
        events.push_back(e);
      }
      t += 1000;
    }
  for (int r = 0; r < kRanks; ++r) {
    Event e;
    e.kind = EventKind::CollectiveEnd;
    e.rank = r;
    e.collective_id = 7;
    e.t_begin_ns = 1000 + r;
    e.t_end_ns = 1000 + r + 1'000'000;  // 1 ms
    events.push_back(e);
  }
  return events;
}

CollectiveRecord record_of(const std::vector<Event>& events) {
  CollectiveLog log;
  for (const auto& e : events) log.consume(e, 1, kRanks);
  REQUIRE(log.size() == 1);
  return log.at(0);
}

uint64_t bits(std::initializer_list<int> ranks) {
  uint64_t m = 0;
  for (int r : ranks) m |= uint64_t{1} << r;
  return m;
}

}  // namespace

TEST_CASE("the schedule has 3 reduce-scatter then 3 all-gather steps") {
  const RingSchedule s = ring_schedule(record_of(ring_events()));
  REQUIRE(s.steps.size() == 6);
  CHECK(s.reduce_scatter_steps == 3);
  CHECK(s.all_gather_steps == 3);
  CHECK(s.steps[0] == RingStepId{RingPhase::ReduceScatter, 0});
  CHECK(s.steps[3] == RingStepId{RingPhase::AllGather, 0});
  CHECK(position_after(s, {RingPhase::ReduceScatter, 1}) == 2);
  CHECK(position_after(s, {RingPhase::AllGather, 2}) == 6);
  CHECK(position_after(s, {RingPhase::AllGather, 5}) == -1);
}

TEST_CASE("before the first step every rank holds only its own gradient") {
  const RingFrame f = ring_frame(record_of(ring_events()), 0);
  CHECK(f.world_size == 4);
  CHECK(f.num_chunks == 4);
  CHECK(f.total_steps == 6);
  CHECK(f.chunk_offsets == std::vector<int64_t>{0, 2, 4, 6, 8});
  CHECK(f.banner == "Reduce-scatter, step 1 of 3");
  CHECK(f.active_phase == RingPhase::ReduceScatter);
  CHECK_FALSE(f.done);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) {
      CHECK(f.chunks[r][c].contributors == bits({r}));
      CHECK_FALSE(f.chunks[r][c].fully_reduced);
      REQUIRE(f.chunks[r][c].has_values);
      CHECK(f.chunks[r][c].values == std::vector<float>{float((r + 1) * (2 * c + 1)), float((r + 1) * (2 * c + 2))});
    }
  // The packets of step 1: rank r sends chunk r to rank r + 1.
  REQUIRE(f.packets.size() == 4);
  for (const auto& p : f.packets) {
    CHECK(p.dst == (p.src + 1) % 4);
    CHECK(p.chunk == p.src);
    CHECK(p.contributors == bits({p.src}));
    CHECK(p.bytes == 8);
  }
}

TEST_CASE("after reduce-scatter step 1 the receivers hold two contributions") {
  const RingFrame f = ring_frame(record_of(ring_events()), 1);
  CHECK(f.banner == "Reduce-scatter, step 2 of 3");
  CHECK(f.chunks[1][0].contributors == bits({0, 1}));
  CHECK(f.chunks[1][0].values == std::vector<float>{3, 6});
  CHECK(f.chunks[1][0].updated);
  CHECK(f.chunks[0][3].contributors == bits({3, 0}));
  CHECK(f.chunks[0][3].values == std::vector<float>{35, 40});
  CHECK(f.chunks[2][1].values == std::vector<float>{15, 20});
  CHECK(f.chunks[3][2].values == std::vector<float>{35, 42});
  // Chunks nobody wrote are unchanged.
  CHECK(f.chunks[1][1].contributors == bits({1}));
  CHECK_FALSE(f.chunks[1][1].updated);
  // Step 2 forwards what was just summed: rank 1 sends chunk 0 on to rank 2.
  bool found = false;
  for (const auto& p : f.packets)
    if (p.src == 1) {
      found = true;
      CHECK(p.dst == 2);
      CHECK(p.chunk == 0);
      CHECK(p.contributors == bits({0, 1}));
    }
  CHECK(found);
}

TEST_CASE("after reduce-scatter rank r owns chunk r + 1, fully reduced") {
  const RingFrame f = ring_frame(record_of(ring_events()), 3);
  CHECK(f.banner == "All-gather, step 1 of 3");
  CHECK(f.active_phase == RingPhase::AllGather);
  CHECK(f.active_step_in_phase == 1);
  for (int r = 0; r < 4; ++r) {
    const int owned = (r + 1) % 4;
    for (int c = 0; c < 4; ++c) {
      INFO("rank ", r, " chunk ", c);
      CHECK(f.chunks[r][c].fully_reduced == (c == owned));
    }
    CHECK(f.chunks[r][owned].contributor_count() == 4);
    CHECK(f.chunks[r][owned].values == std::vector<float>{float(20 * owned + 10), float(20 * owned + 20)});
  }
  CHECK(f.chunks[2][1].contributors == bits({1, 2}));  // rank 2's chunk 1 stopped at two
  CHECK(f.chunks[3][1].contributors == bits({1, 2, 3}));
}

TEST_CASE("after all-gather every rank holds the serial sum") {
  const RingFrame f = ring_frame(record_of(ring_events()), 6);
  CHECK(f.done);
  CHECK(f.on_screen == "All-reduce done: every rank holds the sum");
  CHECK(f.banner.empty());  // nothing moves next
  CHECK(f.packets.empty());
  CHECK(f.has_inputs);
  CHECK(f.serial_sum == std::vector<float>{10, 20, 30, 40, 50, 60, 70, 80});
  CHECK(f.final_checked);
  CHECK(f.final_matches);
  CHECK(f.max_abs_error == 0.0);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) CHECK(f.chunks[r][c].fully_reduced);
}

TEST_CASE("the frame as JSON says what the view draws") {
  const auto j = nlohmann::json::parse(ring_frame_to_json(ring_frame(record_of(ring_events()), 3)));
  CHECK(j["banner"] == "All-gather, step 1 of 3");
  CHECK(j["position"] == 3);
  CHECK(j["world_size"] == 4);
  CHECK(j["chunks"][0][1]["fully_reduced"] == true);
  CHECK(j["chunks"][0][1]["contributors"].size() == 4);
  CHECK(j["chunks"][0][1]["values"] == nlohmann::json::array({30.0, 40.0}));
  CHECK(j["packets"].size() == 4);
  CHECK(j["serial_sum"].size() == 8);
}

TEST_CASE("positions past the end clamp to the last step") {
  const RingFrame f = ring_frame(record_of(ring_events()), 99);
  CHECK(f.position == 6);
  CHECK(f.done);
  CHECK(ring_frame(record_of(ring_events()), -3).position == 0);
}

TEST_CASE("a wrong reported value fails the check against the serial sum") {
  std::vector<Event> events = ring_events();
  for (auto& e : events)
    if (e.kind == EventKind::ChunkTransfer && e.phase == 1 && e.ring_step == 2 && e.rank == 3)
      e.values[0] += 1.0f;
  const RingFrame f = ring_frame(record_of(events), 6);
  CHECK(f.final_checked);
  CHECK_FALSE(f.final_matches);
  CHECK(f.max_abs_error == doctest::Approx(1.0));
}

TEST_CASE("per-link traffic and bus bandwidth") {
  const RingFrame f = ring_frame(record_of(ring_events()), 6);
  REQUIRE(f.links.size() == 4);
  for (const auto& l : f.links) {
    CHECK(l.dst == (l.src + 1) % 4);
    CHECK(l.transfers == 6);
    CHECK(l.bytes == 48);  // 2(N-1) chunks of 8 bytes
  }
  CHECK(f.duration_s == doctest::Approx(1e-3));
  CHECK(f.algbw_gbs == doctest::Approx(32 / 1e-3 / 1e9));
  CHECK(f.busbw_gbs == doctest::Approx(f.algbw_gbs * 1.5));
}

TEST_CASE("waits at the step-through gate do not count as ring time") {
  std::vector<Event> events = ring_events();
  for (int r = 0; r < kRanks; ++r) {
    Event wait;
    wait.kind = EventKind::GateWait;
    wait.rank = r;
    wait.collective_id = 7;
    wait.phase = 0;
    wait.ring_step = 1;
    wait.t_begin_ns = 5000;
    wait.t_end_ns = 5000 + 4'000'000'000;  // the class talked for 4 s
    events.push_back(wait);
    for (auto& e : events)
      if (e.kind == EventKind::CollectiveEnd && e.rank == r) e.t_end_ns += 4'000'000'000;
  }
  const RingFrame f = ring_frame(record_of(events), 6);
  CHECK(f.duration_s == doctest::Approx(1e-3));
  CHECK(f.total_steps == 6);  // a gate wait is not a transfer
}

TEST_CASE("a gate wait reported without a collective id belongs to the rank's open collective") {
  // The worker's gate does not know the collective; it waits inside the one its rank began.
  std::vector<Event> events = ring_events();
  std::vector<Event> ordered;
  for (const auto& e : events) {
    if (e.kind == EventKind::CollectiveEnd) {
      Event wait;
      wait.kind = EventKind::GateWait;
      wait.rank = e.rank;
      wait.phase = 1;
      wait.ring_step = 0;
      wait.t_begin_ns = 6000;
      wait.t_end_ns = 6000 + 2'000'000'000;
      ordered.push_back(wait);
      Event end = e;
      end.t_end_ns += 2'000'000'000;
      ordered.push_back(end);
      continue;
    }
    ordered.push_back(e);
  }
  // A wait after the collective ended belongs to nothing.
  Event late;
  late.kind = EventKind::GateWait;
  late.rank = 0;
  late.t_begin_ns = 1;
  late.t_end_ns = 5'000'000'000;
  ordered.push_back(late);
  const CollectiveRecord rec = record_of(ordered);
  CHECK(rec.ranks[2].gate_wait_ns == 2'000'000'000);
  CHECK(ring_frame(rec, 6).duration_s == doctest::Approx(1e-3));
}

TEST_CASE("a collective still running stops at the last recorded step") {
  // Gated: the workers reported two steps and wait at the gate before the third.
  const CollectiveRecord rec = record_of(ring_events(2));
  CHECK_FALSE(rec.complete());
  const RingFrame f = ring_frame(rec, 10);
  CHECK(f.position == 2);
  CHECK(f.total_steps == 2);
  CHECK_FALSE(f.done);
  CHECK(f.banner == "Reduce-scatter, step 3 of 3");
  CHECK(f.packets.empty());  // the next step has not happened yet
  CHECK_FALSE(f.final_checked);
  const RingFrame g = ring_frame(record_of(ring_events(3)), 3);
  CHECK(g.banner == "All-gather, step 1 of 3");
}

TEST_CASE("a transfer reported by both ends counts once") {
  std::vector<Event> events = ring_events();
  std::vector<Event> doubled = events;
  for (const auto& e : events)
    if (e.kind == EventKind::ChunkTransfer) {
      Event sender_copy = e;
      sender_copy.rank = e.src;
      sender_copy.values.clear();
      doubled.push_back(sender_copy);
    }
  const RingFrame f = ring_frame(record_of(doubled), 6);
  CHECK(f.total_steps == 6);
  CHECK(f.final_matches);
  for (const auto& l : f.links) CHECK(l.bytes == 48);
}

TEST_CASE("segments of one chunk are one packet") {
  std::vector<Event> events;
  for (int r = 0; r < 2; ++r) {
    Event b;
    b.kind = EventKind::CollectiveBegin;
    b.rank = r;
    b.collective_id = 1;
    b.bytes = 4000 * 4;
    b.text = "ring";
    events.push_back(b);
  }
  for (int seg = 0; seg < 3; ++seg)
    for (int r = 0; r < 2; ++r) {
      Event e;
      e.kind = EventKind::ChunkTransfer;
      e.rank = r;
      e.collective_id = 1;
      e.phase = 0;
      e.ring_step = 0;
      e.chunk = 1 - r;
      e.segment = seg;
      e.src = 1 - r;
      e.dst = r;
      e.bytes = seg < 2 ? 3000 : 2000;
      events.push_back(e);
    }
  CollectiveLog log;
  for (const auto& e : events) log.consume(e, 1, 2);
  const RingFrame f = ring_frame(log.at(0), 0);
  REQUIRE(f.packets.size() == 2);
  CHECK(f.packets[0].segments == 3);
  CHECK(f.packets[0].bytes == 8000);
  CHECK(f.banner == "Reduce-scatter, step 1 of 1");
  CHECK_FALSE(f.has_inputs);
  // No values were recorded for 4000 floats.
  CHECK_FALSE(ring_frame(log.at(0), 1).chunks[0][1].has_values);
  CHECK(ring_frame(log.at(0), 1).chunks[0][1].fully_reduced);
}

TEST_CASE("the [1, 2, 3] demo on 4 ranks: one chunk is empty") {
  std::vector<Event> events;
  for (int r = 0; r < 4; ++r) {
    Event b;
    b.kind = EventKind::CollectiveBegin;
    b.rank = r;
    b.collective_id = 0;
    b.bytes = 12;
    b.text = "demo";
    b.values = {1, 2, 3};
    events.push_back(b);
  }
  // Only chunks 0..2 hold an element; nobody sends the empty chunk 3. Every received chunk of
  // one element carries k * its value after k contributions.
  std::vector<std::vector<float>> buf(4, std::vector<float>{1, 2, 3});
  for (int phase = 0; phase < 2; ++phase)
    for (int s = 0; s < 3; ++s) {
      const auto before = buf;
      for (int r = 0; r < 4; ++r) {
        const int left = (r + 3) % 4;
        const int c = phase == 0 ? kReduceScatterRecv[s][r] : kAllGatherRecv[s][r];
        if (c == 3) continue;
        buf[r][c] = phase == 0 ? before[r][c] + before[left][c] : before[left][c];
        Event e;
        e.kind = EventKind::ChunkTransfer;
        e.rank = r;
        e.collective_id = 0;
        e.phase = static_cast<int8_t>(phase);
        e.ring_step = s;
        e.chunk = c;
        e.segment = 0;
        e.src = left;
        e.dst = r;
        e.bytes = 4;
        e.values = {buf[r][c]};
        events.push_back(e);
      }
    }
  for (int r = 0; r < 4; ++r) {
    Event end;
    end.kind = EventKind::CollectiveEnd;
    end.rank = r;
    end.collective_id = 0;
    events.push_back(end);
  }
  CollectiveLog log;
  for (const auto& e : events) log.consume(e, 1, 4);
  const RingFrame f = ring_frame(log.at(0), 6);
  CHECK(f.chunk_offsets == std::vector<int64_t>{0, 1, 2, 3, 3});
  CHECK(f.serial_sum == std::vector<float>{4, 8, 12});
  CHECK(f.final_checked);
  CHECK(f.final_matches);
  CHECK(f.chunks[2][0].values == std::vector<float>{4});
  CHECK(f.chunks[0][2].values == std::vector<float>{12});
  CHECK(log.latest_complete_ring() == 0);
}

TEST_CASE("one rank or a native all-reduce has nothing to step through") {
  CollectiveLog log;
  Event b;
  b.kind = EventKind::CollectiveBegin;
  b.collective_id = 3;
  b.bytes = 12;
  b.text = "native";
  log.consume(b, 1, 1);
  const RingFrame f = ring_frame(log.at(0), 0);
  CHECK(f.total_steps == 0);
  CHECK(f.done);
  CHECK(f.world_size == 1);
  CHECK(f.packets.empty());
}

TEST_CASE("the log keeps the most recent collectives and matches events by generation") {
  CollectiveLog log(3);
  for (int id = 0; id < 5; ++id) {
    Event b;
    b.kind = EventKind::CollectiveBegin;
    b.collective_id = id;
    log.consume(b, 1, 2);
  }
  CHECK(log.size() == 3);
  CHECK(log.total_seen() == 5);
  CHECK(log.find({1, 1}) == nullptr);
  CHECK(log.find({1, 4}) != nullptr);
  // A late event of a forgotten collective does not bring it back.
  Event late;
  late.kind = EventKind::CollectiveEnd;
  late.collective_id = 0;
  late.rank = 1;
  log.consume(late, 1, 2);
  CHECK(log.size() == 3);
  CHECK(log.find({1, 0}) == nullptr);
  // The next generation's collective 0 is a different one.
  Event b;
  b.kind = EventKind::CollectiveBegin;
  b.collective_id = 0;
  log.consume(b, 2, 2);
  CHECK(log.find({2, 0}) != nullptr);
  CHECK(log.find({2, 0})->world_size == 2);
}

TEST_CASE("even chunk offsets") {
  CHECK(even_chunk_offsets(8, 4) == std::vector<int64_t>{0, 2, 4, 6, 8});
  CHECK(even_chunk_offsets(10, 4) == std::vector<int64_t>{0, 3, 6, 8, 10});
  CHECK(even_chunk_offsets(0, 3) == std::vector<int64_t>{0, 0, 0, 0});
  CHECK(even_chunk_offsets(5, 1) == std::vector<int64_t>{0, 5});
}

// A rank that skipped step 5's all-reduce calls #7 at step 6 while the others call it at step 5:
// the record's step is theirs, whichever rank began first, and its span keeps its own step.
TEST_CASE("an all-reduce's training step is the one most ranks called it in") {
  for (const int first : {1, 0}) {
    CAPTURE(first);
    CollectiveLog log;
    std::vector<int> order = {first};
    for (int r = 0; r < 4; ++r)
      if (r != first) order.push_back(r);
    for (int r : order) {
      Event b = begin_event(r, 100 + r);
      b.collective_id = 7;
      b.step = r == 1 ? 6 : 5;
      log.consume(b, 1, 4);
    }
    REQUIRE(log.size() == 1);
    CHECK(log.at(0).step == 5);
    CHECK(log.at(0).ranks[1].step == 6);
    CHECK(log.at(0).ranks[2].step == 5);
  }
}

// Held at the gate before a step no rank has taken, the dotted chunks (what arrives where next)
// come from the ring's schedule: stepping forward showed none there, and Previous back to the
// same place showed them from the record. The prediction is the hand-written table, and once the
// step is recorded its packets take over.
TEST_CASE("at the gate before an untaken step, the chunks it brings are known from the schedule") {
  for (int taken = 0; taken < 6; ++taken) {
    const RingFrame held = ring_frame(record_of(ring_events(taken)), taken);
    REQUIRE(held.position == taken);
    REQUIRE(held.packets.empty());
    const int s = taken % 3;
    std::vector<std::pair<int, int>> expected;
    for (int r = 0; r < kRanks; ++r) expected.emplace_back(r, taken < 3 ? kReduceScatterRecv[s][r] : kAllGatherRecv[s][r]);
    CHECK(held.next_receives == expected);
    const RingFrame recorded = ring_frame(record_of(ring_events(taken + 1)), taken);
    CHECK(recorded.next_receives.empty());
    std::vector<std::pair<int, int>> arriving;
    for (const auto& p : recorded.packets) arriving.emplace_back(p.dst, p.chunk);
    std::sort(arriving.begin(), arriving.end());
    CHECK(arriving == expected);
  }
  // Once done there is no next step.
  CHECK(ring_frame(record_of(ring_events()), 6).next_receives.empty());
}
