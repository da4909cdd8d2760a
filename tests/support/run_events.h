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

// Rank `rank`'s end of training step `step` (of epoch `epoch`), its batch's loss `loss`.
inline Event step_end_event(int rank, int64_t step, int64_t epoch, double loss) {
  Event e;
  e.kind = EventKind::StepEnd;
  e.rank = rank;
  e.step = step;
  e.epoch = epoch;
  e.value = loss;
  return e;
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

// All-reduces [first, last) of a ring of `ranks`, each begun, taken through its 2(N-1) ring steps
// (a chunk of `chunk_bytes` each, 2 floats unless said) and ended by every rank, into `model`
// (anything with consume(Event)): a run going on at full speed. `steps`: only that many ring
// steps taken, and the all-reduces not ended (the workers held at the gate after them).
template <class Model>
void ring_allreduces(Model& model, int ranks, int64_t first, int64_t last, int64_t chunk_bytes = 8, int steps = -1) {
  const int64_t bytes = chunk_bytes * ranks;
  const int taken = steps < 0 ? 2 * (ranks - 1) : steps;
  for (int64_t id = first; id < last; ++id) {
    for (int r = 0; r < ranks; ++r) model.consume(collective_event(EventKind::CollectiveBegin, r, id, bytes));
    for (int t = 0; t < taken; ++t) {
      const bool scatter = t < ranks - 1;
      const int s = scatter ? t : t - (ranks - 1);
      for (int r = 0; r < ranks; ++r) {
        Event e = collective_event(EventKind::ChunkTransfer, r, id, bytes);
        e.phase = static_cast<int8_t>(scatter ? 0 : 1);
        e.ring_step = s;
        e.chunk = ((r - s - (scatter ? 1 : 0)) % ranks + ranks) % ranks;
        e.segment = 0;
        e.src = (r + ranks - 1) % ranks;
        e.dst = r;
        e.bytes = chunk_bytes;
        model.consume(e);
      }
    }
    if (taken == 2 * (ranks - 1))
      for (int r = 0; r < ranks; ++r) model.consume(collective_event(EventKind::CollectiveEnd, r, id, bytes));
  }
}

}  // namespace ringlab::test
