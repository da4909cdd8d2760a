#include "engine/rank/trainer.h"
#include "engine/rank/ddp_options.h"
#include "engine/rank/host_replica.h"
#include "engine/rank/replica.h"
#include "engine/events/rank_events.h"

#include <algorithm>
#include <chrono>

#include <fmt/core.h>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/core/generator.h"
#include "engine/data/data_loader.h"
#include "engine/data/distributed_sampler.h"
#include "engine/data/tensor_dataset.h"
#include "engine/nn/mlp.h"
#include "engine/job/fault_plan.h"

#include <csignal>
#include <thread>

namespace ringlab {
namespace {

void emit_fault(EventSink& sink, int rank, int64_t step, int epoch, FaultKind kind, const std::string& what) {
  Event e = make_event(EventKind::Fault, rank, step, epoch);
  e.code = static_cast<int32_t>(kind);
  e.src = rank;  // its own fault plan injected it
  e.text = what;
  sink.emit(std::move(e));
}

// The faults a rank injects into itself at the start of a step.
void inject_faults(const FaultPlan& plan, Replica& replica, EventSink& events, const TrainerHooks& hooks, int rank,
                   int64_t step, int epoch) {
  if (plan.delay_ms() > 0) {
    // The straggler's own sleep, on its timeline: the others' long waits in the next all-reduce
    // are this rank's delay, and the view says whose.
    Event e;
    e.kind = EventKind::Straggle;
    e.rank = rank;
    e.step = step;
    e.epoch = epoch;
    e.value = plan.delay_ms();
    e.t_begin_ns = now_ns();
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(plan.delay_ms() * 1000)));
    e.t_end_ns = now_ns();
    events.emit(std::move(e));
  }
  if (plan.at(FaultKind::Kill, step)) {
    emit_fault(events, rank, step, epoch, FaultKind::Kill, "kill: SIGKILL");
    events.flush_events();
    std::raise(SIGKILL);
  }
  if (plan.at(FaultKind::Drop, step)) {
    emit_fault(events, rank, step, epoch, FaultKind::Drop, "drop: closing connections to the other ranks");
    if (hooks.drop_connections) hooks.drop_connections();
  }
  if (plan.at(FaultKind::Skip, step)) {
    emit_fault(events, rank, step, epoch, FaultKind::Skip, "skip: leaving out this step's gradient all-reduce");
    replica.inject(ddp::CollectiveFault::Skip);
  }
  if (plan.at(FaultKind::Extra, step)) {
    emit_fault(events, rank, step, epoch, FaultKind::Extra, "extra: one all-reduce more than the other ranks");
    replica.inject(ddp::CollectiveFault::Extra);
  }
  if (plan.at(FaultKind::Resize, step)) {
    emit_fault(events, rank, step, epoch, FaultKind::Resize, "resize: all-reducing one element fewer than the other ranks");
    replica.inject(ddp::CollectiveFault::Resize);
  }
}

// Join's per-step question, asked with a real all-reduce: how many ranks still have a batch?
int active_ranks(Replica& replica, bool have_batch) {
  float flag = have_batch ? 1.0f : 0.0f;
  replica.allreduce_host(std::span<float>(&flag, 1), "join");
  return static_cast<int>(flag + 0.5f);
}

// A checkpoint is only as good as its fit: one written for another model (other --hidden or
// --features) has another parameter count and must be refused, not copied over the model.
void restore_parameters(const TrainingState& state, nn::Mlp& model, int rank) {
  const size_t want = model.num_parameters();
  const ErrorContext where{rank, "resume", state.steps_done};
  if (state.parameters.size() != want) {
    throw InputError(where, fmt::format("the checkpoint holds {} parameters but this model has {} "
                                        "(was it written for other --features or --hidden?)",
                                        state.parameters.size(), want));
  }
  if (!state.momentum.empty() && state.momentum.size() != want) {
    throw InputError(where, fmt::format("the checkpoint holds {} momentum values but this model has {} parameters",
                                        state.momentum.size(), want));
  }
  std::copy(state.parameters.begin(), state.parameters.end(), model.parameters().begin());
}

// One attempt of one rank's training, from the first epoch (or the resumed one) to the last, or
// to a step where it is asked to stop. Everything here is the same wherever the replica lives.
class RankLoop {
 public:
  RankLoop(const JobConfig& job, int rank, EventSink& events, const TrainerHooks& hooks, Replica& replica,
           const TrainingState* resume)
      : job_(job), rank_(rank), events_(events), hooks_(hooks), replica_(replica), faults_(job, rank), resume_(resume),
        first_step_(resume ? resume->steps_done : 0), step_(first_step_) {}

