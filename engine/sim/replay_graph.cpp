#include "engine/sim/replay_graph.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "engine/core/error.h"

namespace ringlab::sim {

namespace {

// A chunk's place in its collective: reduce-scatter steps come before all-gather steps.
using RingKey = std::pair<int, int>;  // (phase, ring_step)

struct TransferRef {
  RingKey key;
  double t0 = 0;
  int node = 0;
};

// What one rank's events turned into, before the dependencies are drawn.
struct RankNodes {
  std::vector<int> lane;             // compute and step marks, by start time
  std::vector<int> ready;            // BucketReady instants, by time
  std::vector<int32_t> ready_bucket; // parallel to `ready`
  std::map<int64_t, int> begin_of;   // collective_id -> CollectiveBegin node
  std::map<int64_t, int> end_of;     // collective_id -> CollectiveEnd node
  std::map<int64_t, int32_t> bucket_of;
  std::map<int64_t, double> bytes_of;
  std::map<std::pair<int64_t, int32_t>, std::vector<TransferRef>> transfers;  // (collective, segment)
  std::map<int64_t, int> step_begin, step_end;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(const std::vector<Event>& events) : events_(events) {}

  ReplayGraph build() {
    find_origin();
    for (const Event& e : events_) add_event(e);
    if (graph_.nodes.empty())
      throw InputError("the trace holds nothing to replay (no forward, backward, optimizer, collective or chunk events)");
    for (auto& [rank, r] : ranks_) sort_rank(r);
    for (auto& [rank, r] : ranks_) split_waiting_spans(rank, r);
    for (auto& [rank, r] : ranks_) {
      link_lane(r);
      link_ready(r);
      link_collective_begins(r);
      link_transfers(rank, r);
      link_collective_ends(r);
      record_marks(rank, r);
    }
    if (graph_.world_size <= 0) graph_.world_size = ranks_.empty() ? 1 : ranks_.rbegin()->first + 1;
    return std::move(graph_);
  }

 private:
  static bool on_timeline(EventKind kind) {
    switch (kind) {
      case EventKind::Forward: case EventKind::Backward: case EventKind::OptimizerStep:
      case EventKind::StepBegin: case EventKind::StepEnd: case EventKind::BucketReady:
      case EventKind::CollectiveBegin: case EventKind::CollectiveEnd: case EventKind::ChunkTransfer:
        return true;
      default:
        return false;
    }
  }

  // Times become seconds from the run's first timeline event, which keeps nanosecond precision.
  void find_origin() {
    origin_ns_ = std::numeric_limits<int64_t>::max();
    for (const Event& e : events_)
      if (on_timeline(e.kind)) origin_ns_ = std::min(origin_ns_, begin_ns(e));
    if (origin_ns_ == std::numeric_limits<int64_t>::max()) origin_ns_ = 0;
  }

  // An instant may carry its time in either field; 0 means "not set" (as the exporters read it).
  static int64_t begin_ns(const Event& e) { return e.t_begin_ns != 0 ? e.t_begin_ns : e.t_end_ns; }
  static int64_t end_ns(const Event& e) { return std::max(begin_ns(e), e.t_end_ns != 0 ? e.t_end_ns : e.t_begin_ns); }
  static bool is_span(const Event& e) { return e.t_begin_ns != 0 && e.t_end_ns > e.t_begin_ns; }

  double seconds(int64_t ns) const { return static_cast<double>(ns - origin_ns_) * 1e-9; }
  // The moment an event marks: its end when it has one, else its start.
  double moment(const Event& e) const { return seconds(end_ns(e)); }

  int add(ReplayNodeKind kind, int rank, double t0, double t1, double bytes = 0) {
    ReplayNode node;
    node.kind = kind;
    node.rank = rank;
    node.t0 = t0;
    node.t1 = std::max(t0, t1);
    node.bytes = bytes;
    graph_.nodes.push_back(node);
    const int id = static_cast<int>(graph_.nodes.size()) - 1;
    graph_.nodes_of_rank[rank].push_back(id);
    return id;
  }

