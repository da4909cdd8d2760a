// The failure lab in the app: the lab's settings become the same job fields the CLI fills, the
// lessons name the rank and step, and a run's events (faults, errors, flight recorders, exits)
// name the rank to highlight and where every other rank was waiting. Killing a real worker
// through the controller is in tests/e2e/test_controller_runs.cpp.
#include <doctest/doctest.h>

#include <csignal>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/ddp/collective_check.h"
#include "engine/dist/local_process_group.h"
#include "engine/view_model/event_feed.h"
#include "engine/view_model/failure_diagnosis.h"
#include "engine/view_model/failure_lab.h"
#include "engine/view_model/run_model.h"
#include "engine/control/controller.h"
#include "engine/events/flight_recorder.h"

using namespace ringlab;
using namespace ringlab::view_model;

namespace {

JobConfig four_ranks() {
  JobConfig job;
  job.world_size = 4;
  job.epochs = 12;
  return job;
}

Event ev(EventKind kind, int rank, int64_t t_ms, int64_t step = -1) {
  Event e;
  e.kind = kind;
  e.rank = rank;
  e.t_begin_ns = e.t_end_ns = 1'000'000'000 + t_ms * 1'000'000;
  e.step = step;
  return e;
}

Event run_begin(int rank, int world) {
  Event e = ev(EventKind::RunBegin, rank, 0);
  e.value = world;
  return e;
}

Event collective(EventKind kind, int rank, int64_t t_ms, int64_t id, int64_t step) {
  Event e = ev(kind, rank, t_ms, step);
  e.collective_id = id;
  e.bucket = 0;
  e.bytes = 2737 * 4;
  e.text = "ring";
  return e;
}

Event chunk(int rank, int64_t t_ms, int64_t id, RingPhase phase, int ring_step) {
  Event e = ev(EventKind::ChunkTransfer, rank, t_ms);
  e.collective_id = id;
  e.phase = static_cast<int8_t>(phase);
  e.ring_step = ring_step;
  return e;
}

Event text_event(EventKind kind, int rank, int64_t t_ms, const std::string& text, int64_t step = -1) {
  Event e = ev(kind, rank, t_ms, step);
  e.text = text;
  return e;
}

// A fault event as a rank's plan (src = rank) or the controller (src = -1) injects it.
Event fault_event(int rank, int64_t t_ms, FaultKind kind, const std::string& text, int64_t step = -1, int src = -2) {
  Event e = text_event(EventKind::Fault, rank, t_ms, text, step);
  e.code = static_cast<int32_t>(kind);
  e.src = src == -2 ? rank : src;
  return e;
}

Event error_event(int rank, int64_t t_ms, ErrorCode code, const std::string& text) {
  Event e = text_event(EventKind::Error, rank, t_ms, text);
  e.code = static_cast<int32_t>(code);
  return e;
}

// A flight recorder whose collectives 0..last-1 completed and whose `last` is `op` in `state`.
Event flight(int rank, int64_t t_ms, int64_t last, const std::string& op, const std::string& state, int ring_step) {
  FlightRecorder fr;
  for (int64_t i = 0; i < last; ++i) fr.complete(fr.schedule("allreduce", 2737, "gloo", "ring", i / 2));
  const int64_t s = fr.schedule(op, op == "barrier" ? 0 : 2737, "gloo", "ring", 1);
  if (state != "scheduled") fr.start(s);
  if (ring_step >= 0) fr.ring_step(s, ring_step);
  if (state == "completed") fr.complete(s);
  return text_event(EventKind::FlightRecord, rank, t_ms, fr.to_json(rank).dump());
}

// Four ranks begin and finish collective 6 at step 4.
std::vector<Event> four_ranks_through_six() {
  std::vector<Event> events;
  for (int r = 0; r < 4; ++r) events.push_back(run_begin(r, 4));
  for (int r = 0; r < 4; ++r) {
    events.push_back(collective(EventKind::CollectiveBegin, r, 10, 6, 4));
    events.push_back(collective(EventKind::CollectiveEnd, r, 12, 6, 4));
  }
  return events;
}

// Then rank 2 is killed at step 5 while ranks 0, 1, 3 enter collective 7 and rank 0 finishes one
// reduce-scatter step in it.
std::vector<Event> killed_rank_two() {
  std::vector<Event> events = four_ranks_through_six();
  events.push_back(fault_event(2, 15, FaultKind::Kill, "kill: SIGKILL", 5));
  for (int r : {0, 1, 3}) events.push_back(collective(EventKind::CollectiveBegin, r, 16, 7, 5));
  events.push_back(chunk(0, 17, 7, RingPhase::ReduceScatter, 0));
  events.push_back(error_event(1, 30, ErrorCode::PeerClosed, "send: gloo: Connection closed by peer"));
  events.push_back(text_event(EventKind::TornDown, 0, 31, "stopped by the controller (SIGTERM)"));
  events.push_back(flight(0, 32, 7, "allreduce", "started", 1));
  events.push_back(flight(1, 32, 7, "allreduce", "scheduled", -1));
  events.push_back(flight(3, 33, 7, "allreduce", "started", 0));
  return events;
}

}  // namespace

// SIGTERM arrives while the training goes on in another thread: it is held at its next
// collective before the record is taken, or the record would be older than the events after it.
TEST_CASE("after hold_new_collectives, a thread that schedules a collective waits there and adds nothing") {
  // Never destroyed: a thread waits on it for good, as the worker's training thread does until _Exit.
  FlightRecorder& fr = *new FlightRecorder(8);
  fr.complete(fr.schedule("allreduce", 4, "gloo", "ring", 0));
  std::thread training([&fr] {
    for (int64_t step = 1;; ++step) fr.complete(fr.schedule("allreduce", 4, "gloo", "ring", step));
  });
  training.detach();  // held for good: the process ends it
  fr.hold_new_collectives(std::chrono::seconds(30));  // returns once the training thread is held
  const size_t held_at = fr.records().size();
  const int64_t last = fr.records().back().seq;
  fr.hold_new_collectives(std::chrono::milliseconds(1));
  CHECK(fr.records().size() == held_at);
  CHECK(fr.records().back().seq == last);
  CHECK(fr.records().back().state == CollectiveState::Completed);
}

TEST_CASE("the flight recorder keeps the newest collectives and updates only those it still holds") {
  FlightRecorder fr(3);
  for (int64_t step = 0; step < 5; ++step) fr.schedule("allreduce", 10 + step, "gloo", "ring", step);
  fr.start(1);     // wrapped out of the ring: nothing changes
  fr.start(3);
  fr.ring_step(3, 2);
  fr.complete(4);
  fr.start(7);     // not handed out yet
  const std::vector<ringlab::CollectiveRecord> kept = fr.records();
  REQUIRE(kept.size() == 3);
  CHECK(kept[0].seq == 2);
  CHECK(kept[0].state == ringlab::CollectiveState::Scheduled);
  CHECK(kept[1].seq == 3);
  CHECK(kept[1].state == ringlab::CollectiveState::Started);
  CHECK(kept[1].ring_step == 2);
  CHECK(kept[1].t_started_ns > 0);
  CHECK(kept[2].seq == 4);
  CHECK(kept[2].numel == 14);
  CHECK(kept[2].state == ringlab::CollectiveState::Completed);
  CHECK(kept[2].t_completed_ns >= kept[2].t_scheduled_ns);
}

