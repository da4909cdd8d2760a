#include "engine/export/chrome_trace.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/events/event_time.h"
#include "engine/events/rank_spool.h"

namespace ringlab {
namespace {

using Json = nlohmann::json;
using RankKey = std::pair<int, int64_t>;  // (rank, step) or (rank, collective_id)

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// One trace event as kept until the end, with absolute times: ts and dur are written relative
// to the earliest event of the run, which is known only then. In the spool a record is its
// fixed part, the three strings' lengths, then the strings.
struct RecordHead {
  char ph = 'X';      // X span, i instant, C counter, s/f flow ends
  char scope = 't';   // an instant's scope: t thread, p process
  bool has_send_posted = false;
  int32_t pid = 0, tid = 0;
  int64_t at_ns = 0, end_ns = 0;
  int64_t send_posted_ns = 0;  // chunk slices: the true send time, into args as send_posted_us
  uint64_t flow_id = 0;
};

struct Record {
  RecordHead head;
  std::string name, cat, args;  // args: a JSON object
};

void append_record(RankSpool& spool, const Record& r) {
  const uint32_t lengths[3] = {static_cast<uint32_t>(r.name.size()), static_cast<uint32_t>(r.cat.size()),
                               static_cast<uint32_t>(r.args.size())};
  spool.append(0, &r.head, sizeof r.head);
  spool.append(0, lengths, sizeof lengths);
  for (const std::string* text : {&r.name, &r.cat, &r.args}) spool.append(0, text->data(), text->size());
}

Record read_record(RankSpool::Reader& in) {
  Record r;
  r.head = in.read<RecordHead>();
  uint32_t lengths[3] = {};
  in.read(lengths, sizeof lengths);
  std::string* texts[3] = {&r.name, &r.cat, &r.args};
  for (int i = 0; i < 3; ++i) {
    texts[i]->resize(lengths[i]);
    in.read(texts[i]->data(), lengths[i]);
  }
  return r;
}

// Writes trace events one by one into the "traceEvents" array.
class TraceOut {
 public:
  TraceOut(std::ostream& out, int64_t origin_ns) : out_(out), origin_ns_(origin_ns) {
    out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  }
  void finish() { out_ << "\n]}\n"; }

  void record(const Record& r) {
    const RecordHead& h = r.head;
    separator();
    out_ << fmt::format("{{\"ph\":\"{}\",\"pid\":{},\"tid\":{},\"name\":{},\"cat\":\"{}\",\"ts\":{:.3f}", h.ph, h.pid,
                        h.tid, dump(Json(r.name)), r.cat, us(h.at_ns));
    switch (h.ph) {
      case 'X': out_ << fmt::format(",\"dur\":{:.3f},\"args\":{}}}", std::max<int64_t>(0, h.end_ns - h.at_ns) / 1e3, args(r)); break;
      case 'i': out_ << fmt::format(",\"s\":\"{}\",\"args\":{}}}", h.scope, args(r)); break;
      case 'C': out_ << fmt::format(",\"args\":{}}}", args(r)); break;
      default:  // a flow end ('s' leaves, 'f' arrives, bound to the enclosing slice: "bp":"e")
        out_ << fmt::format(",\"id\":{}{}}}", h.flow_id, h.ph == 'f' ? ",\"bp\":\"e\"" : "");
    }
  }
  void metadata(int pid, int tid, std::string_view name, const Json& args) {
    separator();
    out_ << fmt::format("{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":{},\"args\":{}}}", pid, tid,
                        dump(Json(std::string(name))), dump(args));
  }

 private:
  double us(int64_t ns) const { return (ns - origin_ns_) / 1e3; }
  std::string args(const Record& r) const {
    if (!r.head.has_send_posted) return r.args;
    std::string a = r.args;
    a.insert(a.size() - 1, fmt::format("{}\"send_posted_us\":{:.3f}", a.size() > 2 ? "," : "", us(r.head.send_posted_ns)));
    return a;
  }
  void separator() {
    out_ << (first_ ? "\n" : ",\n");
    first_ = false;
  }