  void add_event(const Event& e) {
    RankNodes& r = ranks_[e.rank];
    const double begin = seconds(begin_ns(e));
    switch (e.kind) {
      case EventKind::RunBegin:
        if (e.value >= 1) graph_.world_size = static_cast<int64_t>(e.value);
        break;
      case EventKind::Forward:
      case EventKind::Backward:
      case EventKind::OptimizerStep:
        r.lane.push_back(add(ReplayNodeKind::Compute, e.rank, begin, moment(e)));
        break;
      case EventKind::StepBegin:
        r.step_begin[e.step] = add(ReplayNodeKind::Instant, e.rank, begin, begin);
        r.lane.push_back(r.step_begin[e.step]);
        break;
      case EventKind::StepEnd: {
        // A step written as one span (t_begin..t_end) also marks its beginning.
        if (is_span(e) && !r.step_begin.count(e.step)) {
          r.step_begin[e.step] = add(ReplayNodeKind::Instant, e.rank, begin, begin);
          r.lane.push_back(r.step_begin[e.step]);
        }
        const double end = moment(e);
        r.step_end[e.step] = add(ReplayNodeKind::Instant, e.rank, end, end);
        r.lane.push_back(r.step_end[e.step]);
        break;
      }
      case EventKind::BucketReady:
        r.ready.push_back(add(ReplayNodeKind::BucketReady, e.rank, begin, begin));
        r.ready_bucket.push_back(e.bucket);
        break;
      case EventKind::CollectiveBegin:
        add_collective_begin(r, e, begin);
        break;
      case EventKind::CollectiveEnd: {
        // A collective written as one span also marks its beginning.
        if (!r.begin_of.count(e.collective_id) && is_span(e)) add_collective_begin(r, e, begin);
        const double end = moment(e);
        r.end_of[e.collective_id] = add(ReplayNodeKind::CollectiveEnd, e.rank, end, end);
        if (e.bytes > 0) r.bytes_of[e.collective_id] = static_cast<double>(e.bytes);
        break;
      }
      case EventKind::ChunkTransfer: {
        const int node = add(ReplayNodeKind::Transfer, e.rank, begin, moment(e), static_cast<double>(e.bytes));
        graph_.nodes[node].reduces = e.phase == static_cast<int8_t>(RingPhase::ReduceScatter);
        graph_.nodes[node].deps.reserve(3);
        r.transfers[{e.collective_id, e.segment}].push_back({{e.phase, e.ring_step}, begin, node});
        sender_of_[node] = e.src;
        ++graph_.transfers;
        break;
      }
      default:
        break;  // sampler shards, logs, gate waits: not part of the timeline being re-timed
    }
  }

  void add_collective_begin(RankNodes& r, const Event& e, double begin) {
    r.begin_of[e.collective_id] = add(ReplayNodeKind::CollectiveBegin, e.rank, begin, begin);
    r.bucket_of[e.collective_id] = e.bucket;
    if (e.bytes > 0) r.bytes_of[e.collective_id] = static_cast<double>(e.bytes);
  }

  void sort_rank(RankNodes& r) {
    auto by_start = [&](int a, int b) { return graph_.nodes[a].t0 < graph_.nodes[b].t0; };
    std::stable_sort(r.lane.begin(), r.lane.end(), by_start);
    std::vector<size_t> order(r.ready.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return by_start(r.ready[a], r.ready[b]); });
    std::vector<int> ready;
    std::vector<int32_t> bucket;
    for (size_t i : order) {
      ready.push_back(r.ready[i]);
      bucket.push_back(r.ready_bucket[i]);
    }
    r.ready = std::move(ready);
    r.ready_bucket = std::move(bucket);
    for (auto& [key, list] : r.transfers)
      std::stable_sort(list.begin(), list.end(), [](const TransferRef& a, const TransferRef& b) {
        return std::tie(a.key, a.t0) < std::tie(b.key, b.t0);
      });
  }

