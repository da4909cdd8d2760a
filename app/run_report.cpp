#include "app/run_report.h"

#include <fstream>
#include <functional>
#include <ostream>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"

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

}  // namespace

std::string format_seed_report(const RunResult& r) {
  const JobConfig& j = r.job;
  std::string out;
  out += fmt::format("backend                : {}\n", j.backend);
  out += fmt::format("world_size             : {}\n", j.world_size);
  out += fmt::format("rank of this process   : 0\n");
  out += fmt::format("all-reduce SUM (rank 0): {} (sum over all ranks)\n", python_floats(r.allreduce_demo_output));
  out += "\n";
  const std::vector<int64_t> shard = r.history ? r.history->first_shard(0) : std::vector<int64_t>{};
  out += fmt::format("batches per epoch      : {} ({} samples{} / {})\n", r.batches_per_epoch, shard.size(),
                     j.world_size > 1 ? " per rank" : "", j.batch_size);
  if (!shard.empty()) {
    std::vector<int64_t> first(shard.begin(), shard.begin() + std::min<size_t>(8, shard.size()));
    out += fmt::format("epoch-0 indices, batch 1: [{}] ...\n", fmt::join(first, ", "));
  }
  for (size_t e = 0; e < r.epoch_mse.size(); ++e)
    out += fmt::format("epoch {} done, MSE over the whole dataset: {:.6f}\n", e + 1, r.epoch_mse[e]);
  if (r.ok) out += "\ndestroy_process_group  : done\n";
  return out;
}

void write_report_json(const RunResult& r, const std::string& path) {
  nlohmann::json j;
  const JobConfig& c = r.job;
  j["ok"] = r.ok;
  if (!r.ok) j["failure"] = r.failure;
  j["world_size"] = c.world_size;
  j["backend"] = c.backend;
  j["algorithm"] = c.algorithm;
  j["samples"] = c.samples;
  j["hidden"] = c.hidden;
  j["batch_size"] = c.batch_size;
  j["seed"] = c.seed;
  j["epochs"] = c.epochs;
  j["lr"] = c.lr;
  j["momentum"] = c.momentum;
  j["drop_last"] = c.drop_last;
  j["shuffle"] = c.shuffle;
  j["set_epoch"] = c.set_epoch;
  j["bucket_cap_kb"] = c.bucket_cap_kb;
  j["batches_per_epoch"] = r.batches_per_epoch;
  j["allreduce_demo"] = {{"input", r.allreduce_demo_input}, {"output", r.allreduce_demo_output}};
  j["epoch_mse"] = r.epoch_mse;
  j["steps"] = r.steps;
  j["train_seconds"] = r.train_seconds;
  j["us_per_step"] = r.us_per_step;
  j["connection_errors"] = r.connection_errors;
  // Refused before the file is opened, so a report is never left half-written.
  if (r.history && !r.history->failure().empty())
    throw Error(fmt::format("--report: not written: {}", r.history->failure()));
  if (r.history && !r.history->complete())
    throw Error("--report: not written: the run did not keep every shard and step loss");
  std::ofstream out(path);
  if (!out) throw InputError(fmt::format("--report: cannot write '{}'", path));
  // The arrays that grow with the run or the model are streamed after the fields above, the
  // shards and losses from the run's history on disk, one shard or one loss at a time: the
  // report is never whole in memory.
  std::string head = j.dump(1);
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
  if (!out.good()) throw InputError(fmt::format("--report: cannot write '{}'", path));
}

}  // namespace ringlab::app