TEST_CASE("the lab's settings fill the job's fault fields, and come back from them") {
  JobConfig job = four_ranks();
  FailureLabSettings lab;
  lab.fault = LabFault::Kill;
  lab.rank = 2;
  lab.step = 5;
  lab.timeout_s = 6;
  apply_lab(lab, 60, job);
  CHECK(job.faults == std::vector<std::string>{"kill:2@5"});
  CHECK(job.uneven.empty());
  CHECK(job.timeout_s == 6.0);
  CHECK_NOTHROW(job.validate());
  CHECK(lab_command_line(lab, job) == "ringlab run -n 4 --epochs 12 --fault kill:2@5 --timeout 6");

  const std::pair<LabFault, std::string> tokens[] = {{LabFault::Delay, "delay:2:20"}, {LabFault::Drop, "drop:2@5"},
                                                     {LabFault::Skip, "skip:2@5"},   {LabFault::Extra, "extra:2@5"},
                                                     {LabFault::Resize, "resize:2@5"}};
  for (const auto& [fault, token] : tokens) {
    lab.fault = fault;
    apply_lab(lab, 60, job);
    CAPTURE(token);
    CHECK(job.faults == std::vector<std::string>{token});
    CHECK_NOTHROW(job.validate());
    const FailureLabSettings back = lab_from_job(job);
    CHECK(back.fault == fault);
    CHECK(back.rank == 2);
    CHECK(back.timeout_s == 6.0);
  }

  lab.fault = LabFault::Uneven;
  lab.rank = 9;  // beyond the world: clamped to the last rank
  lab.batches = 1;
  lab.join = true;
  lab.max_restarts = 2;
  apply_lab(lab, 60, job);
  CHECK(job.faults.empty());
  CHECK(job.uneven == std::vector<std::string>{"3:1"});
  CHECK(job.join);
  CHECK_NOTHROW(job.validate());
  const FailureLabSettings back = lab_from_job(job);
  CHECK(back.fault == LabFault::Uneven);
  CHECK(back.rank == 3);
  CHECK(back.batches == 1);
  CHECK(back.join);
  lab.rank = 3;
  CHECK(lab_command_line(lab, job) ==
        "ringlab run -n 4 --epochs 12 --uneven 3:1 --join --timeout 6 --max-restarts 2");

  lab.fault = LabFault::None;
  apply_lab(lab, 60, job);
  CHECK(job.faults.empty());
  CHECK(job.uneven.empty());
  CHECK(!job.join);
  CHECK(job.timeout_s == 60.0);  // the scenario's own timeout again
  CHECK(lab_from_job(job).fault == LabFault::None);
  CHECK(lab_from_job(job).timeout_s == FailureLabSettings{}.timeout_s);  // a minute would be long for a lesson
  job.timeout_s = 3;  // a scenario's own, shorter: kept once a fault is chosen
  CHECK(lab_from_job(job).timeout_s == 3.0);
}

TEST_CASE("every fault has a lesson that names its rank and step") {
  FailureLabSettings lab;
  lab.rank = 3;
  lab.step = 7;
  lab.delay_ms = 25;
  lab.batches = 1;
  lab.timeout_s = 4;
  lab.max_restarts = 1;
  for (LabFault fault : kLabFaults) {
    const std::string title = lab_fault_title(fault);
    CAPTURE(title);
    CHECK(title.size() > 5);
    const std::string text = render_lesson(lab_lesson(fault, false), lab, 4);
    CHECK(text.size() > 100);
    CHECK(text.find('{') == std::string::npos);  // every field filled in
    if (fault != LabFault::None) CHECK(text.find("ank 3 ") != std::string::npos);  // "Rank 3 ..." or "rank 3 ..."
  }
  CHECK(render_lesson(lab_lesson(LabFault::Kill, false), lab, 4).find("SIGKILL at step 7") != std::string::npos);
  CHECK(render_lesson(lab_lesson(LabFault::Delay, false), lab, 4).find("sleeps 25 ms") != std::string::npos);
  CHECK(render_lesson(lab_lesson(LabFault::Uneven, false), lab, 4).find("the timeout (4 s)") != std::string::npos);
  CHECK(render_lesson(lab_lesson(LabFault::Uneven, true), lab, 4).find("Join") != std::string::npos);
  CHECK(render_lesson(lab_restart_lesson(LabFault::Kill, 1), lab, 4).find("a fresh group of 4 processes") !=
        std::string::npos);
  CHECK(render_lesson(lab_restart_lesson(LabFault::Kill, 1), lab, 4).find("bit-identical") != std::string::npos);
  CHECK(std::string(lab_restart_lesson(LabFault::Kill, 0)).find("torchrun --max-restarts 0") != std::string::npos);
  CHECK(std::string(lab_restart_lesson(LabFault::Delay, 1)).empty());
  CHECK(std::string(lab_restart_lesson(LabFault::Uneven, 1)).find("does not help") != std::string::npos);
  // A translation with a broken field still shows its text instead of throwing.
  CHECK(render_lesson("Rank {rank} {nope}", lab, 4) == "Rank {rank} {nope}");
}

// The event a worker sends for a failed check (rank/worker.cpp: emit_mismatch), from the error.
Event mismatch_event(int rank, int64_t t_ms, const ddp::CollectiveMismatchError& m) {
  Event e = ev(EventKind::CollectiveMismatch, rank, t_ms, m.mine.step);
  e.src = m.neighbour;
  append_fields(m.mine, e.indices);
  append_fields(m.theirs, e.indices);
  return e;
}