  // A compute span may end by waiting for communication: ringlab's trainer times DDP's
  // backward() and finish() as one Backward span, and the last bucket is all-reduced inside it,
  // after the last gradient is ready. Such a span (one inside which a collective of this rank
  // ends) is split in two: its compute, up to the last moment it made something ready (its
  // last BucketReady, else the last collective it began), and an instant at its measured end,
  // which the lane then makes wait for those collectives. Otherwise the communication inside it
  // would be kept as if it were compute, whatever the link.
  void split_waiting_spans(int rank, RankNodes& r) {
    std::vector<double> ends, issued;
    for (const auto& [cid, node] : r.end_of) ends.push_back(graph_.nodes[node].t1);
    for (const auto& [cid, node] : r.begin_of) issued.push_back(graph_.nodes[node].t0);
    for (int node : r.ready) issued.push_back(graph_.nodes[node].t0);
    std::vector<int> lane;
    for (int id : r.lane) {
      lane.push_back(id);
      const ReplayNode n = graph_.nodes[id];
      if (n.kind != ReplayNodeKind::Compute) continue;
      const bool waits = std::any_of(ends.begin(), ends.end(), [&](double t) { return t > n.t0 && t <= n.t1; });
      double last_issued = -std::numeric_limits<double>::infinity();
      for (double t : issued)
        if (t >= n.t0 && t < n.t1) last_issued = std::max(last_issued, t);
      if (!waits || !std::isfinite(last_issued)) continue;
      graph_.nodes[id].t1 = last_issued;
      lane.push_back(add(ReplayNodeKind::Instant, rank, n.t1, n.t1));
    }
    r.lane = std::move(lane);
  }

  double measured(const ReplayDep& d) const {
    const ReplayNode& n = graph_.nodes[d.node];
    return d.anchor == ReplayAnchor::Start ? n.t0 : n.t1;
  }

  // The node started some time after the latest of its dependencies; that time (overhead, not
  // waiting) is kept whichever dependency ends last in the replay.
  void share_offset(int id) {
    ReplayNode& n = graph_.nodes[id];
    if (n.deps.empty()) return;
    double latest = -std::numeric_limits<double>::infinity();
    for (const ReplayDep& d : n.deps) latest = std::max(latest, measured(d));
    const double offset = std::max(0.0, n.t0 - latest);
    for (ReplayDep& d : n.deps) d.offset_s = offset;
  }

  // Where a moment t sits on a rank's compute lane: inside the last span that started before it
  // (t after that span's start), or after the last node that started before it.
  bool lane_anchor(const RankNodes& r, double t, ReplayDep& dep) const {
    auto it = std::lower_bound(r.lane.begin(), r.lane.end(), t,
                               [&](int node, double value) { return graph_.nodes[node].t0 < value; });
    if (it == r.lane.begin()) return false;
    const ReplayNode& n = graph_.nodes[*(it - 1)];
    dep.node = *(it - 1);
    if (n.kind == ReplayNodeKind::Compute && t <= n.t1) {
      dep.anchor = ReplayAnchor::Start;
      dep.offset_s = t - n.t0;
    } else {
      dep.anchor = ReplayAnchor::End;
      dep.offset_s = std::max(0.0, t - n.t1);
    }
    return true;
  }

  std::vector<int> collective_ends_by_time(const RankNodes& r) const {
    std::vector<int> ends;
    for (const auto& [cid, node] : r.end_of) ends.push_back(node);
    std::stable_sort(ends.begin(), ends.end(), [&](int a, int b) { return graph_.nodes[a].t1 < graph_.nodes[b].t1; });
    return ends;
  }

