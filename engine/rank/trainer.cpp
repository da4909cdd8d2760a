#include "engine/rank/trainer.h"
#include "engine/rank/ddp_options.h"
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
#include "engine/ddp/distributed_data_parallel.h"
#include "engine/nn/mlp.h"
#include "engine/nn/mse.h"
#include "engine/nn/sgd.h"
#include "engine/job/fault_plan.h"
#include "engine/events/flight_recorder.h"

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
void inject_faults(const FaultPlan& plan, ddp::DistributedDataParallel& ddp, EventSink& events,
                   const TrainerHooks& hooks, int rank, int64_t step, int epoch) {
  if (plan.delay_ms() > 0)
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(plan.delay_ms() * 1000)));
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
    ddp.inject(ddp::CollectiveFault::Skip);
  }
  if (plan.at(FaultKind::Extra, step)) {
    emit_fault(events, rank, step, epoch, FaultKind::Extra, "extra: one all-reduce more than the other ranks");
    ddp.inject(ddp::CollectiveFault::Extra);
  }
  if (plan.at(FaultKind::Resize, step)) {
    emit_fault(events, rank, step, epoch, FaultKind::Resize, "resize: all-reducing one element fewer than the other ranks");
    ddp.inject(ddp::CollectiveFault::Resize);
  }
}

// Join's per-step question, asked with a real all-reduce: how many ranks still have a batch?
int active_ranks(ddp::DistributedDataParallel& ddp, bool have_batch) {
  float flag = have_batch ? 1.0f : 0.0f;
  ddp.allreduce(std::span<float>(&flag, 1), "join");
  return static_cast<int>(flag + 0.5f);
}

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

namespace {

// A checkpoint is only as good as its fit: one written for another model (other --hidden or
// --features) has another parameter count and must be refused, not copied over the model.
void restore(const TrainingState& state, nn::Mlp& model, nn::Sgd& optimizer, int rank) {
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
  if (!state.momentum.empty()) optimizer.set_momentum_buffer(state.momentum);
}

}  // namespace

int64_t eval_block_rows(const JobConfig& job) {
  constexpr int64_t kBlockBytes = 64 << 20;
  int64_t widths = job.features + 1;
  for (int h : job.hidden) widths += h;
  return std::max<int64_t>(8, kBlockBytes / (widths * 4) / 8 * 8);
}

