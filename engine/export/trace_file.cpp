#include "engine/export/trace_file.h"

#include <fmt/core.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/core/error.h"
#include "engine/core/input_file.h"

namespace ringlab::sim {

namespace {

using nlohmann::json;

class TraceReader {
 public:
  explicit TraceReader(std::string origin) : origin_(std::move(origin)) {}

  std::vector<Event> read(const std::string& text) {
    json doc = parse_json_input(text, origin_);
    const json* list = &doc;
    if (doc.is_object()) {
      if (!doc.contains("traceEvents"))
        throw InputError(fmt::format("{}: not a Chrome trace (no \"traceEvents\")", origin_));
      list = &doc["traceEvents"];
    }
    if (!list->is_array()) throw InputError(fmt::format("{}: \"traceEvents\" must be an array", origin_));
    for (size_t i = 0; i < list->size(); ++i) read_entry((*list)[i], i);
    if (events_.empty())
      throw InputError(fmt::format("{}: no ringlab events in the trace (no event has args.kind)", origin_));
    return std::move(events_);
  }

 private:
  std::string where(size_t index) const { return fmt::format("{}: traceEvents[{}]", origin_, index); }

  double number(const json& object, const char* key, size_t index) const {
    const json& v = object[key];
    if (!v.is_number()) throw InputError(fmt::format("{}: \"{}\" must be a number, got {}", where(index), key, v.dump()));
    const double d = v.get<double>();
    if (!std::isfinite(d)) throw InputError(fmt::format("{}: \"{}\" is not finite", where(index), key));
    return d;
  }

  template <typename Int>
  void optional_int(const json& args, const char* key, size_t index, Int& field) const {
    if (!args.contains(key) || args[key].is_null()) return;
    const double d = number(args, key, index);
    if (d != std::floor(d) || d < static_cast<double>(std::numeric_limits<Int>::min()) ||
        d > static_cast<double>(std::numeric_limits<Int>::max()))
      throw InputError(fmt::format("{}: args.{} must be a whole number in range, got {}", where(index), key, d));
    field = static_cast<Int>(d);
  }

  static std::optional<EventKind> kind_named(const std::string& name) {
    // Every kind the enum may hold (it grows over time); to_string names the unknown "unknown".
    for (int k = 0; k < 256; ++k)
      if (name != "unknown" && name == to_string(static_cast<EventKind>(k))) return static_cast<EventKind>(k);
    if (name == "step") return EventKind::StepEnd;              // a span over a whole step
    if (name == "collective") return EventKind::CollectiveEnd;  // a span over a whole collective
    return std::nullopt;
  }

  // The writer's layout: the kind follows from the category and the name.
  static std::optional<EventKind> kind_from_layout(const std::string& cat, const std::string& name, bool span) {
    if (cat == "step" && span) return EventKind::StepEnd;
    if (cat == "compute") {
      if (name == "forward") return EventKind::Forward;
      if (name == "backward") return EventKind::Backward;
      if (name == "optimizer step") return EventKind::OptimizerStep;
    }
    if (cat == "ddp" && name == "bucket ready") return EventKind::BucketReady;
    if (cat == "collective") return span ? EventKind::CollectiveEnd : EventKind::CollectiveBegin;
    if (cat == "ring" && name != "gate wait") return EventKind::ChunkTransfer;
    return std::nullopt;
  }

  static std::string text_of(const json& entry, const char* key) {
    return entry.contains(key) && entry[key].is_string() ? entry[key].get<std::string>() : "";
  }

  int8_t phase_of(const json& args, const std::string& name, size_t index) const {
    if (!args.contains("phase") || args["phase"].is_null()) {
      if (name == "reduce-scatter") return static_cast<int8_t>(RingPhase::ReduceScatter);
      if (name == "all-gather") return static_cast<int8_t>(RingPhase::AllGather);
      return -1;
    }
    const json& v = args["phase"];
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "reduce_scatter" || s == "reduce-scatter") return 0;
      if (s == "all_gather" || s == "all-gather") return 1;
      if (s == "none" || s.empty()) return -1;
      throw InputError(fmt::format("{}: unknown args.phase '{}'", where(index), s));
    }
    int8_t phase = -1;
    optional_int(args, "phase", index, phase);
    return phase;
  }

