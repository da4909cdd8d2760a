#pragma once
// The training job's flags, shared by `ringlab run`, `ringlab worker` and `ringlab gui`.
#include <string>

#include "engine/runtime/job_config.h"

namespace CLI { class App; }

namespace ringlab::app {

struct JobFlags {
  JobConfig job;
  std::string hidden = "48,48";
  // Turns the parsed strings into `job` and validates it (InputError naming the flag).
  JobConfig resolve();
};

void add_job_flags(CLI::App& cmd, JobFlags& flags);

}  // namespace ringlab::app
