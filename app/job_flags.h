#pragma once
// The training job's flags, shared by `ringlab run`, `ringlab worker` and `ringlab gui`.
#include <string>

#include "engine/job/job_config.h"

namespace CLI { class App; }

namespace ringlab::app {

struct JobFlags {
  JobConfig job;
  std::string hidden = "48,48";
  std::string seed = "5";
  // torchrun's shape: the world is nnodes x nproc_per_node. `--nnodes` is a flag of `ringlab run`
  // only; elsewhere the run is one node.
  int nnodes = 1;
  int nproc_per_node = 0;
  CLI::App* cmd = nullptr;
  // Turns the parsed strings into `job` and validates it (InputError naming the flag).
  JobConfig resolve();
  // `base` (from a scenario) with every job flag that was given on the command line on top.
  JobConfig resolve_onto(JobConfig base);

 private:
  JobConfig parsed();  // the text flags turned into `job`, not yet validated
  void resolve_world_size();
};

void add_job_flags(CLI::App& cmd, JobFlags& flags);
// `--nnodes` (and `--nproc-per-node`'s meaning with it), for the commands that start nodes.
void add_node_count_flag(CLI::App& cmd, JobFlags& flags);

}  // namespace ringlab::app