  // Program order on the compute lane, and the communication compute waited for: every
  // collective that had ended before a lane node started is a dependency of the first such node
  // (later nodes inherit it through program order). This is how the optimizer waits for DDP's
  // last bucket, and how a faster link lets it start sooner.
  void link_lane(RankNodes& r) {
    const std::vector<int> ends = collective_ends_by_time(r);
    size_t next_end = 0;
    for (size_t i = 0; i < r.lane.size(); ++i) {
      ReplayNode& n = graph_.nodes[r.lane[i]];
      if (i > 0) n.deps.push_back({r.lane[i - 1], ReplayAnchor::End, 0});
      for (; next_end < ends.size() && graph_.nodes[ends[next_end]].t1 <= n.t0; ++next_end)
        n.deps.push_back({ends[next_end], ReplayAnchor::End, 0});
      share_offset(r.lane[i]);
    }
  }

  // A bucket is ready at the same point of the backward pass, whatever the link.
  void link_ready(RankNodes& r) {
    for (int node : r.ready) {
      ReplayDep dep;
      if (lane_anchor(r, graph_.nodes[node].t0, dep)) graph_.nodes[node].deps.push_back(dep);
    }
  }

  int ready_event_for(const RankNodes& r, int32_t bucket, double t) const {
    if (bucket < 0) return -1;
    int found = -1;
    for (size_t i = 0; i < r.ready.size() && graph_.nodes[r.ready[i]].t0 <= t; ++i)
      if (r.ready_bucket[i] == bucket) found = r.ready[i];
    return found;
  }

  // A collective starts when its bucket is ready and the previous collective on this rank is
  // done (one collective at a time on the link). Without a BucketReady event, the moment it was
  // issued on the compute lane stands in for readiness.
  void link_collective_begins(RankNodes& r) {
    std::vector<std::pair<double, int64_t>> order;
    for (const auto& [cid, node] : r.begin_of) order.push_back({graph_.nodes[node].t0, cid});
    std::stable_sort(order.begin(), order.end());
    int previous_end = -1;
    for (const auto& [t, cid] : order) {
      const int id = r.begin_of[cid];
      ReplayNode& n = graph_.nodes[id];
      const bool queued_behind = previous_end >= 0 && graph_.nodes[previous_end].t1 <= t;
      const int ready = ready_event_for(r, r.bucket_of[cid], t);
      if (ready >= 0) {
        n.deps.push_back({ready, ReplayAnchor::End, 0});
        if (queued_behind) n.deps.push_back({previous_end, ReplayAnchor::End, 0});
        share_offset(id);
      } else {
        ReplayDep dep;
        if (lane_anchor(r, t, dep)) n.deps.push_back(dep);
        if (queued_behind) n.deps.push_back({previous_end, ReplayAnchor::End, 0});
      }
      auto end = r.end_of.find(cid);
      previous_end = end != r.end_of.end() ? end->second : -1;
    }
  }

  // How ringlab's ring records a chunk (engine/dist/ring_allreduce.cpp): on the receiving rank,
  // t_begin = when that rank had posted its receive and its own send of the ring step, t_end =
  // when the chunk had arrived (and, in reduce-scatter, been added in). Every rank forwards what
  // it received at the previous step (reduce-scatter passes partial sums on, all-gather finished
  // chunks), so ring step t can be posted only after step t-1 arrived, plus some local work.
  //
  // The sender's side: it posted this chunk after its previous step arrived (its first step,
  // after its collective began), plus some local work. When exactly is bounded twice: by the
  // sender's own event of the same ring step (whose t_begin is the later of its receive and its
  // send being posted) and by this chunk's arrival. The earlier bound is taken: a sender that
  // stalled after sending, before posting its next receive, did not delay this chunk.
  bool sender_post(int src, int64_t cid, int32_t segment, const TransferRef& t, ReplayDep& dep) const {
    auto rank_it = ranks_.find(src);
    if (rank_it == ranks_.end()) return false;
    const RankNodes& s = rank_it->second;
    auto list_it = s.transfers.find({cid, segment});
    const TransferRef* before = nullptr;
    const double arrived = graph_.nodes[t.node].t1;
    double posted = std::min(t.t0, arrived);
    if (list_it != s.transfers.end())
      for (const TransferRef& candidate : list_it->second) {
        if (candidate.key < t.key) before = &candidate;
        if (candidate.key == t.key) posted = std::min(candidate.t0, arrived);
      }
    if (before) {
      dep = {before->node, ReplayAnchor::End, std::max(0.0, posted - graph_.nodes[before->node].t1)};
      return true;
    }
    auto begin = s.begin_of.find(cid);
    if (begin == s.begin_of.end()) return false;
    dep = {begin->second, ReplayAnchor::End, std::max(0.0, posted - graph_.nodes[begin->second].t1)};
    return true;
  }

