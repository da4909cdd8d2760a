#include "engine/sim/trace_replay.h"

#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "engine/core/error.h"
#include "engine/sim/replay_graph.h"

namespace ringlab::sim {

namespace {

// Re-times every node: start = latest (dependency moment + kept offset), end = start + duration,
// where only the durations of transfers (and of collectives without chunk detail) change.
class Retimer {
 public:
  Retimer(const ReplayGraph& graph, const LinkParams& link, const ReplayOptions& options)
      : graph_(graph), link_(link), options_(options), start_(graph.nodes.size()), end_(graph.nodes.size()),
        state_(graph.nodes.size(), kUnvisited) {}

  void run() {
    for (int i = 0; i < static_cast<int>(graph_.nodes.size()); ++i)
      if (state_[i] == kUnvisited) visit(i);
  }

  double start(int node) const { return start_[node]; }
  double end(int node) const { return end_[node]; }

 private:
  enum : uint8_t { kUnvisited, kOpen, kDone };

  // Depth-first, with an explicit stack: a trace of many steps has long dependency chains.
  void visit(int root) {
    std::vector<std::pair<int, size_t>> stack{{root, 0}};
    state_[root] = kOpen;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const auto& deps = graph_.nodes[node].deps;
      if (next < deps.size()) {
        const int dep = deps[next++].node;
        if (state_[dep] == kOpen) {
          throw InputError(fmt::format(
              "rank {}: the trace's events depend on each other in a circle (timestamps contradict "
              "each other near t = {:.6f} s)", graph_.nodes[node].rank, graph_.nodes[node].t0));
        }
        if (state_[dep] == kUnvisited) {
          state_[dep] = kOpen;
          stack.push_back({dep, 0});
        }
        continue;
      }
      settle(node);
      state_[node] = kDone;
      stack.pop_back();
    }
  }

  double moment(const ReplayDep& d) const {
    switch (d.anchor) {
      case ReplayAnchor::Start: return start_[d.node];
      case ReplayAnchor::End: return end_[d.node];
      case ReplayAnchor::WireFree: return start_[d.node] + graph_.nodes[d.node].bytes * link_.beta_s_per_byte;
    }
    return end_[d.node];
  }

  double duration(const ReplayNode& n) const {
    switch (n.kind) {
      case ReplayNodeKind::Compute: return n.t1 - n.t0;
      case ReplayNodeKind::Transfer:
        return link_.alpha_s + n.bytes * link_.beta_s_per_byte + (n.reduces ? n.bytes * link_.gamma_s_per_byte : 0.0);
      case ReplayNodeKind::CollectiveEnd:
        return n.modelled ? predict_allreduce(options_.model, world(), n.bytes, link_, options_.model_options) : 0.0;
      default: return 0.0;
    }
  }

  int64_t world() const { return options_.world_size > 0 ? options_.world_size : graph_.world_size; }

  void settle(int node) {
    const ReplayNode& n = graph_.nodes[node];
    double t = n.deps.empty() ? n.t0 : -std::numeric_limits<double>::infinity();
    for (const ReplayDep& d : n.deps) t = std::max(t, moment(d) + d.offset_s);
    start_[node] = t;
    end_[node] = t + duration(n);
  }

  const ReplayGraph& graph_;
  const LinkParams& link_;
  const ReplayOptions& options_;
  std::vector<double> start_, end_;
  std::vector<uint8_t> state_;
};

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

double RankReplay::mean_measured_step_s() const { return mean(measured_step_s); }
double RankReplay::mean_replayed_step_s() const { return mean(replayed_step_s); }

ReplayResult replay_trace(const std::vector<Event>& events, const LinkParams& link, const ReplayOptions& options) {
  validate_link(link);
  if (options.world_size < 0) throw InputError(fmt::format("world size must be >= 1; got {}", options.world_size));
  const ReplayGraph graph = build_replay_graph(events);
  Retimer retime(graph, link, options);
  retime.run();

  ReplayResult out;
  out.world_size = options.world_size > 0 ? options.world_size : graph.world_size;
  out.transfers = graph.transfers;
  std::map<int, size_t> slot;
  constexpr double inf = std::numeric_limits<double>::infinity();
  double first = inf, last = -inf, first_r = inf, last_r = -inf;
  for (const auto& [rank, nodes] : graph.nodes_of_rank) {
    RankReplay r;
    r.rank = rank;
    double a = inf, b = -inf, ar = inf, br = -inf;
    for (int id : nodes) {
      a = std::min(a, graph.nodes[id].t0);
      b = std::max(b, graph.nodes[id].t1);
      ar = std::min(ar, retime.start(id));
      br = std::max(br, retime.end(id));
    }
    r.measured_span_s = b - a;
    r.replayed_span_s = br - ar;
    first = std::min(first, a), last = std::max(last, b);
    first_r = std::min(first_r, ar), last_r = std::max(last_r, br);
    slot[rank] = out.ranks.size();
    out.ranks.push_back(r);
  }
  for (const ReplayStepMarks& s : graph.steps) {
    RankReplay& r = out.ranks[slot[s.rank]];
    r.steps.push_back(s.step);
    r.measured_step_s.push_back(graph.nodes[s.end_node].t1 - graph.nodes[s.begin_node].t0);
    r.replayed_step_s.push_back(retime.end(s.end_node) - retime.start(s.begin_node));
  }
  for (const ReplayCollective& c : graph.collectives) {
    RankReplay& r = out.ranks[slot[c.rank]];
    r.measured_comm_s += graph.nodes[c.end_node].t1 - graph.nodes[c.begin_node].t0;
    r.replayed_comm_s += retime.end(c.end_node) - retime.start(c.begin_node);
    if (graph.nodes[c.end_node].modelled) ++out.modelled_collectives;
  }
  out.measured_span_s = last - first;
  out.replayed_span_s = last_r - first_r;
  return out;
}

}  // namespace ringlab::sim
