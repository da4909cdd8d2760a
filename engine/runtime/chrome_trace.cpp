#include "engine/runtime/chrome_trace.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/runtime/event_time.h"

namespace ringlab {
namespace {

using Json = nlohmann::json;
using RankKey = std::pair<int, int64_t>;  // (rank, step) or (rank, collective_id)

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Writes trace events one by one into the "traceEvents" array.
class TraceOut {
 public:
  TraceOut(std::ostream& out, int64_t origin_ns) : out_(out), origin_ns_(origin_ns) {
    out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  }
  void finish() { out_ << "\n]}\n"; }

  // A span ("X": complete event): ts and dur in microseconds.
  void complete(int pid, int tid, std::string_view name, std::string_view cat, int64_t begin_ns,
                int64_t end_ns, const Json& args) {
    open('X', pid, tid, name, cat, begin_ns);
    out_ << fmt::format(",\"dur\":{:.3f},\"args\":{}}}", std::max<int64_t>(0, end_ns - begin_ns) / 1e3, dump(args));
  }
  // A mark ("i"); scope 't' draws it on the thread, 'p' across the whole process.
  void instant(int pid, int tid, std::string_view name, std::string_view cat, int64_t at_ns,
               const Json& args, char scope = 't') {
    open('i', pid, tid, name, cat, at_ns);
    out_ << fmt::format(",\"s\":\"{}\",\"args\":{}}}", scope, dump(args));
  }
  void counter(int pid, std::string_view name, int64_t at_ns, const Json& args) {
    open('C', pid, kTraceComputeTid, name, "metric", at_ns);
    out_ << fmt::format(",\"args\":{}}}", dump(args));
  }
  // One end of a flow arrow: 's' where it leaves, 'f' where it arrives (bound to the slice that
  // encloses the arrival: "bp":"e").
  void flow(char phase, int pid, int tid, uint64_t id, int64_t at_ns) {
    open(phase, pid, tid, "chunk", "flow", at_ns);
    out_ << fmt::format(",\"id\":{}{}}}", id, phase == 'f' ? ",\"bp\":\"e\"" : "");
  }
  void metadata(int pid, int tid, std::string_view name, const Json& args) {
    separator();
    out_ << fmt::format("{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":{},\"args\":{}}}", pid, tid,
                        dump(Json(std::string(name))), dump(args));
  }

 private:
  void separator() {
    out_ << (first_ ? "\n" : ",\n");
    first_ = false;
  }
  void open(char ph, int pid, int tid, std::string_view name, std::string_view cat, int64_t at_ns) {
    separator();
    out_ << fmt::format("{{\"ph\":\"{}\",\"pid\":{},\"tid\":{},\"name\":{},\"cat\":\"{}\",\"ts\":{:.3f}", ph,
                        pid, tid, dump(Json(std::string(name))), cat, (at_ns - origin_ns_) / 1e3);
  }

