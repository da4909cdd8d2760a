#include "engine/runtime/metrics_csv.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>
#include <map>
#include <utility>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/runtime/event_time.h"

namespace ringlab {
namespace {

struct StepRow {
  int32_t epoch = -1;
  double loss = 0;
  int64_t begin_ns = 0, end_ns = 0;
  int64_t forward_ns = 0, backward_ns = 0, comm_ns = 0, optimizer_ns = 0;
  bool ended = false;
};

using Rows = std::map<std::pair<int, int64_t>, StepRow>;  // (rank, step) -> row

Rows collect_steps(const std::vector<Event>& events) {
  Rows rows;
  for (const Event& e : events) {
    if (e.kind == EventKind::StepBegin) {
      StepRow& row = rows[{e.rank, e.step}];
      row.begin_ns = event_begin_ns(e);
      row.epoch = e.epoch;
    } else if (e.kind == EventKind::StepEnd) {
      StepRow& row = rows[{e.rank, e.step}];
      if (row.begin_ns == 0 && e.t_end_ns != 0) row.begin_ns = e.t_begin_ns;
      row.end_ns = event_end_ns(e);
      row.epoch = e.epoch;
      row.loss = e.value;
      row.ended = true;
    }
  }
  return rows;
}

// Each rank's steps ordered by start time, to find the step a span without a step number is in.
struct StepIndex {
  std::map<int, std::vector<std::pair<int64_t, StepRow*>>> by_rank;

  explicit StepIndex(Rows& rows) {
    for (auto& [key, row] : rows) by_rank[key.first].emplace_back(row.begin_ns, &row);
    for (auto& [rank, steps] : by_rank) std::sort(steps.begin(), steps.end());
  }

  StepRow* containing(int rank, int64_t at_ns) const {
    const auto lane = by_rank.find(rank);
    if (lane == by_rank.end()) return nullptr;
    const auto& steps = lane->second;
    auto it = std::upper_bound(steps.begin(), steps.end(), std::pair<int64_t, StepRow*>{at_ns, nullptr},
                               [](const auto& a, const auto& b) { return a.first < b.first; });
    if (it == steps.begin()) return nullptr;
    StepRow* row = std::prev(it)->second;
    return at_ns <= row->end_ns ? row : nullptr;
  }
};

// The step an event belongs to: the one it names, else the one of its rank whose span holds it.
StepRow* find_step(Rows& rows, const StepIndex& index, const Event& e, int64_t at_ns) {
  if (e.step >= 0) {
    auto it = rows.find({e.rank, e.step});
    if (it != rows.end()) return &it->second;
  }
  return index.containing(e.rank, at_ns);
}

void add_spans(Rows& rows, const std::vector<Event>& events) {
  const StepIndex index(rows);
  // A collective's span is on its CollectiveEnd; its begin time may be on the CollectiveBegin.
  std::map<std::pair<int, int64_t>, int64_t> collective_begin;
  for (const Event& e : events)
    if (e.kind == EventKind::CollectiveBegin)
      collective_begin.emplace(std::pair{e.rank, e.collective_id}, event_begin_ns(e));
  for (const Event& e : events) {
    int64_t begin = event_begin_ns(e);
    if (e.kind == EventKind::CollectiveEnd && e.t_end_ns != 0 && e.t_begin_ns == 0) {
      auto it = collective_begin.find({e.rank, e.collective_id});
      if (it != collective_begin.end()) begin = it->second;
    }
    const int64_t duration = event_end_ns(e) - begin;
    int64_t StepRow::*column = nullptr;
    switch (e.kind) {
      case EventKind::Forward: column = &StepRow::forward_ns; break;
      case EventKind::Backward: column = &StepRow::backward_ns; break;
      case EventKind::OptimizerStep: column = &StepRow::optimizer_ns; break;
      case EventKind::CollectiveEnd: column = &StepRow::comm_ns; break;
      default: continue;
    }
    if (StepRow* row = find_step(rows, index, e, begin)) row->*column += std::max<int64_t>(0, duration);
  }
}

}  // namespace

void write_metrics_csv(const std::vector<Event>& events, std::ostream& out) {
  Rows rows = collect_steps(events);
  add_spans(rows, events);
  out << kMetricsCsvHeader << '\n';
  for (const auto& [key, row] : rows) {
    if (!row.ended) continue;
    out << fmt::format("{},{},{},{:.9g},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f}\n", key.first, row.epoch,
                       key.second, row.loss, std::max<int64_t>(0, row.end_ns - row.begin_ns) / 1e3,
                       row.forward_ns / 1e3, row.backward_ns / 1e3, row.comm_ns / 1e3, row.optimizer_ns / 1e3);
  }
}

void write_metrics_csv(const std::vector<Event>& events, const std::string& path) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(fmt::format("cannot write the metrics CSV to {}: {}", path, std::strerror(errno)));
  write_metrics_csv(events, file);
  file.flush();
  if (!file) throw Error(fmt::format("writing the metrics CSV to {} failed: {}", path, std::strerror(errno)));
}

}  // namespace ringlab
