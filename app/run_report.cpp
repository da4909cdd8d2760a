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
#include "engine/rank/seed_report.h"

namespace ringlab::app {
namespace {

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

std::string format_seed_report(const RunResult& r) {
  const std::vector<int64_t> shard = r.history ? r.history->first_shard(0) : std::vector<int64_t>{};
  const std::vector<int64_t> first(shard.begin(), shard.begin() + std::min(kSeedIndicesShown, shard.size()));
  // len(sampler), as the script prints it: from the job, so that a run of no epochs (no shard
  // drawn) says the same as one of many.
  std::string out = seed_header(r.job, r.allreduce_demo_output, r.batches_per_epoch, r.samples_per_rank, first);
  for (size_t e = 0; e < r.epoch_mse.size(); ++e) out += epoch_line(e, r.epoch_mse[e]);
  if (r.ok) out += seed_footer();
  return out;
}

void write_report_json(const RunResult& r, const std::string& path) {
  nlohmann::json j;
  const JobConfig& c = r.job;
  j["ok"] = r.ok;
  if (!r.ok) j["failure"] = r.failure;
  // A report of a run cut short says so: its epochs, steps and parameters are those so far.
  j["interrupted"] = r.interrupted();
  if (r.stop_cause != StopCause::None) j["stopped_by"] = to_string(r.stop_cause);
  if (r.stop_cause != StopCause::None && r.stop_node >= 0) j["stopped_on_node"] = r.stop_node;  // several nodes only
  // Not asked of ringlab (kill, scancel, a job's time limit), so not `interrupted`: its cause.
  if (!r.stopped_from_outside.empty()) j["stopped_from_outside"] = r.stopped_from_outside;
  if (!r.torch_script.empty()) j["torch_script"] = r.torch_script;  // the job is what the script announced
  // The job under the names a scenario's `job` takes (JobConfig's JSON): a report can be turned
  // back into the same run, faults, uneven inputs and Join included.
  // A script none of whose ranks reached watch() never said its job: ringlab's defaults would
  // read as the script's (lr 0.03, 256 samples). Only the world, which ringlab started, is known.
  const bool job_unknown = !r.torch_script.empty() && r.rank_count == 0;
  if (job_unknown) {
    j["world_size"] = c.world_size;
    j["job_unknown"] = "no rank reached ringlab_torch.watch(...), which reports the script's job";
  } else {
    const nlohmann::json job = c;
    for (const auto& [key, value] : job.items()) j[key] = value;
    // The fields above that hold ringlab's defaults, not the script's (it did not report them).
    if (!r.torch_script.empty() && !r.job_not_reported.empty()) j["job_not_reported"] = r.job_not_reported;
  }
  if (!r.mpi_settings.empty()) j["mpi_settings"] = r.mpi_settings;  // how mpirun set OpenMPI up
  // Where the ranks ran: each node's count, node 0 first (torchrun's RANK order); 1 node: [N].
  j["ranks_per_node"] = c.ranks_per_node.empty() ? std::vector<int>{c.world_size} : c.ranks_per_node;
  // Worked out from the samples and the batch: unknown where the script reported either not.
  const auto reported = [&](const char* key) { return std::ranges::find(r.job_not_reported, key) == r.job_not_reported.end(); };
  const bool known = !job_unknown && reported("samples") && reported("batch_size");
  j["batches_per_epoch"] = known ? nlohmann::json(r.batches_per_epoch) : nlohmann::json();
  j["allreduce_demo"] = {{"input", r.allreduce_demo_input}, {"output", r.allreduce_demo_output}};
  j["epoch_mse"] = r.epoch_mse;
  j["steps"] = r.steps;
  j["train_seconds"] = r.train_seconds;
  j["us_per_step"] = r.us_per_step;
  // Rank 0's slowest step, which the mean hides (a first all-reduce that waited 40 s for a rank).
  j["slowest_step"] = r.slowest_step.step < 0 ? nlohmann::json()
                                              : nlohmann::json{{"step", r.slowest_step.step}, {"us", r.slowest_step.ns / 1e3}};
  j["connection_errors"] = r.connection_errors;
  j["restarts"] = r.restart_notes;  // --max-restarts: each restart, where it resumed, and why
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