  std::ostream& out_;
  int64_t origin_ns_;
  bool first_ = true;
};

int64_t earliest_ns(const std::vector<Event>& events) {
  int64_t origin = INT64_MAX;
  for (const Event& e : events)
    if (event_begin_ns(e) != 0) origin = std::min(origin, event_begin_ns(e));
  return origin == INT64_MAX ? 0 : origin;
}

void write_metadata(TraceOut& out, const std::vector<Event>& events) {
  std::set<int> ranks;
  for (const Event& e : events) {
    ranks.insert(e.rank >= 0 ? e.rank : -1);
    if (e.kind == EventKind::ChunkTransfer && e.src >= 0) ranks.insert(e.src);
  }
  for (int rank : ranks) {
    const int pid = trace_pid(rank);
    const std::string name = rank >= 0 ? fmt::format("rank {}", rank) : "controller";
    out.metadata(pid, 0, "process_name", {{"name", name}});
    out.metadata(pid, 0, "process_sort_index", {{"sort_index", rank >= 0 ? rank : INT_MAX}});
    out.metadata(pid, kTraceComputeTid, "thread_name", {{"name", "compute"}});
    out.metadata(pid, kTraceComputeTid, "thread_sort_index", {{"sort_index", 0}});
    out.metadata(pid, kTraceCommunicationTid, "thread_name", {{"name", "communication"}});
    out.metadata(pid, kTraceCommunicationTid, "thread_sort_index", {{"sort_index", 1}});
  }
}

// A step spans from its StepBegin to its StepEnd (which carries the loss).
void write_steps(TraceOut& out, const std::vector<Event>& events) {
  struct Step {
    int64_t begin_ns = 0, end_ns = 0;
    int32_t epoch = -1;
    double loss = 0;
    bool ended = false;
  };
  std::map<RankKey, Step> steps;
  for (const Event& e : events) {
    if (e.kind == EventKind::StepBegin) {
      steps[{e.rank, e.step}].begin_ns = event_begin_ns(e);
    } else if (e.kind == EventKind::StepEnd) {
      Step& s = steps[{e.rank, e.step}];
      if (s.begin_ns == 0 && e.t_end_ns != 0) s.begin_ns = e.t_begin_ns;
      s.end_ns = event_end_ns(e);
      s.epoch = e.epoch;
      s.loss = e.value;
      s.ended = true;
    }
  }
  for (const auto& [key, s] : steps) {
    if (!s.ended || s.begin_ns == 0) continue;
    const int pid = trace_pid(key.first);
    out.complete(pid, kTraceComputeTid, "step", "step", s.begin_ns, s.end_ns,
                 {{"step", key.second}, {"epoch", s.epoch}, {"loss", s.loss}});
    out.counter(pid, "loss", s.end_ns, {{"loss", s.loss}});
  }
}

// Spans and marks of the compute lane, and the run-level marks.
void write_compute(TraceOut& out, const std::vector<Event>& events) {
  for (const Event& e : events) {
    const int pid = trace_pid(e.rank);
    const int tid = kTraceComputeTid;
    const int64_t at = event_begin_ns(e);
    switch (e.kind) {
      case EventKind::Forward:
        out.complete(pid, tid, "forward", "compute", at, event_end_ns(e), {{"step", e.step}});
        break;
      case EventKind::Backward:
        out.complete(pid, tid, "backward", "compute", at, event_end_ns(e), {{"step", e.step}});
        break;
      case EventKind::OptimizerStep:
        out.complete(pid, tid, "optimizer step", "compute", at, event_end_ns(e), {{"step", e.step}});
        break;
      case EventKind::BucketReady:
        out.instant(pid, tid, "bucket ready", "ddp", at, {{"bucket", e.bucket}, {"bytes", e.bytes}});
        break;
      case EventKind::SamplerShard:
        out.instant(pid, tid, "sampler shard", "data", at, {{"epoch", e.epoch}, {"samples", e.indices.size()}});
        break;
      case EventKind::EpochEnd:
        out.instant(pid, tid, "epoch end", "run", at, {{"epoch", e.epoch}, {"mse", e.value}}, 'p');
        break;
      case EventKind::RunBegin:
        out.instant(pid, tid, "run begin", "run", at, {{"world_size", e.value}}, 'p');
        break;
      case EventKind::RunEnd:
        out.instant(pid, tid, "run end", "run", at, {{"us_per_step", e.value}}, 'p');
        break;
      case EventKind::Error:
        out.instant(pid, tid, "error", "run", at, {{"message", e.text}}, 'p');
        break;
      case EventKind::Log:
        out.instant(pid, tid, "log", "run", at, {{"message", e.text}});
        break;
      default:
        break;
    }
  }
}

struct Collective {
  int64_t begin_ns = 0, end_ns = 0;
  std::string algorithm;
  int32_t bucket = -1;
  int64_t bytes = 0;
  bool ended = false;
};

std::map<RankKey, Collective> collect_collectives(const std::vector<Event>& events) {
  std::map<RankKey, Collective> collectives;
  for (const Event& e : events) {
    if (e.kind == EventKind::CollectiveBegin) {
      Collective& c = collectives[{e.rank, e.collective_id}];
      if (c.begin_ns == 0) c.begin_ns = event_begin_ns(e);
      c.algorithm = e.text;
      c.bucket = e.bucket;
      c.bytes = e.bytes;
    } else if (e.kind == EventKind::CollectiveEnd) {
      Collective& c = collectives[{e.rank, e.collective_id}];
      if (e.t_begin_ns != 0 && e.t_end_ns != 0) c.begin_ns = e.t_begin_ns;
      c.end_ns = event_end_ns(e);
      c.ended = true;
    }
  }
  return collectives;
}

void write_collectives(TraceOut& out, const std::map<RankKey, Collective>& collectives) {
  for (const auto& [key, c] : collectives) {
    const std::string name = c.algorithm == "broadcast" ? "broadcast"
                             : c.algorithm.empty()     ? "all-reduce"
                                                       : fmt::format("all-reduce ({})", c.algorithm);
    const Json args = {{"collective_id", key.second}, {"bucket", c.bucket}, {"bytes", c.bytes},
                       {"algorithm", c.algorithm}};
    const int pid = trace_pid(key.first);
    if (c.ended) out.complete(pid, kTraceCommunicationTid, name, "collective", c.begin_ns, c.end_ns, args);
    else out.instant(pid, kTraceCommunicationTid, name + " (unfinished)", "collective", c.begin_ns, args);
  }
}

const char* transfer_name(const Event& e) {
  if (e.kind == EventKind::GateWait) return "gate wait";
  if (e.phase == static_cast<int8_t>(RingPhase::ReduceScatter)) return "reduce-scatter";
  if (e.phase == static_cast<int8_t>(RingPhase::AllGather)) return "all-gather";
  return "chunk";
}

// Chunk transfers and gate waits, drawn inside their collective on the receiving rank's
// communication lane. A chunk's t_begin is when the *sender* posted it, which can precede the end
// of the receiver's previous chunk, or even the receiver's own collective begin. Trace viewers
// need the slices of one thread to nest, so each drawn slice starts no earlier than the previous
// one on that lane ended and stays inside its collective; the true send time is kept in the args
// and is where the flow arrow starts, on the sender's lane.
void write_transfers(TraceOut& out, const std::vector<Event>& events,
                     const std::map<RankKey, Collective>& collectives) {
  std::map<int, std::vector<const Event*>> by_rank;
  for (const Event& e : events)
    if (e.kind == EventKind::ChunkTransfer || e.kind == EventKind::GateWait) by_rank[e.rank].push_back(&e);
  const int64_t origin = earliest_ns(events);
  uint64_t flow_id = 0;
  for (auto& [rank, lane] : by_rank) {
    std::stable_sort(lane.begin(), lane.end(),
                     [](const Event* a, const Event* b) { return event_end_ns(*a) < event_end_ns(*b); });
    int64_t previous_end = INT64_MIN;
    for (const Event* e : lane) {
      int64_t begin = event_begin_ns(*e), end = event_end_ns(*e);
      const auto c = collectives.find({rank, e->collective_id});
      if (c != collectives.end() && c->second.ended) {
        begin = std::max(begin, c->second.begin_ns);
        end = std::min(end, c->second.end_ns);
      }
      begin = std::min(std::max(begin, previous_end), end);
      previous_end = end;
      Json args = {{"collective_id", e->collective_id}, {"ring_step", e->ring_step}};
      if (e->kind == EventKind::ChunkTransfer) {
        args.update({{"chunk", e->chunk}, {"segment", e->segment}, {"src", e->src}, {"dst", e->dst},
                     {"bytes", e->bytes}, {"send_posted_us", (event_begin_ns(*e) - origin) / 1e3}});
        if (!e->values.empty()) args["values"] = e->values;
      }
      const int pid = trace_pid(rank);
      out.complete(pid, kTraceCommunicationTid, transfer_name(*e), "ring", begin, end, args);
      if (e->kind == EventKind::ChunkTransfer && e->src >= 0 && e->src != rank) {
        ++flow_id;
        out.flow('s', trace_pid(e->src), kTraceCommunicationTid, flow_id, event_begin_ns(*e));
        // The arrow lands a nanosecond before the slice ends: a viewer binds it to the slice
        // open at that moment, which at the very end may already be the enclosing collective.
        out.flow('f', pid, kTraceCommunicationTid, flow_id, end > begin ? end - 1 : end);
      }
    }
  }
}

}  // namespace

void write_chrome_trace(const std::vector<Event>& events, std::ostream& out) {
  TraceOut trace(out, earliest_ns(events));
  write_metadata(trace, events);
  write_steps(trace, events);
  write_compute(trace, events);
  const auto collectives = collect_collectives(events);
  write_collectives(trace, collectives);
  write_transfers(trace, events, collectives);
  trace.finish();
}

void write_chrome_trace(const std::vector<Event>& events, const std::string& path) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(fmt::format("cannot write the Chrome trace to {}: {}", path, std::strerror(errno)));
  write_chrome_trace(events, file);
  file.flush();
  if (!file) throw Error(fmt::format("writing the Chrome trace to {} failed: {}", path, std::strerror(errno)));
}

}  // namespace ringlab
