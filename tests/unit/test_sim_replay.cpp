// Trace replay: a synthetic DDP run (ring all-reduce chunk by chunk, with the same timing rules a
// real ring obeys) replayed under its own link reproduces itself; under a faster link its
// communication shrinks; read back from a Chrome trace it replays the same.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <sstream>

#include "engine/core/error.h"
#include "engine/events/event.h"
#include "engine/sim/cost_models.h"
#include "engine/export/trace_file.h"
#include "engine/sim/trace_replay.h"

#if __has_include("engine/export/chrome_trace.h")
#include "engine/export/chrome_trace.h"
#define RINGLAB_TEST_HAS_TRACE_WRITER 1
#endif

using namespace ringlab;
using namespace ringlab::sim;

namespace {

struct SyntheticRun {
  int ranks = 4;
  int steps = 3;
  int buckets = 2;
  double bucket_bytes = 4e6;
  LinkParams link{50e-6, 1.0 / 2.5e9, 1.0 / 11e9};  // this machine's loopback level
  double noise = 0;                          // +- fraction on each chunk's duration
  unsigned seed = 1;
  double skew = 0.1;                         // rank r computes (1 + skew r) times slower
  // ringlab's trainer: the Backward span also holds DDP's final wait, in which the last bucket
  // is all-reduced; otherwise backward is pure compute and the optimizer waits.
  bool backward_holds_last_bucket = false;
  double rank1_post_work = 0;  // rank 1's extra local work before posting each ring step
};

constexpr int64_t kEpochNs = 5'000'000'000;  // an arbitrary steady-clock origin

int64_t ns(double seconds) { return kEpochNs + std::llround(seconds * 1e9); }

Event span(EventKind kind, int rank, double t0, double t1, int64_t step) {
  Event e;
  e.kind = kind;
  e.rank = rank;
  e.t_begin_ns = ns(t0);
  e.t_end_ns = ns(t1);
  e.step = step;
  return e;
}

Event instant(EventKind kind, int rank, double t, int64_t step) {
  Event e = span(kind, rank, t, t, step);
  e.t_end_ns = 0;
  return e;
}

// A DDP run: per step forward, backward (buckets ready along it), one ring all-reduce per bucket
// (each queued behind the previous), then the optimizer after the last bucket. Each rank posts
// ring step k (its receive and its send) a little after step k-1 arrived; a chunk moves once
// both its sender and its receiver have posted step k and the link is free, and takes
// alpha + n beta (+ n gamma to add it in, in reduce-scatter). Chunks are recorded as ringlab's
// ring records them: on the receiver, from its own posting of the step to the chunk's arrival.
class SyntheticTrace {
 public:
  explicit SyntheticTrace(const SyntheticRun& run) : run_(run), gen_(run.seed), jitter_(1 - run.noise, 1 + run.noise) {}

  std::vector<Event> build() {
    const int p = run_.ranks;
    Event begin;
    begin.kind = EventKind::RunBegin;
    begin.t_begin_ns = ns(0);
    begin.value = p;
    events_.push_back(begin);
    next_step_.assign(p, 0.0);
    collective_free_.assign(p, 0.0);
    wire_free_.assign(p, 0.0);
    for (int r = 0; r < p; ++r) next_step_[r] = 1e-4 * r;
    for (int step = 0; step < run_.steps; ++step) run_step(step);
    return events_;
  }

  std::map<std::pair<int, int64_t>, double> measured_steps;  // (rank, step) -> seconds

