#include "app/run_report.h"

#include <algorithm>
#include <functional>
#include <utility>
#include <ostream>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/output_file.h"
#include "engine/job/epoch_shape.h"

namespace ringlab::app {
namespace {

// Python's list repr of floats: [1.0, 2.0, 3.0]
std::string python_floats(const std::vector<float>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    std::string x = fmt::format("{}", v[i]);
    if (x.find_first_of(".en") == std::string::npos) x += ".0";
    s += (i ? ", " : "") + x;
  }
  return s + "]";
}

// One array per rank (ranks that reported nothing get an empty one), each filled by `items`.
void write_per_rank(std::ostream& out, const RunResult& r, const std::function<void(int, bool&)>& items) {
  for (int rank = 0; rank < r.rank_count; ++rank) {
    out << (rank ? ",\n [" : "\n [");
    bool first = true;
    if (r.history) items(rank, first);
    out << "]";
  }
}

// The report: `fields`, then the final parameters, and each rank's shards and step losses from the
// run's history (the arrays that grow with the run or the model are streamed, never whole in memory).
void write_report_body(std::ostream& out, const nlohmann::json& fields, const RunResult& r) {
  std::string head = fields.dump(1);
  head.resize(head.size() - 2);  // the object's closing "\n}": the arrays go before it
  out << head << ",\n \"final_parameters\": [";
  for (size_t i = 0; i < r.final_parameters.size(); ++i)
    out << (i ? ", " : "") << nlohmann::json(r.final_parameters[i]).dump();
  out << "],\n \"shards\": [";
  write_per_rank(out, r, [&](int rank, bool& first) {
    r.history->for_each_shard(rank, [&](const std::vector<int64_t>& shard) {
      out << (first ? "\n  " : ",\n  ") << nlohmann::json(shard).dump();
      first = false;
    });
  });
  out << "],\n \"step_loss\": [";
  write_per_rank(out, r, [&](int rank, bool& first) {
    r.history->for_each_step_loss(rank, [&](double loss) {
      out << (first ? "" : ", ") << nlohmann::json(loss).dump();
      first = false;
    });
  });
  out << "]\n}\n";
}

}  // namespace

namespace {

// The seed's lines before its first epoch: its setup, the demo all-reduce, its sampler.
std::string seed_header(const JobConfig& j, const std::vector<float>& demo_output, int64_t batches_per_epoch,
                        int64_t shard_size, const std::vector<int64_t>& first_indices) {
  std::string out;
  out += fmt::format("backend                : {}\n", j.backend);
  out += fmt::format("world_size             : {}\n", j.world_size);
  out += fmt::format("rank of this process   : 0\n");
  out += fmt::format("all-reduce SUM (rank 0): {} (sum over all ranks)\n", python_floats(demo_output));
  out += "\n";
  out += fmt::format("batches per epoch      : {} ({} sample{}{} / {})\n", batches_per_epoch, shard_size,
                     shard_size == 1 ? "" : "s", j.world_size > 1 ? " per rank" : "", j.batch_size);
  if (!first_indices.empty()) out += fmt::format("epoch-0 indices, batch 1: [{}] ...\n", fmt::join(first_indices, ", "));
  return out;
}

std::string epoch_line(size_t epoch, double mse) {
  return fmt::format("epoch {} done, MSE over the whole dataset: {:.6f}\n", epoch + 1, mse);
}

constexpr size_t kIndicesShown = 8;

}  // namespace

std::string format_seed_report(const RunResult& r) {
  const std::vector<int64_t> shard = r.history ? r.history->first_shard(0) : std::vector<int64_t>{};
  const std::vector<int64_t> first(shard.begin(), shard.begin() + std::min(kIndicesShown, shard.size()));
  // len(sampler), as the script prints it: from the job, so that a run of no epochs (no shard
  // drawn) says the same as one of many.
  std::string out = seed_header(r.job, r.allreduce_demo_output, r.batches_per_epoch, r.samples_per_rank, first);
  for (size_t e = 0; e < r.epoch_mse.size(); ++e) out += epoch_line(e, r.epoch_mse[e]);
  if (r.ok) out += seed_footer();
  return out;
}

std::string seed_footer() { return "\ndestroy_process_group  : done\n"; }

LiveReport::LiveReport(const JobConfig& job) : job_(job) {}

void LiveReport::emit(Event event) {
  if (event.rank != 0) return;
  std::lock_guard lock(mutex_);
  if (event.kind == EventKind::CollectiveEnd && event.text == "demo") demo_output_ = event.values;
  if (event.kind == EventKind::SamplerShard && event.epoch == 0 && first_piece(event)) {
    shard_size_ = payload_size(event);
    first_indices_.assign(event.indices.begin(),
                          event.indices.begin() + std::min(kIndicesShown, event.indices.size()));
  }
  if (event.kind != EventKind::EpochEnd) return;
  if (!header_done_) {
    pending_ += seed_header(job_, demo_output_, epoch_shape(job_).steps, shard_size_, first_indices_);
    header_done_ = true;
  }
  pending_ += epoch_line(static_cast<size_t>(std::max(0, event.epoch)), event.value);
}

std::string LiveReport::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(pending_, {});
}

bool LiveReport::started() const {
  std::lock_guard lock(mutex_);
  return header_done_;
}

void write_report_json(const RunResult& r, const std::string& path) {
  nlohmann::json j;
  const JobConfig& c = r.job;
  j["ok"] = r.ok;
  if (!r.ok) j["failure"] = r.failure;
  // A report of a run cut short says so: its epochs, steps and parameters are those so far.
  j["interrupted"] = r.interrupted();
  if (r.stop_cause != StopCause::None) j["stopped_by"] = to_string(r.stop_cause);
  if (!r.torch_script.empty()) j["torch_script"] = r.torch_script;  // the job is what the script announced
  // The job under the names a scenario's `job` takes (JobConfig's JSON): a report can be turned
  // back into the same run, faults, uneven inputs and Join included.
  const nlohmann::json job = c;
  for (const auto& [key, value] : job.items()) j[key] = value;
  if (!r.mpi_settings.empty()) j["mpi_settings"] = r.mpi_settings;  // how mpirun set OpenMPI up
  // Where the ranks ran: each node's count, node 0 first (torchrun's RANK order); 1 node: [N].
  j["ranks_per_node"] = c.ranks_per_node.empty() ? std::vector<int>{c.world_size} : c.ranks_per_node;
  j["batches_per_epoch"] = r.batches_per_epoch;
  j["allreduce_demo"] = {{"input", r.allreduce_demo_input}, {"output", r.allreduce_demo_output}};
  j["epoch_mse"] = r.epoch_mse;
  j["steps"] = r.steps;
  j["train_seconds"] = r.train_seconds;
  j["us_per_step"] = r.us_per_step;
  j["connection_errors"] = r.connection_errors;
  // Refused before the file is opened: a report with a hole would not say so.
  if (r.history && !r.history->failure().empty())
    throw Error(fmt::format("--report: not written: {}", r.history->failure()));
  if (r.history && !r.history->complete())
    throw Error("--report: not written: the run did not keep every shard and step loss");
  // The two arrays that grow with the run are streamed from its history on disk, one shard or
  // one loss at a time, after the fields above: the report is never whole in memory.
  write_output_file(path, "--report", [&](std::ostream& out) { write_report_body(out, j, r); });
}

}  // namespace ringlab::app