TEST_CASE("a real mismatched collective travels as data: both fingerprints, typed") {
  LocalWorld world(3, std::chrono::milliseconds(3000));
  std::vector<std::optional<ddp::CollectiveMismatchError>> errors(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      try {
        ddp::check_collective(world.group(r), {7, r == 1 ? 6 : 5, 1, 0, 2737, 0, 0});
      } catch (const ddp::CollectiveMismatchError& e) {
        errors[r] = e;
      } catch (const Error&) {
      }
    });
  for (auto& t : threads) t.join();
  REQUIRE(errors[2].has_value());  // rank 2 compares with rank 1, which is a step ahead
  CHECK(std::string(errors[2]->what()).find("this rank is at #7 all-reduce of bucket 0 (2737 floats) at step 5, "
                                            "but rank 1 is at #7 all-reduce of bucket 0 (2737 floats) at step 6") !=
        std::string::npos);
  const auto m = mismatch_of(mismatch_event(2, 8, *errors[2]));
  REQUIRE(m.has_value());
  CHECK(m->reporter == 2);
  CHECK(m->neighbour == 1);
  CHECK(m->reporter_fingerprint == CollectiveFingerprint{7, 5, 1, 0, 2737, 0, 0});
  CHECK(m->neighbour_fingerprint == CollectiveFingerprint{7, 6, 1, 0, 2737, 0, 0});
  CHECK(m->neighbour_fingerprint.describe() == "#7 all-reduce of bucket 0 (2737 floats) at step 6");
  // An error's words are never read as a mismatch.
  CHECK(!mismatch_of(error_event(0, 9, ErrorCode::CollectiveMismatch, errors[2]->what())).has_value());
}