 private:
  void run_step(int step) {
    const int p = run_.ranks;
    std::vector<double> step_begin(p), backward_begin(p), backward_end(p);
    std::vector<std::vector<double>> ready(p, std::vector<double>(run_.buckets));
    for (int r = 0; r < p; ++r) {
      const double forward = 2e-3 * (1 + run_.skew * r), backward = 2 * forward;
      step_begin[r] = next_step_[r];
      events_.push_back(instant(EventKind::StepBegin, r, step_begin[r], step));
      const double f0 = step_begin[r] + 1e-6;
      events_.push_back(span(EventKind::Forward, r, f0, f0 + forward, step));
      backward_begin[r] = f0 + forward + 0.5e-6;
      backward_end[r] = backward_begin[r] + backward;
      if (!run_.backward_holds_last_bucket)
        events_.push_back(span(EventKind::Backward, r, backward_begin[r], backward_end[r], step));
      for (int b = 0; b < run_.buckets; ++b) {
        ready[r][b] = backward_begin[r] + backward * (b + 1) / run_.buckets;
        Event e = instant(EventKind::BucketReady, r, ready[r][b], step);
        e.bucket = b;
        e.bytes = static_cast<int64_t>(run_.bucket_bytes);
        events_.push_back(e);
      }
    }
    for (int b = 0; b < run_.buckets; ++b) ring_allreduce(step, b, ready);
    for (int r = 0; r < p; ++r) {
      double o0 = std::max(backward_end[r], collective_free_[r]) + 2e-6;
      if (run_.backward_holds_last_bucket) {
        events_.push_back(span(EventKind::Backward, r, backward_begin[r], o0, step));
        o0 += 1e-6;
      }
      events_.push_back(span(EventKind::OptimizerStep, r, o0, o0 + 3e-4, step));
      const double end = o0 + 3e-4 + 1e-6;
      events_.push_back(instant(EventKind::StepEnd, r, end, step));
      measured_steps[{r, step}] = end - step_begin[r];
      next_step_[r] = end + 5e-6;
    }
  }

  void ring_allreduce(int step, int bucket, const std::vector<std::vector<double>>& ready) {
    const int p = run_.ranks;
    const double chunk = run_.bucket_bytes / p;
    std::vector<double> begin(p);
    for (int r = 0; r < p; ++r) {
      begin[r] = std::max(ready[r][bucket], collective_free_[r]) + 1e-6;
      Event e = instant(EventKind::CollectiveBegin, r, begin[r], step);
      e.collective_id = collective_;
      e.bucket = bucket;
      e.bytes = static_cast<int64_t>(run_.bucket_bytes);
      e.text = "ring";
      events_.push_back(e);
    }
    std::vector<double> received = begin;  // end of each rank's latest receive
    const int ring_steps = 2 * (p - 1);
    for (int k = 0; k < ring_steps; ++k) {
      std::vector<double> posted(p);
      for (int r = 0; r < p; ++r)
        posted[r] = received[r] + (k == 0 ? 0.5e-6 : k < p ? 3e-6 : 0.5e-6) + (r == 1 ? run_.rank1_post_work : 0.0);
      std::vector<double> arrived(p);
      for (int r = 0; r < p; ++r) {
        const int src = (r - 1 + p) % p;
        const bool reduces = k < p - 1;
        const double start = std::max({posted[src], posted[r], wire_free_[r]});
        const double duration = (run_.link.alpha_s + chunk * run_.link.beta_s_per_byte +
                                 (reduces ? chunk * run_.link.gamma_s_per_byte : 0.0)) *
                                (run_.noise > 0 ? jitter_(gen_) : 1);
        wire_free_[r] = start + chunk * run_.link.beta_s_per_byte;
        arrived[r] = start + duration;
        Event e = span(EventKind::ChunkTransfer, r, posted[r], arrived[r], step);
        e.collective_id = collective_;
        e.phase = static_cast<int8_t>(k < p - 1 ? RingPhase::ReduceScatter : RingPhase::AllGather);
        e.ring_step = k % (p - 1);
        e.chunk = ((r - k - 1) % p + p) % p;
        e.src = src;
        e.dst = r;
        e.bytes = static_cast<int64_t>(chunk);
        events_.push_back(e);
      }
      received = arrived;
    }
    for (int r = 0; r < p; ++r) {
      collective_free_[r] = received[r] + 1e-6;
      Event e = span(EventKind::CollectiveEnd, r, begin[r], collective_free_[r], step);
      e.collective_id = collective_;
      events_.push_back(e);
    }
    ++collective_;
  }

  SyntheticRun run_;
  std::mt19937 gen_;
  std::uniform_real_distribution<double> jitter_;
  std::vector<Event> events_;
  std::vector<double> next_step_, collective_free_, wire_free_;
  int64_t collective_ = 0;
};

void check_same_steps(const ReplayResult& a, const ReplayResult& b, double epsilon) {
  REQUIRE(a.ranks.size() == b.ranks.size());
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    REQUIRE(a.ranks[r].replayed_step_s.size() == b.ranks[r].replayed_step_s.size());
    for (size_t s = 0; s < a.ranks[r].replayed_step_s.size(); ++s)
      CHECK(a.ranks[r].replayed_step_s[s] == doctest::Approx(b.ranks[r].replayed_step_s[s]).epsilon(epsilon));
  }
}

