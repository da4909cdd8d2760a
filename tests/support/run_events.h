#pragma once
// Events as a worker sends them, for tests that feed a view model by hand: a rank's RunBegin (the
// world size, and the job as JSON), and the begin or end of one of its ring all-reduces.
#include <cstdint>
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

// Rank `rank`'s CollectiveBegin or CollectiveEnd of ring all-reduce `id` (at training step `id`,
// bucket 0) of `bytes`, stamped `t_ns`.
inline Event collective_event(EventKind kind, int rank, int64_t id, int64_t bytes, int64_t t_ns = 0) {
  Event e;
  e.kind = kind;
  e.rank = rank;
  e.collective_id = id;
  e.step = id;
  e.bucket = 0;
  e.bytes = bytes;
  e.text = "ring";
  e.t_begin_ns = t_ns;
  e.t_end_ns = t_ns;
  return e;
}

}  // namespace ringlab::test