TEST_CASE("a killed rank is the culprit; the others wait in the collective it left") {
  FailureTracker tracker;
  for (const Event& e : killed_rank_two()) tracker.consume(e);
  const FailureDiagnosis d = tracker.diagnose(4);
  CHECK(d.failed);
  CHECK(d.culprits == std::vector<int>{2});
  const RankDiagnosis& dead = d.ranks[2];
  CHECK(dead.cause == RankCause::Killed);
  CHECK(dead.fault == "kill: SIGKILL");
  CHECK(dead.fault_step == 5);
  CHECK(dead.collective == 6);          // its last collective, finished before it died
  CHECK(dead.collective_done);
  CHECK(dead.last_progress_ns == 1'015'000'000);  // the moment it raised SIGKILL
  CHECK(d.stuck_collective == 7);
  CHECK(d.stuck_op == "allreduce");
  CHECK(d.waiting == std::vector<int>{0, 1, 3});
  CHECK(d.missing == std::vector<int>{2});
  CHECK(d.silent == std::vector<int>{2});
  for (int r : {0, 1, 3}) {
    CAPTURE(r);
    CHECK(d.ranks[r].cause == RankCause::Waiting);
    CHECK(d.ranks[r].collective == 7);
    CHECK(d.ranks[r].op == "allreduce");
    CHECK(!d.ranks[r].collective_done);
  }
  CHECK(d.ranks[0].ring_step == 1);   // from its flight recorder
  CHECK(d.ranks[1].ring_step == -1);  // scheduled: still comparing fingerprints
  CHECK(d.first_error == "rank 1: send: gloo: Connection closed by peer");  // the teardown notice is not one
  CHECK(d.failed_at_ns == 1'033'000'000);

  // The controller's exits add the signal's name.
  RankExit killed{2, 100};
  killed.signal = SIGKILL;
  RankExit stopped{0, 101};
  stopped.signal = SIGTERM;
  stopped.terminated = true;
  tracker.note_exits({killed, stopped});
  const FailureDiagnosis with_exits = tracker.diagnose(4);
  CHECK(with_exits.ranks[2].exit == "killed by SIGKILL");
  CHECK(with_exits.ranks[0].cause == RankCause::Waiting);  // torn down, not a culprit
  CHECK(with_exits.culprits == std::vector<int>{2});
}

// The others place a rank that ended without a word only where they know more than its record:
// a rank past the collective its record is inside moves it on; a rank still inside it too does not.
TEST_CASE("a silent rank's record is moved only where the others know better") {
  using ringlab::PeerPosition;
  using ringlab::place_killed_rank;
  const PeerPosition inside_5{5, false, 4};
  // Rank A finished 5 and waits in 6: the silent rank took part in 5 to its end.
  const auto moved = place_killed_rank(inside_5, {{6, false, 5}, {6, false, 5}});
  REQUIRE(moved.has_value());
  CHECK(moved->collective == 5);
  CHECK(moved->done);
  CHECK(moved->step == 5);
  // One rank finished 5, another is still inside it: the record says as much as they do.
  CHECK_FALSE(place_killed_rank(inside_5, {{5, true, 4}, {5, false, 4}}).has_value());
  // Its record already has it done with the latest collective anyone finished.
  CHECK_FALSE(place_killed_rank({5, true, 4}, {{6, false, 5}}).has_value());
  // Others two collectives on: it died inside 6, which one still waits in.
  const auto inside = place_killed_rank({4, true, 3}, {{6, false, 5}, {7, false, 6}});
  REQUIRE(inside.has_value());
  CHECK(inside->collective == 6);
  CHECK_FALSE(inside->done);
  // Everyone waits in 6, so the ends say it finished 5; a rank received its chunk in 6: it died
  // inside 6 (the Failure lab once said "done with 5" while the ring showed its chunk in 6).
  const auto sent = place_killed_rank(inside_5, {{6, false, 5}, {6, false, 5}}, 6);
  REQUIRE(sent.has_value());
  CHECK(sent->collective == 6);
  CHECK_FALSE(sent->done);
  CHECK(sent->step == 5);
  // A chunk in a collective the others finished adds nothing to what their ends say.
  const auto old_chunk = place_killed_rank(inside_5, {{6, false, 5}, {6, false, 5}}, 5);
  REQUIRE(old_chunk.has_value());
  CHECK(old_chunk->collective == 5);
  CHECK(old_chunk->done);
}

// `kill -TERM` (or scancel) on rank 2: its own notice says where the SIGTERM came from; the app
// called it "stopped" (no cause) and blamed nobody, or the ranks that waited for it.
TEST_CASE("a rank ended by a SIGTERM from outside ringlab is the culprit, not a rank the stop took down") {
  FailureTracker tracker;
  for (const Event& e : four_ranks_through_six()) tracker.consume(e);
  Event torn = text_event(EventKind::TornDown, 2, 15, "ended by a SIGTERM from process 4242, which is not ringlab's: kill, scancel, or a job's time limit");
  torn.code = kTornDownFromOutside;
  tracker.consume(torn);
  for (int r : {0, 1, 3}) tracker.consume(collective(EventKind::CollectiveBegin, r, 16, 7, 5));
  tracker.consume(error_event(1, 30, ErrorCode::PeerClosed, "send: gloo: Connection closed by peer"));
  const FailureDiagnosis d = tracker.diagnose(4);
  CHECK(d.failed);
  CHECK(d.culprits == std::vector<int>{2});
  CHECK(d.ranks[2].error.rfind("ended by a SIGTERM from process 4242", 0) == 0);
  CHECK(d.missing == std::vector<int>{2});
}

// Killed as it began collective 6, rank 1's last events (its CollectiveBegin among them) died with
// it; the others wait in 6, which their ends alone would read as rank 1 done with 5. Rank 2
// received rank 1's reduce-scatter chunk in 6: the diagnosis places rank 1 inside 6.
TEST_CASE("a killed rank whose chunk another rank received is placed inside that collective") {
  FailureTracker tracker;
  for (int r = 0; r < 3; ++r) tracker.consume(run_begin(r, 3));
  for (int r = 0; r < 3; ++r) {
    tracker.consume(collective(EventKind::CollectiveBegin, r, 10, 5, 4));
    tracker.consume(collective(EventKind::CollectiveEnd, r, 12, 5, 4));
  }
  for (int r : {0, 2}) tracker.consume(collective(EventKind::CollectiveBegin, r, 20, 6, 5));
  Event from_rank1 = chunk(2, 21, 6, RingPhase::ReduceScatter, 0);
  from_rank1.src = 1;
  tracker.consume(from_rank1);
  RankExit killed{1, 100};
  killed.signal = SIGKILL;
  tracker.note_exits({killed});
  const FailureDiagnosis d = tracker.diagnose(3);
  REQUIRE(d.failed);
  CHECK(d.ranks[1].cause == RankCause::Killed);
  CHECK(d.ranks[1].collective == 6);
  CHECK_FALSE(d.ranks[1].collective_done);
  CHECK(d.ranks[1].position_from_peers);
  CHECK(d.ranks[1].step == 5);
}

// A PyTorch script's rank that calls os._exit(3): a failing exit code, no error of its own, and
// its collective's end unsent. It is the culprit (not "missing" from the collective the others
// wait in, until a timeout that never came), placed by the others as done with collective 5;
// the others' lost connections are its echo. A rank that raised its own error is not "exited".
// Three ranks in collective 5; ranks 0 and 2 go on into collective 6, rank 1 says no more.
FailureTracker rank1_left_in_collective_5() {
  FailureTracker tracker;
  for (int r = 0; r < 3; ++r) tracker.consume(run_begin(r, 3));
  for (int r = 0; r < 3; ++r) tracker.consume(collective(EventKind::CollectiveBegin, r, 10, 5, 4));
  for (int r : {0, 2}) {
    tracker.consume(collective(EventKind::CollectiveEnd, r, 12, 5, 4));
    tracker.consume(collective(EventKind::CollectiveBegin, r, 14, 6, 5));
  }
  return tracker;
}

// A process that exited with `code`, seen by its launcher at `seen_unix_ns` (0: not said).
RankExit failing_exit(int rank, int code, int64_t seen_unix_ns = 0) {
  RankExit x{rank, 100 + rank};
  x.exited = true;
  x.exit_code = code;
  x.seen_unix_ns = seen_unix_ns;
  return x;
}

// A rank the launcher ended after another failed, by `signal`; `was_stopped`: its process had
// been stopped (SIGSTOP) when it did.
RankExit torn_down(int rank, int signal, bool was_stopped = false) {
  RankExit x{rank, 100 + rank};
  x.signal = signal;
  x.terminated = true;
  x.was_stopped = was_stopped;
  return x;
}

// `ranks` of a world of `world` begin, and every one of them ends, collective `id` at step `step`
// (at t_ms and t_ms + 1).
FailureTracker after_collective(int world, int64_t t_ms, int64_t id, int64_t step) {
  FailureTracker tracker;
  for (int r = 0; r < world; ++r) tracker.consume(run_begin(r, world));
  for (int r = 0; r < world; ++r) tracker.consume(collective(EventKind::CollectiveBegin, r, t_ms, id, step));
  for (int r = 0; r < world; ++r) tracker.consume(collective(EventKind::CollectiveEnd, r, t_ms + 1, id, step));
  return tracker;
}

TEST_CASE("a rank that exits failing without a word is the culprit, placed by the others") {
  const auto run = [](bool rank1_said_why) {
    FailureTracker tracker = rank1_left_in_collective_5();
    if (rank1_said_why) tracker.consume(error_event(1, 13, ErrorCode::Other, "rank 1: ValueError: a bad batch"));
    tracker.consume(error_event(0, 15, ErrorCode::PeerClosed, "rank 0: Connection reset by peer"));
    tracker.note_exits({failing_exit(1, 3)});
    return tracker.diagnose(3);
  };
  const FailureDiagnosis silent = run(false);
  CHECK(silent.culprits == std::vector<int>{1});
  CHECK(silent.ranks[1].cause == RankCause::Exited);
  CHECK(silent.ranks[1].exit == "exit code 3");
  CHECK(silent.ranks[1].collective == 5);
  CHECK(silent.ranks[1].collective_done);
  CHECK(silent.ranks[1].position_from_peers);
  CHECK(silent.ranks[0].cause == RankCause::Waiting);
  CHECK(silent.ranks[2].cause == RankCause::Waiting);
  const FailureDiagnosis said = run(true);
  CHECK(said.ranks[1].cause != RankCause::Exited);
  CHECK(said.culprits == std::vector<int>{1});  // the first error is its own
}

// The same exit, seen by its launcher before the error rank 2 sent as it went (the app reads the
// ranks' events and their exits on different paths): rank 2's own error, read later, still makes
// it not "exited"; and when rank 2 said nothing either, it exited after rank 1 while it waited in
// collective 6, which rank 1's exit broke: an echo, not a second culprit.
TEST_CASE("a second rank's failing exit after the first one's is its echo, whatever is read first") {
  const auto run = [](bool rank2_said_why) {
    FailureTracker tracker = rank1_left_in_collective_5();
    tracker.note_exits({failing_exit(1, 3, 1'000), failing_exit(2, 1, 2'000)});
    if (rank2_said_why) tracker.consume(error_event(2, 15, ErrorCode::PeerClosed, "rank 2: Connection closed by peer"));
    return tracker.diagnose(3);
  };
  for (const bool said : {true, false}) {
    CAPTURE(said);
    const FailureDiagnosis d = run(said);
    CHECK(d.culprits == std::vector<int>{1});
    CHECK(d.ranks[1].cause == RankCause::Exited);
    CHECK(d.ranks[2].cause == RankCause::Waiting);
    CHECK(d.ranks[0].cause == RankCause::Waiting);
  }
}

TEST_CASE("ring steps come from the chunks when no flight recorder was sent") {
  FailureTracker tracker;
  for (int r = 0; r < 3; ++r) tracker.consume(run_begin(r, 3));
  for (int r = 0; r < 3; ++r) tracker.consume(collective(EventKind::CollectiveBegin, r, 1, 4, 2));
  tracker.consume(chunk(0, 2, 4, RingPhase::ReduceScatter, 0));
  tracker.consume(chunk(0, 3, 4, RingPhase::ReduceScatter, 1));
  tracker.consume(chunk(0, 4, 4, RingPhase::AllGather, 0));
  const FailureDiagnosis running = tracker.diagnose(3);
  CHECK(!running.failed);  // nothing went wrong: no highlight, no waiting marks
  CHECK(running.culprits.empty());
  CHECK(running.ranks[0].cause == RankCause::None);
  CHECK(running.ranks[0].ring_step == 3);  // three of the four ring steps done: in the fourth
  CHECK(running.ranks[1].ring_step == -1);

  tracker.consume(fault_event(1, 5, FaultKind::Kill, "kill: SIGKILL from the controller", -1, -1));
  const FailureDiagnosis killed = tracker.diagnose(3);
  CHECK(killed.failed);
  CHECK(killed.culprits == std::vector<int>{1});
  CHECK(killed.ranks[1].cause == RankCause::Killed);
  CHECK(killed.ranks[1].fault_step == -1);  // the app's kill button: no planned step
  CHECK(killed.ranks[1].fault_from_controller);
  CHECK(killed.ranks[0].cause == RankCause::Waiting);
  CHECK(killed.ranks[2].cause == RankCause::Waiting);
}

TEST_CASE("uneven inputs: the rank out of data is missing from the collective the others wait in") {
  FailureTracker tracker = after_collective(4, 1, 2, 0);
  for (int r : {0, 2, 3}) tracker.consume(collective(EventKind::CollectiveBegin, r, 3, 3, 1));
  tracker.consume(text_event(EventKind::Error, 0, 3003, "send: gloo: Timed out waiting 3000ms for send operation"));
  tracker.consume(text_event(EventKind::Error, 1, 3004, "barrier: gloo: Timed out waiting 3000ms for recv operation"));
  for (int r : {0, 2, 3}) tracker.consume(flight(r, 3005, 3, "allreduce", "started", 0));
  tracker.consume(flight(1, 3005, 3, "barrier", "started", -1));
  const FailureDiagnosis d = tracker.diagnose(4);
  CHECK(d.culprits == std::vector<int>{1});
  CHECK(d.ranks[1].cause == RankCause::Missing);
  CHECK(d.ranks[1].op == "barrier");
  CHECK(d.ranks[1].collective == 3);
  CHECK(d.ranks[1].last_progress_ns == 1'002'000'000);  // its last collective ended; then it left the loop
  CHECK(d.missing == std::vector<int>{1});
  CHECK(d.waiting == std::vector<int>{0, 2, 3});
  CHECK(d.ranks[0].cause == RankCause::Waiting);
  CHECK(d.ranks[0].ring_step == 0);
}

TEST_CASE("a rank whose process was stopped is missing, and the diagnosis knows it was stopped") {
  // SIGSTOP on rank 1's worker: its last events stay in it (it reported collective 2 as its last),
  // rank 0 waits in collective 3 until its timeout; the launcher then finds rank 1 stopped.
  FailureTracker tracker = after_collective(2, 1, 2, 0);
  tracker.consume(collective(EventKind::CollectiveBegin, 0, 3, 3, 1));
  tracker.consume(text_event(EventKind::Error, 0, 3003, "recv: gloo: Read timeout"));
  tracker.consume(flight(0, 3005, 3, "allreduce", "started", 1));
  tracker.note_exits({failing_exit(0, 1), torn_down(1, SIGKILL, true)});
  const FailureDiagnosis d = tracker.diagnose(2);
  CHECK(d.culprits == std::vector<int>{1});
  CHECK(d.ranks[1].cause == RankCause::Missing);
  CHECK(d.ranks[1].process_stopped);
  CHECK_FALSE(d.ranks[0].process_stopped);
  CHECK(d.ranks[0].cause == RankCause::Waiting);
}

TEST_CASE("a stopped rank is the culprit even where its neighbours finished the collective it stalled") {
  // Four ranks, rank 1 stopped by SIGSTOP in all-reduce 5: ranks 0 and 3 had what they needed of
  // it, finished 5 and wait in 6; rank 2 waits in 5 for rank 1's last chunk. The line-up reads
  // 0 and 3 as missing from 5, and the app named rank 0 (two tries in five of a newcomer's walk).
  FailureTracker tracker = after_collective(4, 1, 4, 3);
  for (int r = 0; r < 4; ++r) tracker.consume(collective(EventKind::CollectiveBegin, r, 3, 5, 4));
  for (int r : {0, 3}) tracker.consume(collective(EventKind::CollectiveEnd, r, 4, 5, 4));
  for (int r : {0, 3}) tracker.consume(collective(EventKind::CollectiveBegin, r, 5, 6, 5));
  tracker.consume(text_event(EventKind::Error, 2, 3003, "recv: gloo: Read timeout"));
  for (int r : {0, 3}) tracker.consume(flight(r, 3005, 6, "allreduce", "started", 5));
  tracker.consume(flight(2, 3005, 5, "allreduce", "started", 4));
  tracker.note_exits({torn_down(0, SIGTERM), torn_down(1, SIGKILL, true), failing_exit(2, 1), torn_down(3, SIGTERM)});
  const FailureDiagnosis d = tracker.diagnose(4);
  CHECK(d.culprits == std::vector<int>{1});
  CHECK(d.ranks[1].cause == RankCause::Missing);
  CHECK(d.ranks[1].process_stopped);
  for (int r : {0, 2, 3}) CHECK(d.ranks[r].cause == RankCause::Waiting);
}

TEST_CASE("a script's rank the launcher stopped after the failure did not exit on its own") {
  // A PyTorch script's ranks end with exit code 143 when the launcher's SIGTERM reaches them
  // after another rank failed: that is the launcher's doing, not a silent exit of their own.
  FailureTracker tracker = after_collective(2, 1, 4, 3);
  tracker.consume(collective(EventKind::CollectiveBegin, 0, 3, 5, 4));
  tracker.consume(text_event(EventKind::Error, 0, 60003, "allreduce: gloo: Timed out waiting 60000ms"));
  RankExit rank1 = failing_exit(1, 143);
  rank1.terminated = true;
  tracker.note_exits({failing_exit(0, 1), rank1});
  const FailureDiagnosis d = tracker.diagnose(2);
  CHECK(d.ranks[1].cause != RankCause::Exited);
  CHECK(d.culprits == std::vector<int>{1});
  CHECK(d.ranks[1].cause == RankCause::Missing);
}

TEST_CASE("uneven inputs without Join blame the rank with fewer batches, whatever the line-up says") {
  // Rank 0 runs out first; the others' collectives shift against its own, so the flight
  // recorders line up with rank 0 "waiting" in its final barrier and ranks 1-3 "missing" from it.
  JobConfig job = four_ranks();
  job.uneven = {"0:1"};
  FailureTracker tracker;
  for (int r = 0; r < 4; ++r) {
    Event begin = run_begin(r, 4);
    begin.text = nlohmann::json(job).dump();
    tracker.consume(begin);
  }
  for (int r = 0; r < 4; ++r) tracker.consume(collective(EventKind::CollectiveBegin, r, 1, 3, 1));
  for (int r = 0; r < 4; ++r) tracker.consume(collective(EventKind::CollectiveEnd, r, 2, 3, 1));
  tracker.consume(text_event(EventKind::Error, 0, 4002, "barrier: gloo: Timed out waiting 4000ms for recv operation"));
  tracker.consume(flight(0, 4003, 4, "barrier", "started", -1));
  for (int r = 1; r < 4; ++r) tracker.consume(flight(r, 4003, 3, "allreduce", "completed", 5));
  const FailureDiagnosis d = tracker.diagnose(4);
  CHECK(d.missing == std::vector<int>{1, 2, 3});  // the line-up alone would blame the wrong ranks
  CHECK(d.culprits == std::vector<int>{0});
  CHECK(d.ranks[0].cause == RankCause::OutOfData);
  CHECK(d.ranks[0].op == "barrier");
  for (int r = 1; r < 4; ++r) CHECK(d.ranks[r].cause == RankCause::None);

  // Before anything fails, the same job is not diagnosed as anything.
  FailureTracker quiet;
  for (int r = 0; r < 4; ++r) {
    Event begin = run_begin(r, 4);
    begin.text = nlohmann::json(job).dump();
    quiet.consume(begin);
  }
  CHECK(!quiet.diagnose(4).failed);
  CHECK(quiet.diagnose(4).ranks[0].cause == RankCause::None);

  // With Join nobody runs out: the run does not hang, so nothing is blamed on rank 0.
  job.join = true;
  FailureTracker joined;
  Event begin = run_begin(0, 4);
  begin.text = nlohmann::json(job).dump();
  joined.consume(begin);
  joined.consume(text_event(EventKind::Error, 2, 5, "checkpoint: cannot write"));
  CHECK(joined.diagnose(4).culprits == std::vector<int>{2});
}

TEST_CASE("skip and extra collectives need workers without the per-step stop check") {
  JobConfig job = four_ranks();
  CHECK(!breaks_collective_order(job));
  for (const char* f : {"kill:1@2", "delay:1:5", "drop:1@2", "resize:1@2"}) {
    job.faults = {f};
    CAPTURE(f);
    CHECK(!breaks_collective_order(job));
  }
  for (const char* f : {"skip:1@2", "extra:3@0"}) {
    job.faults = {f};
    CAPTURE(f);
    CHECK(breaks_collective_order(job));
  }
}

TEST_CASE("a skipped all-reduce: the culprit's fingerprint is the actual, its neighbour's the expected") {
  FailureTracker tracker;
  for (int r = 0; r < 4; ++r) tracker.consume(run_begin(r, 4));
  tracker.consume(fault_event(1, 5, FaultKind::Skip, "skip: leaving out this step's gradient all-reduce", 5));
  // Rank 2 compares with its left neighbour, rank 1; rank 1 with rank 0.
  const CollectiveFingerprint at5{7, 5, 1, 0, 2737, 0, 0}, at6{7, 6, 1, 0, 2737, 0, 0};
  tracker.consume(mismatch_event(2, 8, ddp::CollectiveMismatchError({2, "collective check", 5}, at5, 1, at6)));
  tracker.consume(error_event(2, 8, ErrorCode::CollectiveMismatch, "collective check: mismatched collectives"));
  tracker.consume(mismatch_event(1, 9, ddp::CollectiveMismatchError({1, "collective check", 6}, at6, 0, at5)));
  tracker.consume(error_event(1, 9, ErrorCode::CollectiveMismatch, "collective check: mismatched collectives"));
  const FailureDiagnosis d = tracker.diagnose(4);
  CHECK(d.culprits == std::vector<int>{1});
  CHECK(d.ranks[1].cause == RankCause::Mismatch);
  CHECK(d.ranks[1].fault_step == 5);
  REQUIRE(d.mismatch.has_value());
  CHECK(d.mismatch->culprit == 1);
  CHECK(d.mismatch->reporter == 2);
  CHECK(d.mismatch->expected == at5);
  CHECK(d.mismatch->actual == at6);
  CHECK(d.ranks[2].error_code == ErrorCode::CollectiveMismatch);
}

TEST_CASE("a restart keeps the failure it recovered from and diagnoses the new group afresh") {
  RunModel model;
  for (const Event& e : killed_rank_two()) model.consume(e);
  CHECK(model.failure().culprits == std::vector<int>{2});
  Event marker = text_event(EventKind::Restart, -1, 40, "restart 1 of 1 from epoch 2 (step 4)");
  marker.value = 1;
  marker.epoch = 2;
  marker.step = 4;
  model.consume(marker);
  for (int r = 0; r < 4; ++r) model.consume(run_begin(r, 4));
  for (int r = 0; r < 4; ++r) model.consume(collective(EventKind::CollectiveBegin, r, 50, 2, 4));
  const FailureDiagnosis& now = model.failure();
  CHECK(!now.failed);
  CHECK(now.culprits.empty());
  CHECK(now.ranks[0].collective == 2);
  REQUIRE(model.restarted_failure().has_value());
  CHECK(model.restarted_failure()->culprits == std::vector<int>{2});
  CHECK(model.restarted_failure()->restart_number == 1);
  CHECK(model.restarted_failure()->restart_epoch == 2);
  CHECK(model.restarted_failure()->restart_step == 4);

  // The timeline closed the old group's collectives when the new processes began: they end
  // where that group failed, marked unfinished, instead of stretching across the new run.
  int unfinished = 0;
  model.timeline().for_each_visible(0, 0, 1'000'000'000, [&](const TimelineSpan& s) {
    if (s.kind == SpanKind::Collective && s.unfinished) {
      ++unfinished;
      CHECK(s.collective_id == 7);
      CHECK(s.t_begin_ns == 16'000'000);  // relative to the first event
      CHECK(s.t_end_ns == 33'000'000);    // the last flight record: the moment the old group failed
    }
  });
  CHECK(unfinished == 1);
  int open = 0;
  model.timeline().for_each_open_collective(0, [&](const TimelineSpan& s) {
    ++open;
    CHECK(s.collective_id == 2);
    CHECK(s.unfinished);
    CHECK(s.t_begin_ns == 50'000'000);
  });
  CHECK(open == 1);
}

TEST_CASE("a failure nothing names highlights the rank of the first error") {
  FailureTracker tracker;
  for (int r = 0; r < 2; ++r) tracker.consume(run_begin(r, 2));
  tracker.consume(text_event(EventKind::Error, 1, 3, "checkpoint: cannot write"));
  const FailureDiagnosis d = tracker.diagnose(2);
  CHECK(d.culprits == std::vector<int>{1});
  CHECK(d.ranks[1].cause == RankCause::Failed);
  CHECK(d.ranks[1].error == "checkpoint: cannot write");
  CHECK(d.ranks[0].cause == RankCause::None);
}

// Gloo pairs each rank's Nth all-reduce with the others' Nth: rank 1 skipped a batch, went on
// unnoticed, and its script ended one all-reduce before rank 0's, which lost its connection.
TEST_CASE("a rank whose script ended normally while another waited for it is the culprit, once the exits are known") {
  const auto skipped_a_batch = [](FailureTracker& tracker) {
    for (int r = 0; r < 2; ++r) tracker.consume(run_begin(r, 2));
    for (int64_t id = 10; id <= 11; ++id)
      for (int r = 0; r < 2; ++r) {
        tracker.consume(collective(EventKind::CollectiveBegin, r, id, id, id - 1 - r));
        tracker.consume(collective(EventKind::CollectiveEnd, r, id, id, id - 1 - r));
      }
    tracker.consume(collective(EventKind::CollectiveBegin, 0, 12, 12, 11));
    tracker.consume(error_event(0, 13, ErrorCode::PeerClosed, "rank 0: step 11: Connection closed by peer"));
  };
  FailureTracker tracker;
  skipped_a_batch(tracker);
  // Before the exits are known, the last reports line up: rank 1 never joined #12.
  const FailureDiagnosis lined_up = tracker.diagnose(2);
  CHECK(lined_up.culprits == std::vector<int>{1});
  CHECK(lined_up.ranks[1].cause == RankCause::Missing);
  CHECK(lined_up.stuck_from_last_reports);
  CHECK(lined_up.stuck_collective == 12);
  CHECK(lined_up.waiting == std::vector<int>{0});
  CHECK(lined_up.missing == std::vector<int>{1});

  RankExit failed{0, 100};
  failed.exited = true;
  failed.exit_code = 1;
  RankExit ended{1, 101};
  ended.exited = true;
  tracker.note_exits({ended, failed});
  const FailureDiagnosis d = tracker.diagnose(2);
  CHECK(d.culprits == std::vector<int>{1});
  CHECK(d.ranks[1].cause == RankCause::EndedEarly);
  CHECK(d.ranks[1].collective == 11);
  CHECK(d.ranks[1].collective_done);
  CHECK(d.ranks[0].cause == RankCause::Waiting);
  CHECK(d.ranks[0].collective == 12);

  // Torn down by the controller on its way out, once rank 0 had failed: its RunEnd says it ended.
  FailureTracker torn_down;
  skipped_a_batch(torn_down);
  Event done = ev(EventKind::RunEnd, 1, 12, 10);
  done.text = "done";
  torn_down.consume(done);
  RankExit terminated{1, 101};
  terminated.signal = SIGTERM;
  terminated.terminated = true;
  torn_down.note_exits({failed, terminated});
  CHECK(torn_down.diagnose(2).ranks[1].cause == RankCause::EndedEarly);

  FailureTracker level;  // both ranks ended their last collective: a clean exit blames nobody
  for (int r = 0; r < 2; ++r) {
    level.consume(run_begin(r, 2));
    level.consume(collective(EventKind::CollectiveBegin, r, 5, 5, 4));
    level.consume(collective(EventKind::CollectiveEnd, r, 5, 5, 4));
  }
  level.consume(error_event(0, 6, ErrorCode::Other, "rank 0: cannot write the report"));
  level.note_exits({ended, failed});
  CHECK(level.diagnose(2).ranks[1].cause == RankCause::None);
  CHECK(level.diagnose(2).culprits == std::vector<int>{0});
}

TEST_CASE("a stop that was asked for is not a failure: what the ranks report after it is its teardown") {
  // The user pressed Stop at 30 ms: the controller says so with a typed event, then tears the
  // ranks down; whatever they report from then on (closed connections, flight records, their
  // own SIGTERM) names no culprit and opens no failure report.
  RunModel model;
  for (int r = 0; r < 4; ++r) model.consume(run_begin(r, 4));
  for (int r = 0; r < 4; ++r) model.consume(collective(EventKind::CollectiveBegin, r, 20, 3, 1));
  model.consume(ev(EventKind::RunStopped, -1, 30));
  model.consume(text_event(EventKind::Error, 3, 31, "gloo: Connection closed by peer [127.0.0.1]:40000"));
  model.consume(text_event(EventKind::Error, 2, 31, "ring_allreduce: step 1: timed out"));
  model.consume(flight(1, 32, 3, "allreduce", "started", 1));
  const FailureDiagnosis& d = model.failure();
  CHECK_FALSE(d.failed);
  CHECK(d.culprits.empty());
  CHECK(d.first_error.empty());
  CHECK(d.stopped_at_ns == 1'000'000'000 + 30'000'000);
  CHECK(model.errors().empty());
}

TEST_CASE("an error from before the stop still counts") {
  FailureTracker tracker;
  for (int r = 0; r < 2; ++r) tracker.consume(run_begin(r, 2));
  tracker.consume(text_event(EventKind::Error, 1, 25, "checkpoint: cannot write"));
  tracker.consume(ev(EventKind::RunStopped, -1, 30));
  tracker.consume(text_event(EventKind::Error, 0, 31, "gloo: Connection closed by peer"));
  const FailureDiagnosis d = tracker.diagnose(2);
  CHECK(d.failed);
  CHECK(d.culprits == std::vector<int>{1});
  CHECK(d.first_error == "rank 1: checkpoint: cannot write");
}

// The app's kill button: the rank's last few milliseconds of events die with it, so its own
// record lags. The others, waiting in collective 30 at step 28, place it: it had finished 29.
TEST_CASE("a killed rank whose last events were lost is placed where the others' waits put it") {
  FailureTracker tracker;
  for (int r = 0; r < 3; ++r) tracker.consume(run_begin(r, 3));
  for (int r = 0; r < 3; ++r) {
    tracker.consume(collective(EventKind::CollectiveBegin, r, 1, 10, 8));
    tracker.consume(collective(EventKind::CollectiveEnd, r, 2, 10, 8));
  }
  for (int r : {0, 2}) {
    tracker.consume(collective(EventKind::CollectiveBegin, r, 40, 29, 27));
    tracker.consume(collective(EventKind::CollectiveEnd, r, 41, 29, 27));
    tracker.consume(collective(EventKind::CollectiveBegin, r, 42, 30, 28));
  }
  tracker.consume(fault_event(1, 43, FaultKind::Kill, "kill: SIGKILL from the controller", -1, -1));
  tracker.consume(error_event(0, 44, ErrorCode::PeerClosed, "recv: gloo: Connection closed by peer"));
  const FailureDiagnosis d = tracker.diagnose(3);
  REQUIRE(d.culprits == std::vector<int>{1});
  const RankDiagnosis& killed = d.ranks[1];
  CHECK(killed.position_from_peers);
  CHECK(killed.collective == 29);
  CHECK(killed.collective_done);
  CHECK(killed.step == 28);  // the step the others wait in: it died there or just before
  CHECK(killed.ring_step == -1);
  // The others keep their own record.
  CHECK(d.ranks[0].collective == 30);
  CHECK(!d.ranks[0].position_from_peers);
  CHECK(d.ranks[0].step == 28);
}

// Rank 0 finished collective 30 and waits in 31; rank 2, the killed rank's right neighbour, is
// still in 30, waiting for its last chunk: the killed rank died inside 30, not before it.
TEST_CASE("a killed rank that others finished a collective with died inside the one its neighbour waits in") {
  FailureTracker tracker;
  for (int r = 0; r < 3; ++r) tracker.consume(run_begin(r, 3));
  tracker.consume(collective(EventKind::CollectiveBegin, 1, 1, 10, 8));
  tracker.consume(collective(EventKind::CollectiveBegin, 0, 40, 30, 28));
  tracker.consume(collective(EventKind::CollectiveEnd, 0, 41, 30, 28));
  tracker.consume(collective(EventKind::CollectiveBegin, 0, 42, 31, 29));
  tracker.consume(collective(EventKind::CollectiveBegin, 2, 40, 30, 28));
  tracker.consume(chunk(2, 41, 30, RingPhase::AllGather, 0));
  tracker.consume(fault_event(1, 43, FaultKind::Kill, "kill: SIGKILL from the controller", -1, -1));
  const FailureDiagnosis d = tracker.diagnose(3);
  const RankDiagnosis& killed = d.ranks[1];
  CHECK(killed.position_from_peers);
  CHECK(killed.collective == 30);
  CHECK(!killed.collective_done);
  CHECK(killed.step == 28);
}

// The app's Kill now landed between steps: rank 2's last events say all-reduce #25; the others'
// flight records put every rank through barrier #26 (rank 0 still in it). Rank 2 is placed in that
// barrier, and named for it, not for the all-reduce of its own last record.
TEST_CASE("a killed rank placed by the others is named for the collective they place it in") {
  FailureTracker tracker;
  for (int r = 0; r < 4; ++r) tracker.consume(run_begin(r, 4));
  for (int r = 0; r < 4; ++r) {
    tracker.consume(collective(EventKind::CollectiveBegin, r, 10, 25, 23));
    tracker.consume(collective(EventKind::CollectiveEnd, r, 12, 25, 23));
  }
  tracker.consume(fault_event(2, 15, FaultKind::Kill, "kill: SIGKILL from the controller", -1, -1));
  tracker.consume(error_event(0, 20, ErrorCode::PeerClosed, "barrier: gloo: Connection closed by peer"));
  tracker.consume(flight(0, 21, 26, "barrier", "started", -1));
  tracker.consume(flight(1, 21, 26, "barrier", "completed", -1));
  tracker.consume(flight(3, 21, 26, "barrier", "completed", -1));
  const FailureDiagnosis d = tracker.diagnose(4);
  REQUIRE(d.culprits == std::vector<int>{2});
  const RankDiagnosis& killed = d.ranks[2];
  CHECK(killed.position_from_peers);
  CHECK(killed.collective == 26);
  CHECK(killed.op == "barrier");
  CHECK(!killed.collective_done);  // rank 0 still waits in it
}

// A script's ranks 1 and 2 raise at once (their own RuntimeError, code Other) after all-reduce
// #10; ranks 0 and 3 wait in #11 and lose their peers. No flight recorders: the last reports
// line up, and ranks 1 and 2 are missing from #11 because they raised, not "never joined: the
// others waited until the timeout" (the run ended as soon as they raised).
TEST_CASE("ranks missing from the collective because they raised errors of their own are named as such") {
  FailureTracker tracker;
  for (int r = 0; r < 4; ++r) tracker.consume(run_begin(r, 4));
  for (int r = 0; r < 4; ++r) {
    tracker.consume(collective(EventKind::CollectiveBegin, r, 10, 10, 9));
    tracker.consume(collective(EventKind::CollectiveEnd, r, 10, 10, 9));
  }
  for (int r : {0, 3}) tracker.consume(collective(EventKind::CollectiveBegin, r, 11, 11, 10));
  tracker.consume(error_event(1, 10, ErrorCode::Other, "rank 1: step 10: RuntimeError: bad batch"));
  tracker.consume(error_event(2, 10, ErrorCode::Other, "rank 2: step 10: RuntimeError: bad batch"));
  tracker.consume(error_event(0, 11, ErrorCode::PeerClosed, "rank 0: step 10: Connection closed by peer"));
  const FailureDiagnosis d = tracker.diagnose(4);
  CHECK(d.culprits == std::vector<int>{1, 2});
  CHECK(d.ranks[1].cause == RankCause::Raised);
  CHECK(d.ranks[2].cause == RankCause::Raised);
  CHECK(d.ranks[0].cause == RankCause::Waiting);
  CHECK(d.missing == std::vector<int>{1, 2});
}

// A script that raises before its step's forward: its last progress was in the step before, and
// the error names the step it was in. The table says the error's step, as `ringlab run` does.
TEST_CASE("a rank that raised is placed in the step its error names, not its last reported one") {
  FailureTracker tracker;
  for (int r = 0; r < 2; ++r) tracker.consume(run_begin(r, 2));
  for (int r = 0; r < 2; ++r) {
    tracker.consume(collective(EventKind::CollectiveBegin, r, 3, 6, 4));
    tracker.consume(collective(EventKind::CollectiveEnd, r, 3, 6, 4));
  }
  tracker.consume(collective(EventKind::CollectiveBegin, 0, 4, 7, 5));
  Event raised = error_event(1, 4, ErrorCode::Other, "step 5: RuntimeError: bad batch in step 5");
  raised.step = 5;
  tracker.consume(raised);
  const FailureDiagnosis d = tracker.diagnose(2);
  CHECK(d.culprits == std::vector<int>{1});
  CHECK(d.ranks[1].cause == RankCause::Raised);
  CHECK(d.ranks[1].step == 5);
  CHECK(d.ranks[1].collective == 6);  // where it was: the last collective it finished, in step 4
  CHECK(d.ranks[1].collective_done);
  CHECK(d.ranks[0].step == 5);
}

// Every rank of a script raises at the same step: nobody waits for anybody, and each is a cause.
TEST_CASE("ranks that all raise errors of their own at one step are each a cause") {
  FailureTracker tracker;
  for (int r = 0; r < 2; ++r) tracker.consume(run_begin(r, 2));
  for (int r = 0; r < 2; ++r) {
    tracker.consume(collective(EventKind::CollectiveBegin, r, 3, 3, 2));
    tracker.consume(collective(EventKind::CollectiveEnd, r, 3, 3, 2));
  }
  tracker.consume(error_event(1, 4, ErrorCode::Other, "rank 1: step 3: RuntimeError: a failure on purpose"));
  tracker.consume(error_event(0, 5, ErrorCode::Other, "rank 0: step 3: RuntimeError: a failure on purpose"));
  const FailureDiagnosis d = tracker.diagnose(2);
  CHECK(d.culprits == std::vector<int>{0, 1});
  CHECK(d.ranks[0].cause == RankCause::Raised);
  CHECK(d.ranks[1].cause == RankCause::Raised);
}
