#pragma once
// A rank's RunBegin as a worker sends it (the world size, and the job as JSON), for tests that
// feed a view model by hand.
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "engine/events/event.h"
#include "engine/job/job_config.h"

namespace ringlab::test {

inline Event run_begin_event(int rank, const JobConfig& job) {
  Event e;
  e.kind = EventKind::RunBegin;
  e.rank = rank;
  e.value = job.world_size;
  e.text = nlohmann::json(job).dump();
  return e;
}

inline Event run_begin_event(int rank, int world, std::string backend) {
  JobConfig job;
  job.world_size = world;
  job.backend = std::move(backend);
  return run_begin_event(rank, job);
}

}  // namespace ringlab::test