  std::ostream& out_;
  int64_t origin_ns_;
  bool first_ = true;
};

struct Collective {
  int64_t begin_ns = 0, end_ns = 0;
  std::string algorithm;
  int32_t bucket = -1;
  int64_t bytes = 0;
};

const char* transfer_name(const Event& e) {
  if (e.kind == EventKind::GateWait) return "gate wait";
  if (e.phase == static_cast<int8_t>(RingPhase::ReduceScatter)) return "reduce-scatter";
  if (e.phase == static_cast<int8_t>(RingPhase::AllGather)) return "all-gather";
  return "chunk";
}

std::string collective_name(const Collective& c) {
  return c.algorithm == "broadcast" ? "broadcast"
         : c.algorithm.empty()     ? "all-reduce"
                                   : fmt::format("all-reduce ({})", c.algorithm);
}

}  // namespace

struct ChromeTraceWriter::State {
  RankSpool records{"the Chrome trace's records"};
  int64_t origin_ns = INT64_MAX;
  std::set<int> ranks;
  std::vector<int> ranks_per_node;                        // empty: one node
  std::map<RankKey, int64_t> step_begin_ns;              // steps begun, not yet ended
  std::map<RankKey, Collective> collectives;              // begun, not yet ended
  std::map<RankKey, std::vector<Event>> transfers;        // chunks and gate waits, until their collective ends
  std::map<int, int64_t> lane_end_ns;                     // where each communication lane's last slice ended
  uint64_t flow_id = 0;

  void add(const RecordHead& head, std::string name, std::string cat, const Json& args) {
    append_record(records, {head, std::move(name), std::move(cat), args.is_null() ? "" : dump(args)});
  }
  void span(int rank, int tid, std::string name, std::string cat, int64_t begin, int64_t end, const Json& args) {
    RecordHead h;
    h.pid = trace_pid(rank);
    h.tid = tid;
    h.at_ns = begin;
    h.end_ns = end;
    add(h, std::move(name), std::move(cat), args);
  }
  void instant(int rank, std::string name, std::string cat, int64_t at, const Json& args, char scope = 't',
               int tid = kTraceComputeTid) {
    RecordHead h;
    h.ph = 'i';
    h.scope = scope;
    h.pid = trace_pid(rank);
    h.tid = tid;
    h.at_ns = at;
    add(h, std::move(name), std::move(cat), args);
  }
  void counter(int rank, std::string name, int64_t at, const Json& args) {
    RecordHead h;
    h.ph = 'C';
    h.pid = trace_pid(rank);
    h.tid = kTraceComputeTid;
    h.at_ns = at;
    add(h, std::move(name), "metric", args);
  }
  // One end of a flow arrow: 's' where it leaves, 'f' where it arrives.
  void flow(char ph, int rank, uint64_t id, int64_t at) {
    RecordHead h;
    h.ph = ph;
    h.pid = trace_pid(rank);
    h.tid = kTraceCommunicationTid;
    h.at_ns = at;
    h.flow_id = id;
    add(h, "chunk", "flow", Json());
  }