  void run(data::DistributedSampler& sampler, RankOutcome& out) {
    const int first_epoch = resume_ ? resume_->epoch : 0;
    for (int epoch = first_epoch; epoch < job_.epochs; ++epoch) {
      if (job_.set_epoch) sampler.set_epoch(epoch);  // forgetting this repeats epoch 0's order
      const int64_t first_batch = (resume_ && epoch == first_epoch) ? resume_->batch : 0;
      if (!train_epoch(epoch, sampler.indices(), first_batch, out)) return;
      end_epoch(epoch, out);
    }
    count_steps(out, step_ - first_step_, train_ns_);
    out.final_parameters = replica_.parameters();
  }

 private:
  // False when the rank stopped at a step boundary; `out` then holds where.
  bool train_epoch(int epoch, std::vector<int64_t> shard, int64_t first_batch, RankOutcome& out) {
    emit_shard(events_, rank_, step_, epoch, shard);
    replica_.start_epoch(shard);
    if (hooks_.keep_history) out.shards.push_back(shard);
    const data::DataLoader loader(std::move(shard), job_.batch_size);
    // Uneven inputs: this rank may hold fewer batches than the others.
    const int64_t all_batches = loader.num_batches();
    const int64_t my_batches = std::max<int64_t>(0, all_batches - faults_.batches_removed(rank_));
    for (int64_t b = first_batch; b < all_batches; ++b) {
      const bool have_batch = b < my_batches;
      if (!job_.join && !have_batch) break;  // without Join this rank just stops: the others hang
      if (hooks_.stop_at_step_boundary && hooks_.stop_at_step_boundary(step_)) {
        stop(epoch, b, out);
        return false;
      }
      if (job_.join && active_ranks(replica_, have_batch) == 0) break;
      // The epoch's last batch, the same on every rank: with uneven inputs a rank's own last one
      // would make it all-reduce where the others accumulate (no_sync), and the ring would not match.
      const MicroStep micro{b - first_batch, b + 1 == all_batches};
      if (have_batch) {
        train_step(loader, b, epoch, micro, out);
      } else {
        shadow_step(epoch, syncs(micro));
      }
    }
    return true;
  }

  void stop(int epoch, int64_t batch, RankOutcome& out) {
    out.stopped = true;
    out.stopped_state = state_at(epoch, batch);
    out.final_parameters = out.stopped_state.parameters;
    count_steps(out, step_ - first_step_, train_ns_);
  }

  TrainingState state_at(int epoch, int64_t batch) {
    return {epoch, batch, step_, replica_.parameters(), replica_.momentum()};
  }

  int64_t begin_step(int epoch) {
    const int64_t t_step = now_ns();
    held_at_step_ = hooks_.held_ns ? hooks_.held_ns() : 0;
    replica_.set_step(step_);
    events_.emit(make_event(EventKind::StepBegin, rank_, step_, epoch));
    return t_step;
  }

  void end_step(Event end, int64_t t_step) {
    end.t_begin_ns = t_step;
    const int64_t held = (hooks_.held_ns ? hooks_.held_ns() : 0) - held_at_step_;
    train_ns_ += std::max<int64_t>(end.t_end_ns - t_step - held, 0);
    events_.emit(std::move(end));
    ++step_;
  }

  // Where a batch falls among the micro-steps of gradient accumulation.
  struct MicroStep {
    int64_t index = 0;  // batches since the epoch (or the resumed attempt) began
    bool last_batch = false;  // the epoch's last, the same on every rank
  };

  // Gradient accumulation: the gradients are all-reduced (and applied) every grad_accum-th batch
  // and at the epoch's last; the batches between run under no_sync.
  bool syncs(MicroStep micro) const {
    return job_.grad_accum <= 1 || (micro.index + 1) % job_.grad_accum == 0 || micro.last_batch;
  }

  void train_step(const data::DataLoader& loader, int64_t b, int epoch, MicroStep micro, RankOutcome& out) {
    const int64_t t_step = begin_step(epoch);
    inject_faults(faults_, replica_, events_, hooks_, rank_, step_, epoch);
    const bool sync = syncs(micro);
    const bool fresh = job_.grad_accum <= 1 || micro.index % job_.grad_accum == 0;
    if (fresh) replica_.zero_grad();

    int64_t t0 = now_ns();
    replica_.forward(loader.batch(b), b * job_.batch_size);
    emit_span(events_, EventKind::Forward, rank_, step_, epoch, t0);

    t0 = now_ns();
    replica_.backward(sync);
    emit_span(events_, EventKind::Backward, rank_, step_, epoch, t0);

    if (sync) {
      t0 = now_ns();
      replica_.optimizer_step();
      emit_span(events_, EventKind::OptimizerStep, rank_, step_, epoch, t0);
    }
    const float loss = replica_.loss();
    Event end = make_event(EventKind::StepEnd, rank_, step_, epoch);
    end.value = loss;
    if (hooks_.keep_history) out.step_loss.push_back(loss);
    end_step(std::move(end), t_step);
  }