// The run as ringlab's trace writer lays it out (pid = rank + 1, kinds by cat and name, chunks
// drawn late with the real send time in args.send_posted_us), plus entries replay must skip.
std::string writer_layout(const std::vector<Event>& events) {
  std::vector<std::string> out = {
      R"j({"ph":"M","pid":1,"tid":0,"name":"process_name","args":{"name":"rank 0"}})j",
      R"j({"ph":"s","pid":1,"tid":2,"name":"chunk","cat":"flow","ts":1.0,"id":1})j",
      R"j({"ph":"C","pid":1,"tid":1,"name":"loss","cat":"metric","ts":2.0,"args":{"loss":0.5}})j",
      R"j({"ph":"i","pid":1000000,"tid":1,"name":"run begin","cat":"run","ts":0.0,"s":"p","args":{"world_size":4}})j"};
  auto us = [](int64_t t) { return fmt::format("{:.3f}", (t - kEpochNs) / 1e3); };
  std::map<std::pair<int, int64_t>, int64_t> step_begin;
  std::map<std::pair<int, int64_t>, int32_t> bucket_of;
  for (const Event& e : events) {
    const int pid = e.rank + 1;
    const int64_t end = e.t_end_ns ? e.t_end_ns : e.t_begin_ns;
    const std::string dur = fmt::format("{:.3f}", (end - e.t_begin_ns) / 1e3);
    switch (e.kind) {
      case EventKind::StepBegin: step_begin[{e.rank, e.step}] = e.t_begin_ns; break;
      case EventKind::CollectiveBegin: bucket_of[{e.rank, e.collective_id}] = e.bucket; break;
      case EventKind::StepEnd: {
        const int64_t b = step_begin[{e.rank, e.step}];
        out.push_back(fmt::format(R"j({{"ph":"X","pid":{},"tid":1,"name":"step","cat":"step","ts":{},"dur":{:.3f},"args":{{"step":{}}}}})j",
                                  pid, us(b), (e.t_begin_ns - b) / 1e3, e.step));
        break;
      }
      case EventKind::Forward:
      case EventKind::Backward:
      case EventKind::OptimizerStep: {
        const char* name = e.kind == EventKind::Forward ? "forward" : e.kind == EventKind::Backward ? "backward" : "optimizer step";
        out.push_back(fmt::format(R"j({{"ph":"X","pid":{},"tid":1,"name":"{}","cat":"compute","ts":{},"dur":{},"args":{{"step":{}}}}})j",
                                  pid, name, us(e.t_begin_ns), dur, e.step));
        break;
      }
      case EventKind::BucketReady:
        out.push_back(fmt::format(R"j({{"ph":"i","pid":{},"tid":1,"name":"bucket ready","cat":"ddp","ts":{},"s":"t","args":{{"bucket":{},"bytes":{}}}}})j",
                                  pid, us(e.t_begin_ns), e.bucket, e.bytes));
        break;
      case EventKind::CollectiveEnd:
        out.push_back(fmt::format(R"j({{"ph":"X","pid":{},"tid":2,"name":"all-reduce (ring)","cat":"collective","ts":{},"dur":{},"args":{{"collective_id":{},"bucket":{},"bytes":4000000,"algorithm":"ring"}}}})j",
                                  pid, us(e.t_begin_ns), dur, e.collective_id, bucket_of[{e.rank, e.collective_id}]));
        break;
      case EventKind::ChunkTransfer: {
        const int64_t drawn = (e.t_begin_ns + e.t_end_ns) / 2;  // the writer may draw the slice later
        out.push_back(fmt::format(
            R"j({{"ph":"X","pid":{},"tid":2,"name":"{}","cat":"ring","ts":{},"dur":{:.3f},"args":{{"collective_id":{},"ring_step":{},"chunk":{},"segment":-1,"src":{},"dst":{},"bytes":{},"send_posted_us":{}}}}})j",
            pid, e.phase == 0 ? "reduce-scatter" : "all-gather", us(drawn), (e.t_end_ns - drawn) / 1e3, e.collective_id,
            e.ring_step, e.chunk, e.src, e.dst, e.bytes, us(e.t_begin_ns)));
        break;
      }
      default: break;
    }
  }
  std::string text = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  for (size_t i = 0; i < out.size(); ++i) text += out[i] + (i + 1 < out.size() ? ",\n" : "\n");
  return text + "]}\n";
}

}  // namespace

