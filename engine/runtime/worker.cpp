#include "engine/runtime/worker.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/dist/backends.h"
#include "engine/dist/store.h"
#include "engine/runtime/checkpoint.h"
#include "engine/runtime/event_client.h"
#include "engine/runtime/trainer.h"
#include "engine/runtime/worker_env.h"

namespace ringlab {
namespace {

using std::chrono::milliseconds;

milliseconds job_timeout(const JobConfig& job) { return milliseconds(static_cast<int64_t>(job.timeout_s * 1000)); }

// Gated step-through. While the controller's gate mode is on, ring step k (counted from the
// moment this rank saw the gate close) may start once the controller has released k steps.
// Ranks cannot drift apart by more than a step (each ring step needs both neighbours), so they
// all see the gate close at the same ring step. The mode is read at most every 20 ms, so an
// open gate costs next to nothing. A long pause is the point of gating: the wait is bounded
// by an hour, not by the job's timeout.
class Gate {
 public:
  Gate(StoreClient& store, int rank, EventSink& events) : store_(store), rank_(rank), events_(events) {}

  void before_step(RingPhase phase, int ring_step) {
    if (!closed(false)) {
      active_ = false;
      return;
    }
    if (!active_) {
      active_ = true;
      base_ = store_.add(store_keys::kGateReleased, 0);
      taken_ = 0;
    }
    ++taken_;
    const int64_t t0 = now_ns();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
    while (store_.add(store_keys::kGateReleased, 0) < base_ + taken_) {
      if (!closed(true) || store_.check({store_keys::kStop})) break;
      if (std::chrono::steady_clock::now() > deadline)
        throw TimeoutError(ErrorContext{rank_, "gate", ring_step}, "no step release from the controller for an hour");
      std::this_thread::sleep_for(milliseconds(5));
    }
    Event e;
    e.kind = EventKind::GateWait;
    e.rank = rank_;
    e.t_begin_ns = t0;
    e.t_end_ns = now_ns();
    e.phase = static_cast<int8_t>(phase);
    e.ring_step = ring_step;
    events_.emit(std::move(e));
  }

 private:
  bool closed(bool fresh) {
    const int64_t now = now_ns();
    if (fresh || now - checked_ns_ > 20'000'000) {
      checked_ns_ = now;
      closed_ = store_.check({store_keys::kGateMode}) && store_.get(store_keys::kGateMode) == std::vector<uint8_t>{1};
    }
    return closed_;
  }

  StoreClient& store_;
  int rank_;
  EventSink& events_;
  bool active_ = false, closed_ = false;
  int64_t base_ = 0, taken_ = 0, checked_ns_ = 0;
};

// Live change: every rank must stop at the SAME step boundary, or the ones that go on would
// wait forever in the next all-reduce. Rank 0 looks at the store and broadcasts its decision.
bool agree_to_stop(StoreClient& store, ProcessGroup& group) {
  float flag = 0.0f;
  if (group.rank() == 0) flag = store.check({store_keys::kStop}) ? 1.0f : 0.0f;
  if (group.size() > 1) group.broadcast(std::span<float>(&flag, 1), 0);
  return flag != 0.0f;
}

void emit_run_end(EventSink& events, int rank, const RankOutcome& out) {
  Event e;
  e.kind = EventKind::RunEnd;
  e.rank = rank;
  e.t_begin_ns = e.t_end_ns = now_ns();
  e.value = out.us_per_step;
  e.step = out.steps;
  e.text = out.stopped ? "stopped" : "done";
  if (rank == 0) e.values = out.final_parameters;
  events.emit(std::move(e));
}

void emit_run_begin(EventSink& events, int rank, const JobConfig& job) {
  Event e;
  e.kind = EventKind::RunBegin;
  e.rank = rank;
  e.t_begin_ns = e.t_end_ns = now_ns();
  e.value = job.world_size;
  nlohmann::json j = job;
  e.text = j.dump();
  events.emit(std::move(e));
}

}  // namespace

int run_worker(JobConfig job, const WorkerOptions& options) {
  WorkerEnv env = read_worker_env();
  if (job.world_size != env.world_size && job.world_size != 1)
    throw InputError(fmt::format("--world-size {} disagrees with the environment's WORLD_SIZE={}", job.world_size,
                                 env.world_size));
  job.world_size = env.world_size;
  job.validate();
  const milliseconds timeout = job_timeout(job);

  // Started by hand (no controller): rank 0 hosts the store, as torchrun's static rendezvous does.
  std::unique_ptr<StoreServer> own_store;
  if (env.token.empty() && env.rank == 0 && job.backend != "mpi")
    own_store = std::make_unique<StoreServer>(env.master_addr, env.master_port, env.token);
  StoreClient store(env.master_addr, env.master_port, env.token, timeout);

  std::unique_ptr<EventSink> events;
  if (!env.event_addr.empty()) {
    EventClientOptions o;
    o.host = env.event_addr;
    o.port = env.event_port;
    o.token = env.token;
    o.rank = env.rank;
    o.timeout = timeout;
    o.wants_chunks = job.trace_level == "chunks";
    auto client = std::make_unique<EventClient>(o);
    events = std::move(client);
  } else {
    events = std::make_unique<NullEventSink>();
  }

  try {
    std::unique_ptr<ProcessGroup> group = make_process_group(job.backend, env.rank, env.world_size, &store, timeout);
    std::optional<TrainingState> resume;
    if (!options.checkpoint_in.empty()) resume = load_checkpoint(options.checkpoint_in).state;

    Gate gate(store, env.rank, *events);
    TrainerHooks hooks;
    if (options.interactive) {
      hooks.before_ring_step = [&](RingPhase p, int s) { gate.before_step(p, s); };
      hooks.stop_at_step_boundary = [&](int64_t) { return agree_to_stop(store, *group); };
    }

    emit_run_begin(*events, env.rank, job);
    RankOutcome out = train_rank(job, *group, *events, hooks, resume ? &*resume : nullptr);
    if (out.stopped && env.rank == 0 && !options.checkpoint_out.empty())
      save_checkpoint({job, out.stopped_state}, options.checkpoint_out);
    emit_run_end(*events, env.rank, out);
    if (auto* client = dynamic_cast<EventClient*>(events.get())) client->flush(timeout);
    group->barrier();  // nobody tears the group down while a peer still reads from it
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ringlab worker rank %d: %s\n", env.rank, e.what());
    Event err;
    err.kind = EventKind::Error;
    err.rank = env.rank;
    err.t_begin_ns = err.t_end_ns = now_ns();
    err.text = e.what();
    events->emit(std::move(err));
    if (auto* client = dynamic_cast<EventClient*>(events.get())) {
      try {
        client->flush(milliseconds(2000));
      } catch (...) {
      }
    }
    return 1;
  }
}

}  // namespace ringlab