RankOutcome train_rank(const JobConfig& job, ProcessGroup& group, EventSink& events,
                       const TrainerHooks& hooks, const TrainingState* resume) {
  const int rank = group.rank();
  const int world = group.size();
  RankOutcome out;

  // The seed script's order of draws from the global generator: data first, then the model.
  Generator gen(job.seed);
  const data::TensorDataset dataset = data::make_regression_dataset(job.samples, job.features, gen);
  nn::Mlp model(job.features, job.hidden, 1);
  model.reset_parameters(gen);
  nn::Sgd optimizer(job.lr, job.momentum, job.weight_decay);
  if (resume) restore(*resume, model, optimizer, rank);

  ddp::DistributedDataParallel ddp(model, group, ddp_options_for(job, events, hooks));
  const FaultPlan faults(job, rank);

  // The seed's direct all_reduce of [1, 2, 3]: with N ranks every element becomes N times larger.
  out.demo_input = {1.0f, 2.0f, 3.0f};
  out.demo_output = out.demo_input;
  ddp.allreduce(out.demo_output, "demo");

  data::DistributedSampler sampler({job.samples, world, rank, job.shuffle, job.seed, job.drop_last});
  out.batches_per_epoch = data::batches_per_epoch(sampler.num_samples(), job.batch_size);

  std::vector<float> bx, by, grad_pred;
  int64_t step = resume ? resume->steps_done : 0;
  int64_t train_ns = 0;
  const int first_epoch = resume ? resume->epoch : 0;
  for (int epoch = first_epoch; epoch < job.epochs; ++epoch) {
    if (job.set_epoch) sampler.set_epoch(epoch);  // forgetting this repeats epoch 0's order
    std::vector<int64_t> shard = sampler.indices();
    emit_shard(events, rank, step, epoch, shard);
    if (hooks.keep_history) out.shards.push_back(shard);
    const data::DataLoader loader(std::move(shard), job.batch_size);
    const int64_t first_batch = (resume && epoch == first_epoch) ? resume->batch : 0;
    // Uneven inputs: this rank may hold fewer batches than the others.
    const int64_t all_batches = loader.num_batches();
    const int64_t my_batches = std::max<int64_t>(0, all_batches - faults.batches_removed(rank));

    for (int64_t b = first_batch; b < all_batches; ++b) {
      const bool have_batch = b < my_batches;
      if (!job.join && !have_batch) break;  // without Join this rank just stops: the others hang
      if (hooks.stop_at_step_boundary && hooks.stop_at_step_boundary(step)) {
        out.stopped = true;
        out.stopped_state = {epoch, b, step,
                             {model.parameters().begin(), model.parameters().end()},
                             optimizer.momentum_buffer()};
        out.final_parameters = out.stopped_state.parameters;
        count_steps(out, step - (resume ? resume->steps_done : 0), train_ns);
        return out;
      }
      if (job.join && active_ranks(ddp, have_batch) == 0) break;
      const int64_t t_step = now_ns();
      ddp.set_step(step);
      events.emit(make_event(EventKind::StepBegin, rank, step, epoch));
      if (!have_batch) {
        // Joined: shadow the others' gradient all-reduce with zeros, skip the optimizer.
        int64_t t0 = now_ns();
        ddp.shadow_backward();
        ddp.finish();
        emit_span(events, EventKind::Backward, rank, step, epoch, t0);
        Event end = make_event(EventKind::StepEnd, rank, step, epoch);
        end.t_begin_ns = t_step;
        end.text = "joined";
        events.emit(std::move(end));
        train_ns += end.t_end_ns - t_step;
        ++step;
        continue;
      }
      inject_faults(faults, ddp, events, hooks, rank, step, epoch);
      const std::span<const int64_t> batch = loader.batch(b);
      dataset.gather(batch, bx, by);
      const int64_t micro = b - first_batch;
      const bool sync = job.grad_accum <= 1 || (micro + 1) % job.grad_accum == 0 ||
                        b + 1 == my_batches;
      const bool fresh = job.grad_accum <= 1 || micro % job.grad_accum == 0;
      if (fresh) model.zero_grad();

      int64_t t0 = now_ns();
      const std::span<const float> pred = model.forward(bx, static_cast<int64_t>(batch.size()));
      grad_pred.resize(pred.size());
      const float loss = nn::mse_loss(pred, by, grad_pred);
      emit_span(events, EventKind::Forward, rank, step, epoch, t0);

      t0 = now_ns();
      ddp.backward(grad_pred, sync);
      ddp.finish();
      emit_span(events, EventKind::Backward, rank, step, epoch, t0);

      if (sync) {
        t0 = now_ns();
        optimizer.step(model.parameters(), model.gradients());
        emit_span(events, EventKind::OptimizerStep, rank, step, epoch, t0);
      }
      Event end = make_event(EventKind::StepEnd, rank, step, epoch);
      end.t_begin_ns = t_step;
      end.value = loss;
      events.emit(std::move(end));
      if (hooks.keep_history) out.step_loss.push_back(loss);
      train_ns += end.t_end_ns - t_step;
      ++step;
    }
    if (job.join && faults.any_uneven()) {
      // Join's sync_final_model: the replicas that stopped early missed optimizer steps; the
      // rank with the most batches has the model every rank must continue from.
      group.broadcast(model.parameters(), faults.longest_rank());
    }
    if (hooks.epoch_checkpoint && rank == 0)
      hooks.epoch_checkpoint({epoch + 1, 0, step, {model.parameters().begin(), model.parameters().end()},
                              optimizer.momentum_buffer()});
    if (rank == 0) {
      const double mse = whole_dataset_mse(model, dataset, eval_block_rows(job));
      out.epoch_mse.push_back(mse);
      Event e = make_event(EventKind::EpochEnd, rank, step, epoch);
      e.value = mse;
      events.emit(std::move(e));
    }
  }
  count_steps(out, step - (resume ? resume->steps_done : 0), train_ns);
  out.final_parameters.assign(model.parameters().begin(), model.parameters().end());
  return out;
}

}  // namespace ringlab