  // The rank: args.rank, else the writer's pid = rank + 1; -1 for the controller or no rank.
  int rank_of(const json& entry, const json& args, size_t index) const {
    int32_t rank = -1;
    if (args.contains("rank")) {
      optional_int(args, "rank", index, rank);
      if (rank < 0) throw InputError(fmt::format("{}: args.rank {} is negative", where(index), rank));
      return rank;
    }
    if (entry.contains("pid") && entry["pid"].is_number_integer()) {
      const int64_t pid = entry["pid"].get<int64_t>();
      if (pid >= 1 && pid < kControllerPid) return static_cast<int>(pid - 1);
    }
    return -1;
  }

  void read_entry(const json& entry, size_t index) {
    if (!entry.is_object()) throw InputError(fmt::format("{} must be an object", where(index)));
    const std::string ph = text_of(entry, "ph");
    if (ph != "X" && ph != "i" && ph != "I") return;  // metadata, flows, counters
    static const json no_args = json::object();
    const json& args = entry.contains("args") && entry["args"].is_object() ? entry["args"] : no_args;
    const std::string name = text_of(entry, "name");
    std::optional<EventKind> kind;
    if (args.contains("kind")) {
      if (!args["kind"].is_string()) throw InputError(fmt::format("{}: args.kind must be a string", where(index)));
      kind = kind_named(args["kind"].get<std::string>());
      if (!kind) throw InputError(fmt::format("{}: unknown args.kind '{}'", where(index), args["kind"].get<std::string>()));
    } else {
      kind = kind_from_layout(text_of(entry, "cat"), name, ph == "X");
    }
    if (!kind) return;
    Event e;
    e.kind = *kind;
    e.rank = rank_of(entry, args, index);
    if (e.rank < 0) return;  // the controller's own marks
    read_times(entry, args, index, ph == "X", e);
    optional_int(args, "step", index, e.step);
    optional_int(args, "epoch", index, e.epoch);
    optional_int(args, "collective_id", index, e.collective_id);
    optional_int(args, "bucket", index, e.bucket);
    optional_int(args, "ring_step", index, e.ring_step);
    optional_int(args, "chunk", index, e.chunk);
    optional_int(args, "segment", index, e.segment);
    optional_int(args, "src", index, e.src);
    optional_int(args, "dst", index, e.dst);
    optional_int(args, "bytes", index, e.bytes);
    if (e.bytes < 0) throw InputError(fmt::format("{}: args.bytes is negative ({})", where(index), e.bytes));
    e.phase = phase_of(args, name, index);
    if (e.kind == EventKind::ChunkTransfer && e.src < 0)
      throw InputError(fmt::format("{}: a chunk needs args.src (the sending rank)", where(index)));
    events_.push_back(std::move(e));
  }

  // ts (and ts + dur) in microseconds. A chunk's slice may be drawn later than its t_begin;
  // args.send_posted_us keeps the real moment, and that is what replay needs.
  void read_times(const json& entry, const json& args, size_t index, bool span, Event& e) const {
    if (!entry.contains("ts")) throw InputError(fmt::format("{}: \"ts\" is missing", where(index)));
    double begin = number(entry, "ts", index);
    double end = begin;
    if (span) {
      if (!entry.contains("dur")) throw InputError(fmt::format("{}: complete event without \"dur\"", where(index)));
      const double dur = number(entry, "dur", index);
      if (dur < 0) throw InputError(fmt::format("{}: \"dur\" is negative ({})", where(index), dur));
      end = begin + dur;
    }
    if (e.kind == EventKind::ChunkTransfer && args.contains("send_posted_us")) {
      begin = number(args, "send_posted_us", index);
      if (begin > end) throw InputError(fmt::format("{}: send_posted_us {} is after the chunk arrived ({})", where(index), begin, end));
    }
    // The writer counts from its earliest event (ts 0), but 0 means "unset" in an Event: shift
    // every time by one second.
    e.t_begin_ns = kShiftNs + std::llround(begin * 1000.0);
    e.t_end_ns = kShiftNs + std::llround(end * 1000.0);
  }

  static constexpr int64_t kControllerPid = 1'000'000;  // the writer's process for controller marks
  static constexpr int64_t kShiftNs = 1'000'000'000;
  std::string origin_;
  std::vector<Event> events_;
};

}  // namespace

std::vector<Event> parse_chrome_trace(const std::string& text, const std::string& origin) {
  return TraceReader(origin).read(text);
}

std::vector<Event> load_chrome_trace(const std::string& path) {
  // Four times the trace of 2 ranks x 20,000 steps (67 MB); parsed whole, it takes ~10x in memory.
  constexpr uint64_t kMaxTraceFileBytes = uint64_t{256} << 20;
  return parse_chrome_trace(read_input_file(path, "trace file", kMaxTraceFileBytes), path);
}

}  // namespace ringlab::sim
