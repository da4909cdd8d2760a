#include "engine/cuda/cuda_trainer.h"

#include <chrono>

#include "engine/core/clock.h"
#include "engine/core/generator.h"
#include "engine/cuda/cuda_ddp.h"
#include "engine/cuda/cuda_mlp.h"
#include "engine/cuda/device_buffer.h"
#include "engine/cuda/cuda_check.h"
#include "engine/data/data_loader.h"
#include "engine/data/distributed_sampler.h"
#include "engine/data/tensor_dataset.h"
#include "engine/nn/mlp.h"
#include "engine/rank/ddp_options.h"
#include "engine/events/rank_events.h"

// The loop is train_rank's, step for step; what changes is where the work runs. The host only
// enqueues: gathering the batch, forward, loss, backward, the all-reduces and the optimizer step
// all go on the group's stream, and the host waits once per step, for the loss the report prints.
// Forward, Backward and OptimizerStep events therefore mark when the host enqueued the work;
// StepEnd, which follows the loss read-back, marks when the GPU had got that far.
//
// Of the failure labs, restarts from epoch checkpoints and live stops work here; the injected
// faults, uneven inputs with Join, collective fingerprints and the flight recorder are CPU-only
// for now, and a job asking for them on NCCL is refused with a message saying so.

namespace ringlab {
namespace {

// The seed's direct all_reduce of [1, 2, 3], on the device like everything else.
void run_demo(cuda::CudaDistributedDataParallel& ddp, NcclProcessGroup& group, RankOutcome& out) {
  out.demo_input = {1.0f, 2.0f, 3.0f};
  out.demo_output.assign(3, 0.0f);
  cuda::DeviceBuffer buffer;
  buffer.reserve_bytes(3 * sizeof(float));
  RINGLAB_CUDA_CHECK(cudaMemcpy(buffer.data(), out.demo_input.data(), 3 * sizeof(float), cudaMemcpyHostToDevice));
  const std::span<float> data{buffer.floats(), 3};
  ddp.allreduce(data, "demo");
  group.copy_to_host(data, out.demo_output.data());  // waits for the stream, with the timeout
}

TrainingState snapshot(cuda::CudaMlp& model, int epoch, int64_t batch, int64_t step) {
  TrainingState state{epoch, batch, step, std::vector<float>(model.num_parameters()), {}};
  model.download_parameters(state.parameters);
  state.momentum = model.download_momentum_buffer();
  return state;
}

}  // namespace

RankOutcome train_rank_cuda(const JobConfig& job, NcclProcessGroup& group, EventSink& events,
                            const TrainerHooks& hooks, const TrainingState* resume) {
  if (!job.faults.empty() || !job.uneven.empty() || job.join)
    throw InputError("--fault, --uneven and --join run on the CPU backends (gloo, mpi), not yet on nccl");
  const int rank = group.rank();
  const int world = group.size();
  RankOutcome out;

  // The seed script's order of draws from the global generator: data first, then the model. The
  // weights are drawn on the host, exactly as the CPU run draws them, then uploaded.
  Generator gen(job.seed);
  const data::TensorDataset dataset = data::make_regression_dataset(job.samples, job.features, gen);
  nn::Mlp initial(job.features, job.hidden, 1);
  initial.reset_parameters(gen);

  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(job.timeout_s * 1000));
  cuda::CudaMlp model(job.features, job.hidden, 1, group.stream());
  model.set_timeout(timeout);
  model.upload_parameters(resume ? std::span<const float>(resume->parameters) : initial.parameters());
  if (resume && !resume->momentum.empty()) model.upload_momentum_buffer(resume->momentum);
  model.upload_dataset(dataset.x, dataset.y, dataset.size);
  const float lr = static_cast<float>(job.lr), momentum = static_cast<float>(job.momentum),
              weight_decay = static_cast<float>(job.weight_decay);

  cuda::CudaDistributedDataParallel ddp(model, group, ddp_options_for(job, events, hooks));
  run_demo(ddp, group, out);

  data::DistributedSampler sampler({job.samples, world, rank, job.shuffle, job.seed, job.drop_last});
  out.batches_per_epoch = data::batches_per_epoch(sampler.num_samples(), job.batch_size);

  int64_t step = resume ? resume->steps_done : 0;
  int64_t train_ns = 0;
  const int first_epoch = resume ? resume->epoch : 0;
  for (int epoch = first_epoch; epoch < job.epochs; ++epoch) {
    if (job.set_epoch) sampler.set_epoch(epoch);  // forgetting this repeats epoch 0's order
    std::vector<int64_t> shard = sampler.indices();
    emit_shard(events, rank, step, epoch, shard);
    model.upload_epoch_indices(shard);  // once per epoch; each step gathers its rows on the GPU
    if (hooks.keep_history) out.shards.push_back(shard);
    const data::DataLoader loader(std::move(shard), job.batch_size);
    const int64_t first_batch = (resume && epoch == first_epoch) ? resume->batch : 0;

    for (int64_t b = first_batch; b < loader.num_batches(); ++b) {
      if (hooks.stop_at_step_boundary && hooks.stop_at_step_boundary(step)) {
        out.stopped = true;
        out.stopped_state = snapshot(model, epoch, b, step);
        out.final_parameters = out.stopped_state.parameters;
        count_steps(out, step - (resume ? resume->steps_done : 0), train_ns);
        return out;
      }
      const int64_t t_step = now_ns();
      ddp.set_step(step);
      events.emit(make_event(EventKind::StepBegin, rank, step, epoch));
      const int64_t batch_size = static_cast<int64_t>(loader.batch(b).size());
      const int64_t micro = b - first_batch;
      const bool sync = job.grad_accum <= 1 || (micro + 1) % job.grad_accum == 0 || b + 1 == loader.num_batches();
      const bool fresh = job.grad_accum <= 1 || micro % job.grad_accum == 0;
      if (fresh) model.zero_grad();

      int64_t t0 = now_ns();
      model.forward_batch(b * job.batch_size, batch_size);  // the loader's batch b, in shard order
      emit_span(events, EventKind::Forward, rank, step, epoch, t0);

      t0 = now_ns();
      ddp.backward_batch(sync);
      emit_span(events, EventKind::Backward, rank, step, epoch, t0);

      if (sync) {
        t0 = now_ns();
        model.sgd_step(lr, momentum, weight_decay);
        emit_span(events, EventKind::OptimizerStep, rank, step, epoch, t0);
      }
      const float loss = model.read_loss();  // the step's one wait for the GPU
      Event end = make_event(EventKind::StepEnd, rank, step, epoch);
      end.t_begin_ns = t_step;
      end.value = loss;
      events.emit(std::move(end));
      if (hooks.keep_history) out.step_loss.push_back(loss);
      train_ns += end.t_end_ns - t_step;
      ++step;
    }
    if (hooks.epoch_checkpoint && rank == 0) hooks.epoch_checkpoint(snapshot(model, epoch + 1, 0, step));
    if (rank == 0) {
      const double mse = model.dataset_mse();
      out.epoch_mse.push_back(mse);
      Event e = make_event(EventKind::EpochEnd, rank, step, epoch);
      e.value = mse;
      events.emit(std::move(e));
    }
  }
  count_steps(out, step - (resume ? resume->steps_done : 0), train_ns);
  out.final_parameters.resize(model.num_parameters());
  model.download_parameters(out.final_parameters);
  return out;
}

}  // namespace ringlab