TEST_CASE("identity: replaying under the recorded link reproduces every step") {
  for (int ranks : {2, 3, 4, 8}) {
    CAPTURE(ranks);
    SyntheticRun run;
    run.ranks = ranks;
    SyntheticTrace trace(run);
    const std::vector<Event> events = trace.build();
    const ReplayResult r = replay_trace(events, run.link);
    CHECK(r.world_size == ranks);
    CHECK(r.transfers == int64_t{run.steps} * run.buckets * ranks * 2 * (ranks - 1));
    CHECK(r.modelled_collectives == 0);
    REQUIRE(r.ranks.size() == static_cast<size_t>(ranks));
    for (const RankReplay& rank : r.ranks) {
      REQUIRE(rank.steps.size() == static_cast<size_t>(run.steps));
      for (size_t s = 0; s < rank.steps.size(); ++s) {
        CHECK(rank.measured_step_s[s] == doctest::Approx(trace.measured_steps[{rank.rank, rank.steps[s]}]).epsilon(1e-6));
        CHECK(rank.replayed_step_s[s] == doctest::Approx(rank.measured_step_s[s]).epsilon(1e-5));
      }
      CHECK(rank.replayed_comm_s == doctest::Approx(rank.measured_comm_s).epsilon(1e-5));
    }
    CHECK(r.replayed_span_s == doctest::Approx(r.measured_span_s).epsilon(1e-5));
  }
}

TEST_CASE("a sender's local work before posting is kept, read from the sender's own events") {
  // Rank 1 spends 1 ms before posting each ring step; its receiver is ready long before. The
  // receiver's chunk event starts at the receiver's readiness, so only rank 1's own events say
  // when rank 1 posted.
  SyntheticRun run;
  run.ranks = 2;
  run.rank1_post_work = 1e-3;
  SyntheticTrace trace(run);
  const std::vector<Event> events = trace.build();
  const ReplayResult same = replay_trace(events, run.link);
  for (const RankReplay& rank : same.ranks)
    for (size_t s = 0; s < rank.steps.size(); ++s)
      CHECK(rank.replayed_step_s[s] == doctest::Approx(rank.measured_step_s[s]).epsilon(1e-5));
  // With free communication a step is rank 1's compute (forward 2.2 ms, backward 4.4 ms,
  // optimizer 0.3 ms) plus its 1 ms before each of the last bucket's 2 ring steps: ~8.9 ms
  // (the first bucket's all-reduce hides behind backward). Measured: ~12.5 ms.
  const ReplayResult fast = replay_trace(events, LinkParams{0, 1e-15, 0});
  for (const RankReplay& rank : fast.ranks)
    for (size_t s = 0; s < rank.steps.size(); ++s) CHECK(rank.replayed_step_s[s] == doctest::Approx(8.91e-3).epsilon(0.02));
}

TEST_CASE("identity holds within a few percent when the recorded chunks are noisy") {
  SyntheticRun run;
  run.noise = 0.05;
  run.steps = 5;
  SyntheticTrace trace(run);
  const ReplayResult r = replay_trace(trace.build(), run.link);
  for (const RankReplay& rank : r.ranks)
    for (size_t s = 0; s < rank.steps.size(); ++s)
      CHECK(rank.replayed_step_s[s] == doctest::Approx(rank.measured_step_s[s]).epsilon(0.03));
}

TEST_CASE("doubling the bandwidth shortens every rank's communication and no step gets longer") {
  SyntheticRun run;
  SyntheticTrace trace(run);
  const std::vector<Event> events = trace.build();
  LinkParams faster = run.link;
  faster.beta_s_per_byte /= 2;
  const ReplayResult r = replay_trace(events, faster);
  for (const RankReplay& rank : r.ranks) {
    CAPTURE(rank.rank);
    CHECK(rank.replayed_comm_s < rank.measured_comm_s);
    for (size_t s = 0; s < rank.steps.size(); ++s) CHECK(rank.replayed_step_s[s] < rank.measured_step_s[s]);
  }
  CHECK(r.replayed_span_s < r.measured_span_s);

  LinkParams slower = run.link;
  slower.beta_s_per_byte *= 10;  // the optimizer now waits much longer for the last bucket
  const ReplayResult s = replay_trace(events, slower);
  for (const RankReplay& rank : s.ranks)
    for (size_t i = 0; i < rank.steps.size(); ++i) CHECK(rank.replayed_step_s[i] > 2 * rank.measured_step_s[i]);
}

