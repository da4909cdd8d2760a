#include "engine/runtime/run_result.h"

#include <map>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/data/data_loader.h"
#include "engine/data/distributed_sampler.h"
#include "engine/runtime/flight_recorder.h"

namespace ringlab {
namespace {

struct RankPosition {
  const Event* collective = nullptr;  // last CollectiveBegin
  bool collective_done = false;
  const Event* chunk = nullptr;       // last chunk received
  int64_t step = -1;
};

std::string describe(int rank, const RankPosition& p, int world) {
  if (!p.collective) return fmt::format("rank {}: no collective started (last step {})", rank, p.step);
  const Event& c = *p.collective;
  std::string where = fmt::format("rank {}: step {}, collective {} ({}{})", rank, c.step, c.collective_id, c.text,
                                  c.bucket >= 0 ? fmt::format(", bucket {}", c.bucket) : "");
  if (p.collective_done) return where + " completed";
  if (p.chunk && p.chunk->collective_id == c.collective_id)
    return where + fmt::format(", {} step {} of {} done",
                               p.chunk->phase == 0 ? "reduce-scatter" : "all-gather", p.chunk->ring_step + 1,
                               world - 1);
  return where + ", waiting for its first chunk";
}

// "rank 2: <text>", without doubling a prefix the error already carries.
std::string with_rank(const Event& e) {
  if (e.rank < 0) return e.text;
  const std::string prefix = fmt::format("rank {}: ", e.rank);
  return e.text.rfind(prefix, 0) == 0 ? e.text : prefix + e.text;
}

}  // namespace

std::vector<std::string> describe_rank_positions(const std::vector<Event>& events, int world_size) {
  std::map<int, RankPosition> pos;
  for (const Event& e : events) {
    if (e.rank < 0) continue;
    RankPosition& p = pos[e.rank];
    if (e.step >= 0) p.step = std::max(p.step, e.step);
    if (e.kind == EventKind::CollectiveBegin) {
      p.collective = &e;
      p.collective_done = false;
    } else if (e.kind == EventKind::CollectiveEnd && p.collective && e.collective_id == p.collective->collective_id) {
      p.collective_done = true;
    } else if (e.kind == EventKind::ChunkTransfer) {
      p.chunk = &e;
    }
  }
  std::vector<std::string> lines;
  for (int r = 0; r < world_size; ++r) lines.push_back(describe(r, pos[r], world_size));
  return lines;
}

RunResult build_run_result(const EventStore& store, size_t first_event, const JobConfig& job,
                           const std::vector<RankExit>& exits, bool stopped_by_user) {
  RunResult r;
  r.job = job;
  std::vector<Event> events;
  store.for_each(first_event, [&](const Event& e) { events.push_back(e); });

  int world = job.world_size;
  std::vector<std::string> errors;
  const Event* first_error = nullptr;  // the earliest error a rank raised itself: the root cause
  std::vector<nlohmann::json> flight;
  double rank0_us = 0.0;
  for (const Event& e : events) {
    if (e.kind == EventKind::RunBegin && e.rank == 0) {
      world = static_cast<int>(e.value);
      r.job = nlohmann::json::parse(e.text).get<JobConfig>();
    }
    if (e.rank >= static_cast<int>(r.ranks.size()) && e.rank < 4096) r.ranks.resize(e.rank + 1);
    switch (e.kind) {
      case EventKind::CollectiveBegin:
        if (e.text == "demo" && e.rank == 0) r.allreduce_demo_input = e.values;
        break;
      case EventKind::CollectiveEnd:
        if (e.text == "demo" && e.rank == 0) r.allreduce_demo_output = e.values;
        break;
      case EventKind::SamplerShard: r.ranks[e.rank].shards.push_back(e.indices); break;
      case EventKind::StepEnd: r.ranks[e.rank].step_loss.push_back(e.value); break;
      case EventKind::EpochEnd:
        if (e.rank == 0) r.epoch_mse.push_back(e.value);
        break;
      case EventKind::RunEnd:
        if (e.rank == 0) {
          r.final_parameters = e.values;
          r.steps += e.step;
          rank0_us += e.value * static_cast<double>(e.step);
        }
        break;
      case EventKind::Error:
        errors.push_back(with_rank(e));
        if (!first_error && e.text.find("(SIGTERM)") == std::string::npos) first_error = &e;
        break;
      case EventKind::FlightRecord:
        try {
          flight.push_back(nlohmann::json::parse(e.text));
        } catch (const nlohmann::json::exception&) {
        }
        break;
      case EventKind::Log:
        if (e.rank < 0 && e.text.rfind("restart", 0) == 0) {
          // A restart resumes from the epoch checkpoint: what the failed attempt did after it
          // is done again, so it is dropped here, and so are its errors.
          for (RankResult& rank : r.ranks) {
            rank.step_loss.resize(std::min<size_t>(rank.step_loss.size(), e.step));
            rank.shards.resize(std::min<size_t>(rank.shards.size(), e.epoch));
          }
          r.epoch_mse.resize(std::min<size_t>(r.epoch_mse.size(), e.epoch));
          r.steps = e.step;
          errors.clear();
          first_error = nullptr;
          flight.clear();
        }
        break;
      default: break;
    }
  }
  for (size_t i = 0; i < r.ranks.size(); ++i) r.ranks[i].rank = static_cast<int>(i);
  r.train_seconds = rank0_us * 1e-6;
  r.us_per_step = r.steps > 0 ? rank0_us / static_cast<double>(r.steps) : 0.0;
  data::DistributedSampler sampler({r.job.samples, world, 0, r.job.shuffle, r.job.seed, r.job.drop_last});
  r.batches_per_epoch = data::batches_per_epoch(sampler.num_samples(), r.job.batch_size);

  const RankExit* failed = nullptr;
  for (const RankExit& e : exits)
    if (!e.ok() && !failed) failed = &e;
  r.ok = !failed && errors.empty() && !stopped_by_user;
  if (!r.ok) {
    std::string msg;
    if (stopped_by_user) msg = "the run was stopped";
    else if (failed)
      msg = failed->rank >= 0 ? fmt::format("rank {} failed: {}", failed->rank, failed->describe())
                              : fmt::format("mpirun failed: {}", failed->describe());
    if (first_error) msg += fmt::format("\nfirst error: {}", with_rank(*first_error));
    if (errors.size() > 1) {
      msg += "\nall errors, in the order they arrived:";
      for (const std::string& e : errors) msg += "\n  " + e;
    }
    msg += "\nwhere each rank was:";
    for (const std::string& line : describe_rank_positions(events, world)) msg += "\n  " + line;
    if (!flight.empty()) msg += "\n" + format_flight_report(flight, world);
    r.failure = msg;
  }
  if (!flight.empty()) r.flight_report = flight_report_json(flight, world).dump(1);
  return r;
}

}  // namespace ringlab
