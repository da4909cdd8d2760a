// The exporters on a small synthetic run (2 ranks, 2 steps, a 2-rank ring per step): the Chrome
// trace parses, has one process per rank with the two lanes, properly nested slices and one flow
// per chunk from sender to receiver; the CSV has one row per (rank, step) with the right sums.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/export/chrome_trace.h"
#include "engine/export/metrics_csv.h"

using namespace ringlab;
using Json = nlohmann::json;

namespace {

constexpr int64_t kOrigin = 1'000'000'000;
constexpr int64_t kStepNs = 1'000'000;
// Rank 1 runs 15 us behind rank 0, so rank 0's sends are posted before rank 1's collective begins.
constexpr int64_t kSkewNs = 15'000;

int64_t base_ns(int rank, int step) { return kOrigin + step * kStepNs + rank * kSkewNs; }

Event span(EventKind kind, int rank, int64_t step, int64_t begin, int64_t end) {
  Event e;
  e.kind = kind;
  e.rank = rank;
  e.step = step;
  e.t_begin_ns = begin;
  e.t_end_ns = end;
  return e;
}

Event chunk(int dst, int step, RingPhase phase, int64_t posted_offset, int64_t done_offset) {
  const int src = 1 - dst;
  Event e = span(EventKind::ChunkTransfer, dst, step, base_ns(src, step) + posted_offset,
                 base_ns(dst, step) + done_offset);
  e.collective_id = step;
  e.phase = static_cast<int8_t>(phase);
  e.ring_step = 0;
  e.chunk = phase == RingPhase::ReduceScatter ? src : dst;
  e.src = src;
  e.dst = dst;
  e.bytes = 2048;
  e.values = {1.0f, 2.0f};
  return e;
}

double loss_of(int rank, int step) { return 1.0 / (step + 1) + rank; }

std::vector<Event> synthetic_run() {
  std::vector<Event> events;
  for (int step = 0; step < 2; ++step) {
    for (int rank = 0; rank < 2; ++rank) {
      const int64_t b = base_ns(rank, step);
      Event begin = span(EventKind::StepBegin, rank, step, b, 0);
      begin.epoch = 0;
      events.push_back(begin);
      events.push_back(span(EventKind::Forward, rank, step, b + 10'000, b + 110'000));
      events.push_back(span(EventKind::Backward, rank, step, b + 110'000, b + 310'000));
      Event ready = span(EventKind::BucketReady, rank, step, b + 200'000, 0);
      ready.bucket = 0;
      ready.bytes = 4096;
      events.push_back(ready);
      Event cbegin = span(EventKind::CollectiveBegin, rank, step, b + 220'000, 0);
      cbegin.collective_id = step;
      cbegin.bucket = 0;
      cbegin.bytes = 4096;
      cbegin.text = "ring";
      events.push_back(cbegin);
      events.push_back(chunk(rank, step, RingPhase::ReduceScatter, 230'000, 260'000));
      if (rank == 0) {
        Event gate = span(EventKind::GateWait, rank, step, b + 255'000, b + 265'000);
        gate.collective_id = step;
        gate.ring_step = 0;
        events.push_back(gate);
      }
      events.push_back(chunk(rank, step, RingPhase::AllGather, 270'000, 300'000));
      // No step number on these two: the exporters place them by time.
      Event cend = span(EventKind::CollectiveEnd, rank, -1, b + 220'000, b + 320'000);
      cend.collective_id = step;
      events.push_back(cend);
      events.push_back(span(EventKind::OptimizerStep, rank, -1, b + 330'000, b + 380'000));
      Event end = span(EventKind::StepEnd, rank, step, b, b + 400'000);
      end.epoch = 0;
      end.value = loss_of(rank, step);
      events.push_back(end);
    }
  }
  Event epoch = span(EventKind::EpochEnd, 0, -1, base_ns(0, 1) + 500'000, 0);
  epoch.epoch = 0;
  epoch.value = 0.25;
  events.push_back(epoch);
  Event log = span(EventKind::Log, 1, -1, base_ns(1, 1) + 600'000, 0);
  log.text = "a \"quoted\" line\nwith a newline and \xff invalid UTF-8";
  events.push_back(log);
  return events;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("ringlab-" + std::to_string(getpid()) + "-" + name)).string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Json load_trace(const std::vector<Event>& events) {
  const std::string path = temp_path("trace.json");
  write_chrome_trace(events, path);
  const Json trace = Json::parse(read_file(path));
  std::filesystem::remove(path);
  return trace;
}

std::vector<Json> select(const Json& trace, const std::string& ph, const std::string& cat = "") {
  std::vector<Json> out;
  for (const Json& e : trace["traceEvents"])
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  return out;
}

constexpr double kEps = 1e-6;

}  // namespace

TEST_CASE("the Chrome trace has the required keys and one process per rank with two lanes") {
  const Json trace = load_trace(synthetic_run());
  REQUIRE(trace.is_object());
  REQUIRE(trace.contains("traceEvents"));
  REQUIRE(trace["traceEvents"].is_array());
  for (const Json& e : trace["traceEvents"]) {
    REQUIRE(e.contains("ph"));
    REQUIRE(e.contains("pid"));
    REQUIRE(e.contains("tid"));
    REQUIRE(e.contains("name"));
    if (e["ph"] != "M") REQUIRE(e["ts"].is_number());
    if (e["ph"] == "X") {
      REQUIRE(e["dur"].is_number());
      CHECK(e["dur"].get<double>() >= 0);
    }
  }
  std::map<int, std::string> process_names;
  std::map<std::pair<int, int>, std::string> thread_names;
  for (const Json& m : select(trace, "M")) {
    if (m["name"] == "process_name") process_names[m["pid"]] = m["args"]["name"];
    if (m["name"] == "thread_name") thread_names[{m["pid"], m["tid"]}] = m["args"]["name"];
  }
  CHECK(process_names == std::map<int, std::string>{{trace_pid(0), "rank 0"}, {trace_pid(1), "rank 1"}});
  for (int rank = 0; rank < 2; ++rank) {
    CHECK(thread_names[{trace_pid(rank), kTraceComputeTid}] == "compute");
    CHECK(thread_names[{trace_pid(rank), kTraceCommunicationTid}] == "communication");
  }
  std::set<int> pids;
  for (const Json& x : select(trace, "X")) pids.insert(x["pid"].get<int>());
  CHECK(pids == std::set<int>{trace_pid(0), trace_pid(1)});
}

TEST_CASE("spans land on the right lane with the right times") {
  const Json trace = load_trace(synthetic_run());
  std::map<std::string, int> count;
  for (const Json& x : select(trace, "X")) {
    const std::string name = x["name"];
    ++count[name];
    const int tid = x["tid"];
    if (name == "step" || name == "forward" || name == "backward" || name == "optimizer step")
      CHECK(tid == kTraceComputeTid);
    else
      CHECK(tid == kTraceCommunicationTid);
    if (name == "forward") CHECK(std::abs(x["dur"].get<double>() - 100.0) < kEps);
    if (name == "backward") CHECK(std::abs(x["dur"].get<double>() - 200.0) < kEps);
    if (name == "all-reduce (ring)") CHECK(std::abs(x["dur"].get<double>() - 100.0) < kEps);
    if (name == "step") {
      const int rank = x["pid"].get<int>() - 1;
      const int step = x["args"]["step"];
      CHECK(x["args"]["loss"].get<double>() == doctest::Approx(loss_of(rank, step)));
      CHECK(std::abs(x["ts"].get<double>() - (base_ns(rank, step) - kOrigin) / 1e3) < kEps);
    }
  }
  CHECK(count["step"] == 4);
  CHECK(count["forward"] == 4);
  CHECK(count["backward"] == 4);
  CHECK(count["optimizer step"] == 4);
  CHECK(count["all-reduce (ring)"] == 4);
  CHECK(count["reduce-scatter"] == 4);
  CHECK(count["all-gather"] == 4);
  CHECK(count["gate wait"] == 2);
  CHECK(select(trace, "C").size() == 4);  // the loss counter, one per step per rank
  bool found_log = false;
  for (const Json& i : select(trace, "i"))
    if (i["name"] == "log") found_log = i["args"]["message"].get<std::string>().find("\"quoted\"") != std::string::npos;
  CHECK(found_log);
}

TEST_CASE("slices of one lane nest: chunks sit inside their collective, never overlapping") {
  const Json trace = load_trace(synthetic_run());
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> lanes;
  for (const Json& x : select(trace, "X")) {
    const double ts = x["ts"], dur = x["dur"];
    lanes[{x["pid"], x["tid"]}].emplace_back(ts, ts + dur);
  }
  for (const auto& [lane, slices] : lanes)
    for (const auto& a : slices)
      for (const auto& b : slices) {
        const bool disjoint = a.second <= b.first + kEps || b.second <= a.first + kEps;
        const bool a_in_b = a.first >= b.first - kEps && a.second <= b.second + kEps;
        const bool b_in_a = b.first >= a.first - kEps && b.second <= a.second + kEps;
        CHECK((disjoint || a_in_b || b_in_a));
      }
  for (const Json& c : select(trace, "X", "ring")) {
    bool inside = false;
    for (const Json& coll : select(trace, "X", "collective"))
      if (coll["pid"] == c["pid"] && coll["args"]["collective_id"] == c["args"]["collective_id"])
        inside = c["ts"].get<double>() >= coll["ts"].get<double>() - kEps &&
                 c["ts"].get<double>() + c["dur"].get<double>() <=
                     coll["ts"].get<double>() + coll["dur"].get<double>() + kEps;
    CHECK(inside);
  }
}

TEST_CASE("one flow per chunk, from the sender when it posted to the receiver when it completed") {
  const std::vector<Event> events = synthetic_run();
  const Json trace = load_trace(events);
  std::map<uint64_t, Json> starts, finishes;
  for (const Json& s : select(trace, "s")) starts[s["id"]] = s;
  for (const Json& f : select(trace, "f")) finishes[f["id"]] = f;
  size_t chunks = 0;
  for (const Event& e : events) chunks += e.kind == EventKind::ChunkTransfer;
  CHECK(starts.size() == chunks);
  CHECK(finishes.size() == chunks);
  for (const auto& [id, s] : starts) {
    REQUIRE(finishes.count(id) == 1);
    const Json& f = finishes[id];
    CHECK(s["name"] == f["name"]);
    CHECK(s["cat"] == f["cat"]);
    CHECK(f["bp"] == "e");
    CHECK(s["pid"] != f["pid"]);  // a 2-rank ring: always to the other rank
    CHECK(s["tid"] == kTraceCommunicationTid);
    CHECK(s["ts"].get<double>() < f["ts"].get<double>());
  }
  // Each flow starts at the chunk's true send time: the one kept in the chunk slice's args.
  std::multiset<double> posted, flow_starts;
  for (const Json& c : select(trace, "X", "ring"))
    if (c["name"] != "gate wait") posted.insert(std::round(c["args"]["send_posted_us"].get<double>() * 1e3));
  for (const auto& [id, s] : starts) flow_starts.insert(std::round(s["ts"].get<double>() * 1e3));
  CHECK(posted == flow_starts);
  // Rank 0's sends were posted before rank 1's collective began: the arrow still starts there,
  // while the drawn chunk slice on rank 1 is held inside the collective.
  const double rank1_collective_begin = (base_ns(1, 0) + 220'000 - kOrigin) / 1e3;
  bool early_send_seen = false;
  for (const auto& [id, s] : starts)
    if (s["pid"] == trace_pid(0) && s["ts"].get<double>() < rank1_collective_begin) early_send_seen = true;
  CHECK(early_send_seen);
}

TEST_CASE("a collective that never ended is marked unfinished, and its chunks are still drawn") {
  std::vector<Event> events;
  Event begin = span(EventKind::CollectiveBegin, 0, 3, kOrigin, 0);
  begin.collective_id = 9;
  begin.text = "ring";
  events.push_back(begin);
  events.push_back(chunk(0, 3, RingPhase::ReduceScatter, 10'000, 50'000));
  events.back().collective_id = 9;
  const Json trace = load_trace(events);
  const std::vector<Json> marks = select(trace, "i", "collective");
  REQUIRE(marks.size() == 1);
  CHECK(marks[0]["name"] == "all-reduce (ring) (unfinished)");
  CHECK(marks[0]["tid"] == kTraceCommunicationTid);
  CHECK(marks[0]["args"]["collective_id"] == 9);
  const std::vector<Json> slices = select(trace, "X", "ring");
  REQUIRE(slices.size() == 1);
  CHECK(slices[0]["name"] == "reduce-scatter");
  CHECK(select(trace, "s").size() == 1);
  CHECK(select(trace, "f").size() == 1);
}

TEST_CASE("an empty run still writes a valid trace") {
  const Json trace = load_trace({});
  CHECK(trace["traceEvents"].empty());
}

TEST_CASE("the metrics CSV has one row per (rank, step) with the sums of its spans") {
  const std::string path = temp_path("metrics.csv");
  write_metrics_csv(synthetic_run(), path);
  std::istringstream in(read_file(path));
  std::filesystem::remove(path);
  std::string line;
  REQUIRE(std::getline(in, line));
  CHECK(line == "rank,epoch,step,loss,step_us,forward_us,backward_us,comm_us,optimizer_us");
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream cells_in(line);
    std::string cell;
    while (std::getline(cells_in, cell, ',')) cells.push_back(cell);
    REQUIRE(cells.size() == 9);
    rows.push_back(cells);
  }
  REQUIRE(rows.size() == 4);
  int i = 0;
  for (int rank = 0; rank < 2; ++rank)
    for (int step = 0; step < 2; ++step, ++i) {
      const auto& r = rows[static_cast<size_t>(i)];
      CHECK(std::stoi(r[0]) == rank);
      CHECK(std::stoi(r[1]) == 0);
      CHECK(std::stoi(r[2]) == step);
      CHECK(std::stod(r[3]) == doctest::Approx(loss_of(rank, step)));
      CHECK(std::stod(r[4]) == doctest::Approx(400.0));
      CHECK(std::stod(r[5]) == doctest::Approx(100.0));
      CHECK(std::stod(r[6]) == doctest::Approx(200.0));
      CHECK(std::stod(r[7]) == doctest::Approx(100.0));  // placed by time: no step number on it
      CHECK(std::stod(r[8]) == doctest::Approx(50.0));   // likewise
    }
}

TEST_CASE("gradient accumulation: several passes in one step add up") {
  std::vector<Event> events;
  events.push_back(span(EventKind::StepBegin, 0, 0, 1000, 0));
  events.push_back(span(EventKind::Forward, 0, 0, 2000, 5000));
  events.push_back(span(EventKind::Forward, 0, 0, 6000, 9000));
  Event cbegin = span(EventKind::CollectiveBegin, 0, 0, 10'000, 0);
  cbegin.collective_id = 4;
  events.push_back(cbegin);
  Event cend = span(EventKind::CollectiveEnd, 0, 0, 0, 14'000);  // begin only on the Begin event
  cend.collective_id = 4;
  events.push_back(cend);
  Event end = span(EventKind::StepEnd, 0, 0, 0, 20'000);
  end.value = 0.125;
  events.push_back(end);
  std::ostringstream out;
  write_metrics_csv(events, out);
  CHECK(out.str() == std::string(kMetricsCsvHeader) + "\n0,-1,0,0.125,19.000,6.000,0.000,4.000,0.000\n");
}

// Join: before each step the ranks all-reduce who still has data, named with the step before it
// (or the first), between two steps' times; a rank out of data shadows the others' all-reduce and
// has no loss. comm_us counted those between-steps all-reduces and came out above step_us, and
// the shadow step's loss read 0.
TEST_CASE("Join: a step counts only the collective time inside it, and a joined rank's step has no loss") {
  std::vector<Event> events;
  const auto collective = [&](int64_t id, int64_t step, int64_t begin, int64_t end) {
    Event b = span(EventKind::CollectiveBegin, 0, step, begin, 0);
    b.collective_id = id;
    Event e = span(EventKind::CollectiveEnd, 0, step, 0, end);
    e.collective_id = id;
    events.push_back(b);
    events.push_back(e);
  };
  collective(2, 0, 1'000, 3'000);  // who has data, before step 0
  events.push_back(span(EventKind::StepBegin, 0, 0, 4'000, 0));
  collective(3, 0, 5'000, 9'000);  // the gradients
  Event end = span(EventKind::StepEnd, 0, 0, 0, 10'000);
  end.value = 0.5;
  events.push_back(end);
  collective(4, 0, 11'000, 12'000);  // who has data, before step 1 (still named step 0)
  events.push_back(span(EventKind::StepBegin, 0, 1, 13'000, 0));
  collective(5, 1, 14'000, 17'000);  // the others' gradients, shadowed with zeros
  Event joined = span(EventKind::StepEnd, 0, 1, 0, 18'000);
  joined.text = "joined";
  events.push_back(joined);
  std::ostringstream out;
  write_metrics_csv(events, out);
  CHECK(out.str() == std::string(kMetricsCsvHeader) +
                         "\n0,-1,0,0.5,6.000,0.000,0.000,4.000,0.000"
                         "\n0,-1,1,,5.000,0.000,0.000,3.000,0.000\n");
}

TEST_CASE("unwritable paths are named in the error") {
  const std::string bad = "/nonexistent-ringlab-dir/out.json";
  CHECK_THROWS_WITH_AS(write_chrome_trace(synthetic_run(), bad), doctest::Contains(bad.c_str()), Error);
  CHECK_THROWS_WITH_AS(write_metrics_csv(synthetic_run(), bad), doctest::Contains(bad.c_str()), Error);
}