TEST_CASE("a Backward span holding the last bucket's all-reduce (ringlab's trainer) is compute, then waiting") {
  SyntheticRun run;
  run.backward_holds_last_bucket = true;
  run.skew = 0;
  SyntheticTrace trace(run);
  const std::vector<Event> events = trace.build();
  const ReplayResult same = replay_trace(events, run.link);
  for (const RankReplay& rank : same.ranks)
    for (size_t s = 0; s < rank.steps.size(); ++s)
      CHECK(rank.replayed_step_s[s] == doctest::Approx(rank.measured_step_s[s]).epsilon(1e-5));
  // On a link where communication is nearly free, only compute is left: forward 2 ms,
  // backward 4 ms, optimizer 0.3 ms and a few microseconds between them.
  const ReplayResult fast = replay_trace(events, LinkParams{0, 1e-15, 0});
  for (const RankReplay& rank : fast.ranks) {
    CAPTURE(rank.rank);
    for (size_t s = 0; s < rank.steps.size(); ++s) {
      CHECK(rank.replayed_step_s[s] < 0.8 * rank.measured_step_s[s]);
      CHECK(rank.replayed_step_s[s] == doctest::Approx(6.3e-3).epsilon(0.01));
    }
  }
}

TEST_CASE("a chunk cannot arrive before its sender posted it") {
  // Two ranks, one collective of one chunk each way; rank 1 joins 10 ms late.
  std::vector<Event> events;
  for (int r = 0; r < 2; ++r) {
    Event b = instant(EventKind::CollectiveBegin, r, r == 0 ? 0.0 : 10e-3, -1);
    b.collective_id = 0;
    b.bytes = 2000;
    events.push_back(b);
  }
  // Each chunk is recorded on its receiver from the receiver's own posting of the step.
  const double arrive0 = 10e-3 + 1e-3, arrive1 = 10e-3 + 1e-3;
  Event to0 = span(EventKind::ChunkTransfer, 0, 0.0, arrive0, -1);  // rank 1 only sends when it joins
  to0.src = 1, to0.dst = 0, to0.bytes = 1000, to0.collective_id = 0, to0.phase = 0, to0.ring_step = 0;
  Event to1 = span(EventKind::ChunkTransfer, 1, 10e-3, arrive1, -1);  // rank 0 sent at once
  to1.src = 0, to1.dst = 1, to1.bytes = 1000, to1.collective_id = 0, to1.phase = 0, to1.ring_step = 0;
  events.push_back(to0);
  events.push_back(to1);
  for (int r = 0; r < 2; ++r) {
    Event e = span(EventKind::CollectiveEnd, r, r == 0 ? 0.0 : 10e-3, 11e-3, -1);
    e.collective_id = 0;
    events.push_back(e);
  }
  const LinkParams instant_link{0, 1e-15, 0};
  const ReplayResult r = replay_trace(events, instant_link);
  REQUIRE(r.ranks.size() == 2);
  // Rank 0 still waits for rank 1 to post (10 ms after it began); rank 1 finds its chunk waiting.
  CHECK(r.ranks[0].replayed_comm_s == doctest::Approx(10e-3).epsilon(1e-6));
  CHECK(r.ranks[1].replayed_comm_s == doctest::Approx(0.0).epsilon(1e-6));
}

TEST_CASE("collectives recorded without chunks are re-timed with the cost model") {
  SyntheticRun run;
  SyntheticTrace trace(run);
  std::vector<Event> events = trace.build();
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const Event& e) { return e.kind == EventKind::ChunkTransfer; }),
               events.end());
  const ReplayResult r = replay_trace(events, run.link);
  CHECK(r.transfers == 0);
  CHECK(r.modelled_collectives == int64_t{run.steps} * run.buckets * run.ranks);
  const double per_collective = ring_allreduce_s(run.link, run.ranks, run.bucket_bytes);
  for (const RankReplay& rank : r.ranks)
    CHECK(rank.replayed_comm_s == doctest::Approx(run.steps * run.buckets * per_collective).epsilon(1e-6));
}

