#include "engine/export/metrics_csv.h"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/events/event_time.h"
#include "engine/job/job_config.h"

namespace ringlab {
namespace {

constexpr int kMaxRank = kMaxWorldSize;  // beyond this an event is not a rank's

bool is_span(EventKind kind) {
  return kind == EventKind::Forward || kind == EventKind::Backward || kind == EventKind::OptimizerStep ||
         kind == EventKind::CollectiveEnd;
}

}  // namespace

void MetricsCsvWriter::emit(Event e) {
  if (is_restart_marker(e)) return rewind(e.step);
  if (e.rank < 0 || e.rank >= kMaxRank) return;
  Lane& l = lane(e.rank);
  switch (e.kind) {
    case EventKind::StepBegin:
      close_row(e.rank, l);
      l.open = true;
      l.row.step = e.step;
      l.row.epoch = e.epoch;
      l.row.begin_ns = event_begin_ns(e);
      break;
    case EventKind::StepEnd:
      if (!l.open || l.row.step != e.step) {  // a step whose beginning was not seen
        close_row(e.rank, l);
        l.open = true;
        l.row.step = e.step;
        l.row.begin_ns = e.t_end_ns != 0 ? e.t_begin_ns : 0;
      }
      l.row.end_ns = event_end_ns(e);
      l.row.epoch = e.epoch;
      l.row.loss = e.value;
      l.row.has_loss = !is_joined_step(e);
      l.ended = true;
      break;
    case EventKind::CollectiveBegin: l.collective_begin_ns[e.collective_id] = event_begin_ns(e); break;
    case EventKind::RunEnd:
    case EventKind::Error:
    case EventKind::TornDown: close_row(e.rank, l); break;
    default:
      if (is_span(e.kind)) add_span(l, e);
      break;
  }
}

// A span counts toward the open step when it names that step, or names none and began inside
// it (an unnamed span between two steps belongs to neither).
void MetricsCsvWriter::add_span(Lane& l, const Event& e) {
  int64_t begin = event_begin_ns(e);
  if (e.kind == EventKind::CollectiveEnd) {
    // A collective's span is on its CollectiveEnd; its begin time may be on the CollectiveBegin.
    const auto it = l.collective_begin_ns.find(e.collective_id);
    if (it != l.collective_begin_ns.end()) {
      if (e.t_end_ns != 0 && e.t_begin_ns == 0) begin = it->second;
      l.collective_begin_ns.erase(it);
    }
  }
  if (!l.open) return;
  const bool inside = e.step >= 0 ? e.step == l.row.step
                                  : begin >= l.row.begin_ns && (!l.ended || begin <= l.row.end_ns);
  if (!inside) return;
  // Only the part within the step's time: Join's all-reduce of who still has data runs between
  // two steps and names the one before it.
  const int64_t from = l.row.begin_ns > 0 ? std::max(begin, l.row.begin_ns) : begin;
  const int64_t to = l.ended ? std::min(event_end_ns(e), l.row.end_ns) : event_end_ns(e);
  const int64_t duration = std::max<int64_t>(0, to - from);
  switch (e.kind) {
    case EventKind::Forward: l.row.forward_ns += duration; break;
    case EventKind::Backward: l.row.backward_ns += duration; break;
    case EventKind::OptimizerStep: l.row.optimizer_ns += duration; break;
    default: l.row.comm_ns += duration; break;
  }
}

void MetricsCsvWriter::close_row(int rank, Lane& l) {
  if (l.open && l.ended) rows_.append(rank, &l.row, sizeof l.row);
  l.row = Row{};
  l.open = l.ended = false;
}

// The group restarts from the checkpoint at `step`: the rows from there on will be done again.
// (A row that ended but was not closed yet, because its rank died before the next step began,
// is kept like the others if it is before the checkpoint.) After a failed write the rows are
// not kept any more; write() reports it.
void MetricsCsvWriter::rewind(int64_t step) {
  if (!rows_.failure().empty()) return;
  for (auto& [rank, l] : lanes_) {
    close_row(rank, l);
    l.collective_begin_ns.clear();
    uint64_t keep = rows_.size(rank);
    Row row;
    try {
      // A rank's rows are in step order, so those to drop are at the end.
      while (keep >= sizeof row) {
        rows_.read(rank, keep - sizeof row, &row, sizeof row);
        if (row.step < step) break;
        keep -= sizeof row;
      }
    } catch (const Error&) {
      return;  // a write failed: the spool keeps the reason and write() reports it
    }
    rows_.truncate(rank, keep);
  }
}

void MetricsCsvWriter::write(std::ostream& out) {
  for (auto& [rank, l] : lanes_) close_row(rank, l);
  if (const std::string failure = rows_.failure(); !failure.empty()) throw Error(failure);
  out << kMetricsCsvHeader << '\n';
  for (const int rank : rows_.ranks()) {
    RankSpool::Reader in(rows_, rank);
    while (!in.done()) {
      const Row row = in.read<Row>();
      // A diverged step's nan has no sign ("-nan" is C's; Python and pandas write and read "nan").
      const std::string loss = row.has_loss ? fmt::format("{:.9g}", std::isnan(row.loss) ? NAN : row.loss) : "";
      out << fmt::format("{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f}\n", rank, row.epoch, row.step, loss,
                         std::max<int64_t>(0, row.end_ns - row.begin_ns) / 1e3, row.forward_ns / 1e3,
                         row.backward_ns / 1e3, row.comm_ns / 1e3, row.optimizer_ns / 1e3);
    }
  }
}

void MetricsCsvWriter::write(const std::string& path, const char* what) {
  write_spooled_file(rows_, path, what, [this](std::ostream& out) { write(out); });
}

void write_metrics_csv(const std::vector<Event>& events, std::ostream& out) {
  MetricsCsvWriter writer;
  for (const Event& e : events) writer.emit(e);
  writer.write(out);
}

void write_metrics_csv(const std::vector<Event>& events, const std::string& path) {
  MetricsCsvWriter writer;
  for (const Event& e : events) writer.emit(e);
  writer.write(path);
}

}  // namespace ringlab