  void step_end(const Event& e);
  void compute(const Event& e);
  void collective_end(const Event& e);
  void flush_transfers(RankKey key, const Collective* clip);  // by value: callers pass a key of the map it erases from
};

// A step spans from its StepBegin to its StepEnd (which carries the loss).
void ChromeTraceWriter::State::step_end(const Event& e) {
  int64_t begin = e.t_end_ns != 0 ? e.t_begin_ns : 0;
  if (const auto it = step_begin_ns.find({e.rank, e.step}); it != step_begin_ns.end()) {
    begin = it->second;
    step_begin_ns.erase(it);
  }
  if (begin == 0) return;
  const int64_t end = event_end_ns(e);
  span(e.rank, kTraceComputeTid, "step", "step", begin, end, {{"step", e.step}, {"epoch", e.epoch}, {"loss", e.value}});
  counter(e.rank, "loss", end, {{"loss", e.value}});
}

// Spans and marks of the compute lane, and the run-level marks.
void ChromeTraceWriter::State::compute(const Event& e) {
  const int tid = kTraceComputeTid;
  const int64_t at = event_begin_ns(e);
  switch (e.kind) {
    case EventKind::Forward: span(e.rank, tid, "forward", "compute", at, event_end_ns(e), {{"step", e.step}}); break;
    case EventKind::Backward: span(e.rank, tid, "backward", "compute", at, event_end_ns(e), {{"step", e.step}}); break;
    case EventKind::OptimizerStep:
      span(e.rank, tid, "optimizer step", "compute", at, event_end_ns(e), {{"step", e.step}});
      break;
    case EventKind::BucketReady: instant(e.rank, "bucket ready", "ddp", at, {{"bucket", e.bucket}, {"bytes", e.bytes}}); break;
    case EventKind::SamplerShard:  // one mark per shard, not per piece
      if (first_piece(e))
        instant(e.rank, "sampler shard", "data", at, {{"epoch", e.epoch}, {"samples", payload_size(e)}});
      break;
    case EventKind::EpochEnd:  // rank 0's evaluation of the whole dataset, then the mark
      if (event_end_ns(e) > e.t_begin_ns)
        span(e.rank, tid, "evaluation", "compute", at, event_end_ns(e), {{"epoch", e.epoch}});
      instant(e.rank, "epoch end", "run", event_end_ns(e), {{"epoch", e.epoch}, {"mse", e.value}}, 'p');
      break;
    case EventKind::StepVote: span(e.rank, tid, "step vote", "control", at, event_end_ns(e), {{"step", e.step}}); break;
    case EventKind::Straggle:
      span(e.rank, tid, "injected delay", "fault", at, event_end_ns(e), {{"step", e.step}, {"delay_ms", e.value}});
      break;
    case EventKind::RunBegin: instant(e.rank, "run begin", "run", at, {{"world_size", e.value}}, 'p'); break;
    case EventKind::RunEnd: instant(e.rank, "run end", "run", at, {{"us_per_step", e.value}}, 'p'); break;
    case EventKind::Error: instant(e.rank, "error", "run", at, {{"message", e.text}}, 'p'); break;
    case EventKind::TornDown: instant(e.rank, "torn down", "run", at, {{"message", e.text}}, 'p'); break;
    case EventKind::Log: instant(e.rank, "log", "run", at, {{"message", e.text}}); break;
    case EventKind::Restart:
      instant(e.rank, "restart", "run", at, {{"epoch", e.epoch}, {"step", e.step}, {"restart", e.value}, {"message", e.text}}, 'p');
      break;
    case EventKind::WorldChange:
      instant(e.rank, "world_change", "run", at, {{"world_size", e.value}, {"backend", e.text}}, 'p');
      break;
    case EventKind::CollectiveMismatch: instant(e.rank, "collective_mismatch", "run", at, {{"neighbour", e.src}}, 'p'); break;
    default: break;
  }
}

void ChromeTraceWriter::State::collective_end(const Event& e) {
  const RankKey key{e.rank, e.collective_id};
  Collective c = collectives[key];
  collectives.erase(key);
  if (e.t_begin_ns != 0 && e.t_end_ns != 0) c.begin_ns = e.t_begin_ns;
  c.end_ns = event_end_ns(e);
  span(e.rank, kTraceCommunicationTid, collective_name(c), "collective", c.begin_ns, c.end_ns,
       {{"collective_id", e.collective_id}, {"bucket", c.bucket}, {"bytes", c.bytes}, {"algorithm", c.algorithm}});
  flush_transfers(key, &c);
}

// Chunk transfers and gate waits, drawn inside their collective on the receiving rank's
// communication lane. A chunk's t_begin is when the *sender* posted it, which can precede the end
// of the receiver's previous chunk, or even the receiver's own collective begin. Trace viewers
// need the slices of one thread to nest, so each drawn slice starts no earlier than the previous
// one on that lane ended and stays inside its collective (when it ended); the true send time is
// kept in the args and is where the flow arrow starts, on the sender's lane.
void ChromeTraceWriter::State::flush_transfers(RankKey key, const Collective* clip) {
  const auto found = transfers.find(key);
  if (found == transfers.end()) return;
  std::vector<Event> lane = std::move(found->second);
  transfers.erase(found);
  std::stable_sort(lane.begin(), lane.end(), [](const Event& a, const Event& b) { return event_end_ns(a) < event_end_ns(b); });
  const int rank = key.first;
  auto [previous, inserted] = lane_end_ns.try_emplace(rank, INT64_MIN);
  for (const Event& e : lane) {
    int64_t begin = event_begin_ns(e), end = event_end_ns(e);
    if (clip) {
      begin = std::max(begin, clip->begin_ns);
      end = std::min(end, clip->end_ns);
    }
    begin = std::min(std::max(begin, previous->second), end);
    previous->second = end;
    Json args = {{"collective_id", e.collective_id}, {"ring_step", e.ring_step}};
    const bool chunk = e.kind == EventKind::ChunkTransfer;
    if (chunk) {
      args.update({{"chunk", e.chunk}, {"segment", e.segment}, {"src", e.src}, {"dst", e.dst}, {"bytes", e.bytes}});
      if (!e.values.empty()) args["values"] = e.values;
    }
    RecordHead h;
    h.pid = trace_pid(rank);
    h.tid = kTraceCommunicationTid;
    h.at_ns = begin;
    h.end_ns = end;
    h.has_send_posted = chunk;
    h.send_posted_ns = event_begin_ns(e);
    add(h, transfer_name(e), "ring", args);
    if (chunk && e.src >= 0 && e.src != rank) {
      ++flow_id;
      flow('s', e.src, flow_id, event_begin_ns(e));
      // The arrow lands a nanosecond before the slice ends: a viewer binds it to the slice
      // open at that moment, which at the very end may already be the enclosing collective.
      flow('f', rank, flow_id, end > begin ? end - 1 : end);
    }
  }
}

// "rank 2", or "rank 2 (node 1)" when the run spanned nodes.
static std::string process_name(int rank, const std::vector<int>& ranks_per_node) {
  if (ranks_per_node.size() < 2) return fmt::format("rank {}", rank);
  int node = 0;
  for (int first = ranks_per_node[0]; node + 1 < static_cast<int>(ranks_per_node.size()) && rank >= first; )
    first += ranks_per_node[static_cast<size_t>(++node)];
  return fmt::format("rank {} (node {})", rank, node);
}

ChromeTraceWriter::ChromeTraceWriter(std::vector<int> ranks_per_node) : state_(std::make_unique<State>()) {
  state_->ranks_per_node = std::move(ranks_per_node);
}
ChromeTraceWriter::~ChromeTraceWriter() = default;

void ChromeTraceWriter::emit(Event e) {
  State& s = *state_;
  if (event_begin_ns(e) != 0) s.origin_ns = std::min(s.origin_ns, event_begin_ns(e));
  s.ranks.insert(e.rank >= 0 ? e.rank : -1);
  switch (e.kind) {
    case EventKind::StepBegin: s.step_begin_ns[{e.rank, e.step}] = event_begin_ns(e); break;
    case EventKind::StepEnd: s.step_end(e); break;
    case EventKind::CollectiveBegin: {
      Collective& c = s.collectives[{e.rank, e.collective_id}];
      if (c.begin_ns == 0) c.begin_ns = event_begin_ns(e);
      c.algorithm = e.text;
      c.bucket = e.bucket;
      c.bytes = e.bytes;
      break;
    }
    case EventKind::CollectiveEnd: s.collective_end(e); break;
    case EventKind::ChunkTransfer:
    case EventKind::GateWait:
      if (e.kind == EventKind::ChunkTransfer && e.src >= 0) s.ranks.insert(e.src);
      s.transfers[{e.rank, e.collective_id}].push_back(std::move(e));
      break;
    default: s.compute(e); break;
  }
}

void ChromeTraceWriter::write(std::ostream& out) {
  State& s = *state_;
  // What never ended: the collectives as marks, their transfers unclipped.
  for (const auto& [key, c] : s.collectives)
    s.instant(key.first, collective_name(c) + " (unfinished)", "collective", c.begin_ns,
              {{"collective_id", key.second}, {"bucket", c.bucket}, {"bytes", c.bytes}, {"algorithm", c.algorithm}},
              't', kTraceCommunicationTid);
  s.collectives.clear();
  while (!s.transfers.empty()) s.flush_transfers(s.transfers.begin()->first, nullptr);
  if (const std::string failure = s.records.failure(); !failure.empty()) throw Error(failure);

  TraceOut trace(out, s.origin_ns == INT64_MAX ? 0 : s.origin_ns);
  for (int rank : s.ranks) {
    const int pid = trace_pid(rank);
    const std::string name = rank < 0 ? "controller" : process_name(rank, s.ranks_per_node);
    trace.metadata(pid, 0, "process_name", {{"name", name}});
    trace.metadata(pid, 0, "process_sort_index", {{"sort_index", rank >= 0 ? rank : INT_MAX}});
    trace.metadata(pid, kTraceComputeTid, "thread_name", {{"name", "compute"}});
    trace.metadata(pid, kTraceComputeTid, "thread_sort_index", {{"sort_index", 0}});
    trace.metadata(pid, kTraceCommunicationTid, "thread_name", {{"name", "communication"}});
    trace.metadata(pid, kTraceCommunicationTid, "thread_sort_index", {{"sort_index", 1}});
  }
  for (RankSpool::Reader in(s.records, 0); !in.done();) trace.record(read_record(in));
  trace.finish();
}

void ChromeTraceWriter::write(const std::string& path, const char* what) {
  write_spooled_file(state_->records, path, what, [this](std::ostream& out) { write(out); });
}

void write_chrome_trace(const std::vector<Event>& events, std::ostream& out) {
  ChromeTraceWriter writer;
  for (const Event& e : events) writer.emit(e);
  writer.write(out);
}

void write_chrome_trace(const std::vector<Event>& events, const std::string& path) {
  ChromeTraceWriter writer;
  for (const Event& e : events) writer.emit(e);
  writer.write(path);
}

}  // namespace ringlab