TEST_CASE("a run read back from the trace writer's layout replays like the events themselves") {
  SyntheticRun run;
  SyntheticTrace trace(run);
  const std::vector<Event> events = trace.build();
  const std::vector<Event> loaded = parse_chrome_trace(writer_layout(events), "run.json");
  LinkParams nvlink{2e-6, 1.0 / 450e9, 0};
  const ReplayResult direct = replay_trace(events, nvlink);
  const ReplayResult via_file = replay_trace(loaded, nvlink);
  CHECK(via_file.transfers == direct.transfers);
  check_same_steps(direct, via_file, 1e-6);
  for (size_t r = 0; r < direct.ranks.size(); ++r)
    CHECK(via_file.ranks[r].measured_step_s[0] == doctest::Approx(direct.ranks[r].measured_step_s[0]).epsilon(1e-6));
}

#ifdef RINGLAB_TEST_HAS_TRACE_WRITER
TEST_CASE("a run written by write_chrome_trace replays like the events themselves") {
  SyntheticRun run;
  SyntheticTrace trace(run);
  const std::vector<Event> events = trace.build();
  std::ostringstream text;
  write_chrome_trace(events, text);
  const std::vector<Event> loaded = parse_chrome_trace(text.str(), "written.json");
  const ReplayResult direct = replay_trace(events, run.link);
  const ReplayResult via_file = replay_trace(loaded, run.link);
  CHECK(via_file.transfers == direct.transfers);
  check_same_steps(direct, via_file, 1e-6);
}
#endif

TEST_CASE("malformed trace files are InputErrors naming the file and the problem") {
  auto fails_with = [](const std::string& text, const std::string& fragment) {
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(parse_chrome_trace(text, "bad-trace.json"), doctest::Contains(fragment.c_str()), InputError);
    CHECK_THROWS_WITH_AS(parse_chrome_trace(text, "bad-trace.json"), doctest::Contains("bad-trace.json"), InputError);
  };
  fails_with("{\"traceEvents\": [", "not valid JSON");
  fails_with("{\"events\": []}", "traceEvents");
  fails_with("{\"traceEvents\": 3}", "array");
  fails_with("{\"traceEvents\": [3]}", "traceEvents[0]");
  fails_with("{\"traceEvents\": []}", "no ringlab events");
  fails_with(R"({"traceEvents": [{"ph":"X","pid":1,"name":"forward","cat":"compute","ts":1}]})", "dur");
  fails_with(R"({"traceEvents": [{"ph":"X","pid":1,"name":"forward","cat":"compute","dur":1}]})", "ts");
  fails_with(R"({"traceEvents": [{"ph":"X","pid":1,"name":"forward","cat":"compute","ts":"1","dur":1}]})", "\"ts\" must be a number");
  fails_with(R"({"traceEvents": [{"ph":"X","pid":1,"name":"forward","cat":"compute","ts":1,"dur":-1}]})", "negative");
  fails_with(R"({"traceEvents": [{"ph":"X","pid":2,"name":"all-gather","cat":"ring","ts":1,"dur":1,"args":{"bytes":8}}]})", "src");
  fails_with(R"({"traceEvents": [{"ph":"X","pid":2,"name":"all-gather","cat":"ring","ts":1,"dur":1,"args":{"src":0,"bytes":-8}}]})", "bytes");
  fails_with(R"({"traceEvents": [{"ph":"X","pid":2,"name":"x","ts":1,"dur":1,"args":{"kind":"teleport"}}]})", "teleport");
  fails_with(R"({"traceEvents": [{"ph":"X","pid":2,"name":"x","ts":1,"dur":1,"args":{"kind":"forward","rank":1.5}}]})", "rank");
  CHECK_THROWS_WITH_AS(load_chrome_trace("/nonexistent/run.json"), doctest::Contains("/nonexistent/run.json"), InputError);
}

TEST_CASE("events with nothing to replay are an InputError") {
  Event log;
  log.kind = EventKind::Log;
  log.text = "hello";
  CHECK_THROWS_WITH_AS(replay_trace({log}, LinkParams{1e-6, 1e-9, 0}), doctest::Contains("nothing to replay"), InputError);
  CHECK_THROWS_AS(replay_trace({}, LinkParams{1e-6, 1e-9, 0}), InputError);
  SyntheticRun run;
  SyntheticTrace trace(run);
  CHECK_THROWS_AS(replay_trace(trace.build(), LinkParams{1e-6, -1e-9, 0}), InputError);
}
