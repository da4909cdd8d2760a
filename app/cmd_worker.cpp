// `ringlab worker`: what one rank runs. Started by the controller (or mpirun) with torchrun's
// environment; it can also be started by hand the same way.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/job_flags.h"
#include "engine/core/error.h"
#include "engine/rank/worker.h"

namespace ringlab::app {

void add_worker_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("worker", "one rank of a run (started by `ringlab run`, torchrun-style env)");
  auto flags = std::make_shared<JobFlags>();
  auto job_json = std::make_shared<std::string>();
  auto options = std::make_shared<WorkerOptions>();
  add_job_flags(*cmd, *flags);
  cmd->add_option("--job-json", *job_json, "the whole job as JSON (what the controller passes)");
  cmd->add_flag("--interactive", options->interactive, "honour the controller's gate and stop requests");
  cmd->add_flag("--stop-votes", options->stop_votes,
                "vote with the other ranks about every 50 ms whether the controller asked the run to stop");
  cmd->add_option("--checkpoint-in", options->checkpoint_in, "resume from this checkpoint");
  cmd->add_option("--checkpoint-out", options->checkpoint_out, "where rank 0 saves the state when stopped");
  cmd->add_option("--epoch-checkpoint", options->epoch_checkpoint, "where rank 0 checkpoints every epoch");
  cmd->callback([=] {
    JobConfig job = flags->resolve();
    if (!job_json->empty()) {
      try {
        job = nlohmann::json::parse(*job_json).get<JobConfig>();
      } catch (const nlohmann::json::exception& e) {
        throw InputError("--job-json is not a valid job: " + json_error_words(e));
      }
      job.validate();
    }
    set_exit_code(run_worker(job, *options));
  });
}

}  // namespace ringlab::app