  // The receiver's side: it was ready for ring step t at its t_begin, some local work after its
  // step t-1 arrived (or after its collective began). The chunk moves once both sides are
  // ready and the link has let the previous chunk through.
  void link_transfers(int rank, RankNodes& r) {
    std::map<int, int> last_on_link;  // src -> previous transfer from it, by post time
    std::vector<std::pair<double, int>> by_post;
    for (auto& [key, list] : r.transfers) {
      const auto [cid, segment] = key;
      for (size_t i = 0; i < list.size(); ++i) {
        const int id = list[i].node;
        std::vector<ReplayDep>& deps = graph_.nodes[id].deps;
        const double ready = list[i].t0;
        if (i > 0) {
          deps.push_back({list[i - 1].node, ReplayAnchor::End, std::max(0.0, ready - graph_.nodes[list[i - 1].node].t1)});
        } else if (r.begin_of.count(cid)) {
          const int begin = r.begin_of[cid];
          deps.push_back({begin, ReplayAnchor::End, std::max(0.0, ready - graph_.nodes[begin].t1)});
        }
        ReplayDep post;
        const int src = sender_of_.at(id);
        if (src >= 0 && src != rank && sender_post(src, cid, segment, list[i], post)) deps.push_back(post);
        by_post.push_back({list[i].t0, id});
      }
    }
    std::stable_sort(by_post.begin(), by_post.end());
    for (const auto& [t, id] : by_post) {
      const int src = sender_of_.at(id);
      auto previous = last_on_link.find(src);
      if (previous != last_on_link.end()) graph_.nodes[id].deps.push_back({previous->second, ReplayAnchor::WireFree, 0});
      last_on_link[src] = id;
    }
  }

  // A collective ends when its last chunk has arrived (plus the measured finishing work), or,
  // recorded without chunks, after the cost model's time for its size.
  void link_collective_ends(RankNodes& r) {
    for (const auto& [cid, end] : r.end_of) {
      ReplayNode& n = graph_.nodes[end];
      for (const auto& [key, list] : r.transfers)
        if (key.first == cid)
          for (const TransferRef& t : list) n.deps.push_back({t.node, ReplayAnchor::End, 0});
      if (!n.deps.empty()) {
        share_offset(end);
        continue;
      }
      auto begin = r.begin_of.find(cid);
      if (begin == r.begin_of.end()) continue;  // an end without a beginning: kept as measured
      n.modelled = true;
      n.bytes = r.bytes_of.count(cid) ? r.bytes_of[cid] : 0.0;
      n.deps.push_back({begin->second, ReplayAnchor::End, 0});
    }
  }

  void record_marks(int rank, const RankNodes& r) {
    for (const auto& [step, begin] : r.step_begin) {
      auto end = r.step_end.find(step);
      if (end != r.step_end.end()) graph_.steps.push_back({rank, step, begin, end->second});
    }
    for (const auto& [cid, begin] : r.begin_of) {
      auto end = r.end_of.find(cid);
      if (end != r.end_of.end()) graph_.collectives.push_back({rank, begin, end->second});
    }
  }

  const std::vector<Event>& events_;
  ReplayGraph graph_;
  std::map<int, RankNodes> ranks_;
  std::map<int, int> sender_of_;  // transfer node -> sending rank
  int64_t origin_ns_ = 0;
};

}  // namespace

ReplayGraph build_replay_graph(const std::vector<Event>& events) { return GraphBuilder(events).build(); }

}  // namespace ringlab::sim