  // Joined: shadow the others' gradient all-reduce with zeros, skip the optimizer. On a no_sync
  // micro-step the others all-reduce nothing, and neither does it.
  void shadow_step(int epoch, bool sync) {
    const int64_t t_step = begin_step(epoch);
    const int64_t t0 = now_ns();
    if (sync) {
      replica_.shadow_backward();
      emit_span(events_, EventKind::Backward, rank_, step_, epoch, t0);
    }
    Event end = make_event(EventKind::StepEnd, rank_, step_, epoch);
    end.text = "joined";  // is_joined_step: no loss
    end_step(std::move(end), t_step);
  }

  void end_epoch(int epoch, RankOutcome& out) {
    if (job_.join && faults_.any_uneven()) {
      // Join's sync_final_model: the replicas that stopped early missed optimizer steps; the
      // rank with the most batches has the model every rank must continue from.
      replica_.broadcast_parameters(faults_.longest_rank());
    }
    if (rank_ != 0) return;
    const int64_t t0 = now_ns();
    const double mse = replica_.dataset_mse();
    out.epoch_mse.push_back(mse);
    Event e = make_event(EventKind::EpochEnd, rank_, step_, epoch);
    e.t_begin_ns = t0;  // the evaluation's span: the others wait for rank 0 in the next all-reduce meanwhile
    e.value = mse;
    events_.emit(std::move(e));
    // The epoch's MSE is on its way before the checkpoint says the epoch is done: a restart from
    // this checkpoint does not train the epoch again, so its MSE must not depend on a rank that
    // was stopped between the two (a restart from the previous checkpoint drops the extra one).
    if (hooks_.epoch_checkpoint) hooks_.epoch_checkpoint(state_at(epoch + 1, 0));
  }

  const JobConfig& job_;
  const int rank_;
  EventSink& events_;
  const TrainerHooks& hooks_;
  Replica& replica_;
  const FaultPlan faults_;
  const TrainingState* resume_;
  const int64_t first_step_;
  int64_t step_;
  int64_t train_ns_ = 0;
  int64_t held_at_step_ = 0;  // the gate's held_ns when the step began
};

}  // namespace

// Blocks are a multiple of 8 rows, so the GEMM's 4-row tiles and tanh's 8-wide vectors fall on
// the same rows as in one pass, and the squared errors go into one double in the same order as
// mse_loss adds them: the result is the same to the last bit.
double whole_dataset_mse(nn::Mlp& model, const data::TensorDataset& d, int64_t block_rows) {
  if (d.size == 0) return 0.0;
  const int64_t features = static_cast<int64_t>(d.x.size()) / d.size;
  double sum = 0.0;
  for (int64_t start = 0; start < d.size; start += block_rows) {
    const int64_t n = std::min(block_rows, d.size - start);
    const std::span<const float> rows(d.x.data() + start * features, static_cast<size_t>(n * features));
    const std::span<const float> pred = model.forward(rows, n);
    for (int64_t i = 0; i < n; ++i) {
      const float diff = pred[i] - d.y[start + i];
      sum += static_cast<double>(diff * diff);
    }
  }
  return static_cast<float>(sum / static_cast<double>(d.size));
}

int64_t eval_block_rows(const JobConfig& job) {
  constexpr int64_t kBlockBytes = 64 << 20;
  int64_t widths = job.features + 1;
  for (int h : job.hidden) widths += h;
  return std::max<int64_t>(8, kBlockBytes / (widths * 4) / 8 * 8);
}

RankOutcome train_rank_with(const MakeReplica& make, const JobConfig& job, ProcessGroup& group, EventSink& events,
                            const TrainerHooks& hooks, const TrainingState* resume) {
  const int rank = group.rank();
  RankOutcome out;

  // The seed script's order of draws from the global generator: data first, then the model.
  Generator gen(job.seed);
  const data::TensorDataset dataset = data::make_regression_dataset(job.samples, job.features, gen);
  nn::Mlp model(job.features, job.hidden, 1);
  model.reset_parameters(gen);
  if (resume) restore_parameters(*resume, model, rank);
  const std::span<const float> momentum = resume ? std::span<const float>(resume->momentum) : std::span<const float>();
  const std::unique_ptr<Replica> replica =
      make({job, group, dataset, model, momentum, ddp_options_for(job, events, hooks)});
  RankLoop loop(job, rank, events, hooks, *replica, resume);

  // The seed's direct all_reduce of [1, 2, 3]: with N ranks every element becomes N times larger.
  out.demo_input = {1.0f, 2.0f, 3.0f};
  out.demo_output = out.demo_input;
  replica->allreduce_host(out.demo_output, "demo");

  data::DistributedSampler sampler({job.samples, group.size(), rank, job.shuffle, job.seed, job.drop_last});
  out.batches_per_epoch = data::batches_per_epoch(sampler.num_samples(), job.batch_size);
  loop.run(sampler, out);
  return out;
}

RankOutcome train_rank(const JobConfig& job, ProcessGroup& group, EventSink& events, const TrainerHooks& hooks,
                       const TrainingState* resume) {
  return train_rank_with(make_host_replica, job, group, events, hooks, resume);
}

}  // namespace ringlab
