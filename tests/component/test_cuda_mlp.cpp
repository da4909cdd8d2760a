// The MLP on the GPU against the CPU engine (engine/nn), on the seed's 6 -> 48 -> 48 -> 1 model
// with seed 5's data and weights: forward, loss, backward (and the order parameters become
// ready), SGD with momentum and weight decay, and whole epochs on the device-resident dataset.
// Without a usable GPU the binary prints why and exits 77, which ctest reports as skipped.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/cuda/cuda_device.h"

namespace {

[[maybe_unused]] const bool kDeviceChecked = [] {
  // Runs before doctest's main: with nothing to test, ctest must show a skip, never a pass.
  const ringlab::CudaAvailability a = ringlab::cuda_availability();
  if (!a.usable) {
    const bool says_no_device = a.reason.rfind("no CUDA device", 0) == 0;
    std::printf("SKIP: %s%s\n", says_no_device ? "" : "no CUDA device: ", a.reason.c_str());
    std::fflush(stdout);
    std::exit(77);
  }
  return true;
}();

}  // namespace

#ifdef RINGLAB_HAVE_CUDA

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/generator.h"
#include "engine/cuda/cuda_mlp.h"
#include "engine/cuda/device_buffer.h"
#include "engine/data/data_loader.h"
#include "engine/data/distributed_sampler.h"
#include "engine/data/tensor_dataset.h"
#include "engine/nn/mlp.h"
#include "engine/nn/mse.h"
#include "engine/nn/sgd.h"
#include "engine/cuda/cuda_trainer.h"
#include "engine/dist/local_process_group.h"
#include "engine/cuda/nccl/nccl_process_group.h"
#include "engine/net/store.h"
#include "engine/rank/trainer.h"

using ringlab::cuda::CudaMlp;
using ringlab::cuda::DeviceBuffer;

namespace {

constexpr double kTolerance = 1e-5;

// max |a - b| / max |b|: relative to the vector's scale, so entries near zero do not turn
// rounding noise into a huge relative error.
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return scale > 0.0 ? diff / scale : diff;
}

std::vector<float> to_host(std::span<const float> device) {
  std::vector<float> host(device.size());
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaMemcpy(host.data(), device.data(), device.size_bytes(), cudaMemcpyDeviceToHost) == cudaSuccess);
  return host;
}

std::span<float> to_device(const std::vector<float>& host, DeviceBuffer& buffer) {
  buffer.reserve_bytes(host.size() * sizeof(float));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaMemcpy(buffer.data(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  return {buffer.floats(), host.size()};
}

// The seed's job: data first, then the model, from one generator seeded with 5.
struct SeedJob {
  ringlab::data::TensorDataset data;
  ringlab::nn::Mlp cpu{6, {48, 48}, 1};
  SeedJob() {
    ringlab::Generator gen(5);
    data = ringlab::data::make_regression_dataset(256, 6, gen);
    cpu.reset_parameters(gen);
  }
};

std::vector<float> first_rows(const std::vector<float>& m, int64_t rows, int64_t cols) {
  return {m.begin(), m.begin() + rows * cols};
}

}  // namespace

TEST_CASE("CudaMlp has the CPU model's parameter layout") {
  SeedJob job;
  CudaMlp gpu(6, {48, 48}, 1);
  REQUIRE(gpu.num_parameters() == job.cpu.num_parameters());
  REQUIRE(gpu.num_parameters() == 6 * 48 + 48 + 48 * 48 + 48 + 48 + 1);
  for (size_t i = 0; i < gpu.parameter_views().size(); ++i) {
    CHECK(gpu.parameter_views()[i].name == job.cpu.parameter_views()[i].name);
    CHECK(gpu.parameter_views()[i].offset == job.cpu.parameter_views()[i].offset);
    CHECK(gpu.parameter_views()[i].numel == job.cpu.parameter_views()[i].numel);
  }
  gpu.upload_parameters(job.cpu.parameters());
  std::vector<float> back(gpu.num_parameters());
  gpu.download_parameters(back);
  CHECK(back == std::vector<float>(job.cpu.parameters().begin(), job.cpu.parameters().end()));
  // The seed's first Linear weight, as PyTorch draws it (reference/torch-fidelity.md).
  CHECK(back[0] == doctest::Approx(0.036556).epsilon(1e-4));  // printed to 6 decimals
}

TEST_CASE("forward, MSE and backward match the CPU engine") {
  SeedJob job;
  CudaMlp gpu(6, {48, 48}, 1);
  gpu.upload_parameters(job.cpu.parameters());
  const int64_t batch = 32;
  const std::vector<float> x = first_rows(job.data.x, batch, 6);
  const std::vector<float> y = first_rows(job.data.y, batch, 1);

  // CPU reference.
  const std::span<const float> cpu_pred_span = job.cpu.forward(x, batch);
  const std::vector<float> cpu_pred(cpu_pred_span.begin(), cpu_pred_span.end());
  std::vector<float> cpu_grad_pred(cpu_pred.size());
  const float cpu_loss = ringlab::nn::mse_loss(cpu_pred, y, cpu_grad_pred);
  std::vector<int> cpu_order;
  job.cpu.zero_grad();
  job.cpu.backward(cpu_grad_pred, [&](int p) { cpu_order.push_back(p); });

  // The same on the GPU.
  DeviceBuffer dx, dy, dgrad;
  const std::span<const float> pred = gpu.forward(to_device(x, dx), batch);
  const std::vector<float> gpu_pred = to_host(pred);
  CHECK(relative_error(gpu_pred, cpu_pred) <= kTolerance);

  std::span<float> grad_pred = to_device(std::vector<float>(pred.size(), 0.0f), dgrad);
  gpu.mse_loss(pred, to_device(y, dy), grad_pred);
  const float gpu_loss = gpu.read_loss();
  CHECK(gpu_loss > 0.0f);
  CHECK(std::fabs(gpu_loss - cpu_loss) <= kTolerance * cpu_loss);
  CHECK(relative_error(to_host(grad_pred), cpu_grad_pred) <= kTolerance);

  std::vector<int> gpu_order;
  gpu.zero_grad();
  gpu.backward(grad_pred, [&](int p) { gpu_order.push_back(p); });
  CHECK(gpu_order == std::vector<int>{5, 4, 3, 2, 1, 0});
  CHECK(gpu_order == cpu_order);

  std::vector<float> gpu_grads(gpu.num_parameters());
  gpu.download_gradients(gpu_grads);
  for (const auto& view : job.cpu.parameter_views()) {
    CAPTURE(view.name);
    const std::vector<float> g(gpu_grads.begin() + view.offset, gpu_grads.begin() + view.offset + view.numel);
    const std::vector<float> c(job.cpu.gradients().begin() + view.offset,
                               job.cpu.gradients().begin() + view.offset + view.numel);
    CHECK(relative_error(g, c) <= kTolerance);
  }

  // Backward accumulates, like PyTorch's .grad: a second pass doubles every gradient.
  gpu.backward(grad_pred);
  std::vector<float> twice(gpu.num_parameters());
  gpu.download_gradients(twice);
  for (size_t i = 0; i < twice.size(); ++i) twice[i] *= 0.5f;
  CHECK(relative_error(twice, gpu_grads) <= 1e-6);
}

TEST_CASE("SGD with momentum and weight decay matches torch.optim.SGD on the CPU") {
  SeedJob job;
  CudaMlp gpu(6, {48, 48}, 1);
  gpu.upload_parameters(job.cpu.parameters());
  ringlab::nn::Sgd cpu_opt(0.03, 0.9, 0.01);
  // Hand both optimizers the same gradients, so only the update rule is compared.
  std::vector<float> grads(job.cpu.num_parameters());
  for (size_t i = 0; i < grads.size(); ++i) grads[i] = std::sin(0.37f * static_cast<float>(i)) * 0.5f;
  for (int step = 0; step < 3; ++step) {  // the first step starts the momentum buffer
    CAPTURE(step);
    REQUIRE(cudaMemcpy(gpu.device_gradients().data(), grads.data(), grads.size() * sizeof(float),
                       cudaMemcpyHostToDevice) == cudaSuccess);
    cpu_opt.step(job.cpu.parameters(), grads);
    gpu.sgd_step(0.03f, 0.9f, 0.01f);
    std::vector<float> params(gpu.num_parameters());
    gpu.download_parameters(params);
    const std::vector<float> cpu_params(job.cpu.parameters().begin(), job.cpu.parameters().end());
    // The kernel performs the CPU's float operations in the CPU's order, without fusing.
    CHECK(relative_error(params, cpu_params) <= 1e-6);
    CHECK(relative_error(gpu.download_momentum_buffer(), cpu_opt.momentum_buffer()) <= 1e-6);
  }
}

TEST_CASE("two epochs on the device-resident dataset follow the CPU run") {
  SeedJob job;
  CudaMlp gpu(6, {48, 48}, 1);
  gpu.upload_parameters(job.cpu.parameters());
  gpu.upload_dataset(job.data.x, job.data.y, job.data.size);
  CHECK(std::fabs(gpu.dataset_mse() - [&] {
          std::vector<float> pred(job.data.size);
          job.cpu.predict(job.data.x, job.data.size, pred);
          return ringlab::nn::mse_loss(pred, job.data.y);
        }()) <= kTolerance);

  ringlab::nn::Sgd cpu_opt(0.03);
  ringlab::data::DistributedSampler sampler({256, 1, 0, true, 5, false});
  std::vector<float> bx, by, grad_pred;
  for (int epoch = 0; epoch < 2; ++epoch) {
    sampler.set_epoch(epoch);
    const std::vector<int64_t> order = sampler.indices();
    if (epoch == 0) CHECK(std::vector<int64_t>(order.begin(), order.begin() + 4) == std::vector<int64_t>{99, 70, 55, 138});
    gpu.upload_epoch_indices(order);
    const ringlab::data::DataLoader loader(order, 32);
    for (int64_t b = 0; b < loader.num_batches(); ++b) {
      const auto batch = loader.batch(b);
      job.data.gather(batch, bx, by);
      job.cpu.zero_grad();
      const auto pred = job.cpu.forward(bx, static_cast<int64_t>(batch.size()));
      grad_pred.resize(pred.size());
      const float cpu_loss = ringlab::nn::mse_loss(pred, by, grad_pred);
      job.cpu.backward(grad_pred);
      cpu_opt.step(job.cpu.parameters(), job.cpu.gradients());

      gpu.zero_grad();
      gpu.train_batch(b * 32, static_cast<int64_t>(batch.size()));
      gpu.sgd_step(0.03f);
      CAPTURE(epoch);
      CAPTURE(b);
      CHECK(std::fabs(gpu.read_loss() - cpu_loss) <= kTolerance * cpu_loss);
    }
    std::vector<float> pred(job.data.size);
    job.cpu.predict(job.data.x, job.data.size, pred);
    const float cpu_mse = ringlab::nn::mse_loss(pred, job.data.y);
    CHECK(std::fabs(gpu.dataset_mse() - cpu_mse) <= kTolerance * cpu_mse);
  }
  // The seed's printed MSE after epoch 2 (1 rank), for the CPU engine and so for the GPU.
  std::vector<float> params(gpu.num_parameters());
  gpu.download_parameters(params);
  const std::vector<float> cpu_params(job.cpu.parameters().begin(), job.cpu.parameters().end());
  CHECK(relative_error(params, cpu_params) <= kTolerance);
  CHECK(gpu.dataset_mse() == doctest::Approx(0.136688).epsilon(1e-4));
}

namespace {

// Keeps what the trainer reports, to count it.
struct CollectingSink : ringlab::EventSink {
  std::vector<ringlab::Event> events;
  void emit(ringlab::Event e) override { events.push_back(std::move(e)); }
  size_t count(ringlab::EventKind kind) const {
    return static_cast<size_t>(std::count_if(events.begin(), events.end(), [&](const auto& e) { return e.kind == kind; }));
  }
};

}  // namespace

TEST_CASE("the seed's job on the NCCL backend reports the CPU run's per-epoch MSE") {
  ringlab::JobConfig job;  // the defaults are the seed's job
  ringlab::LocalWorld cpu_world(1);
  ringlab::NullEventSink quiet;
  const ringlab::RankOutcome cpu = ringlab::train_rank(job, cpu_world.group(0), quiet);

  job.backend = "nccl";
  ringlab::StoreServer server("127.0.0.1", 0, "test-cuda-trainer");
  ringlab::StoreClient client("127.0.0.1", server.port(), "test-cuda-trainer", std::chrono::seconds(30));
  ringlab::NcclOptions options;
  options.local_rank = 0;
  ringlab::NcclProcessGroup group(client, 0, 1, options);
  CollectingSink sink;
  const ringlab::RankOutcome gpu = ringlab::train_rank_cuda(job, group, sink);

  CHECK(gpu.demo_output == std::vector<float>{1.0f, 2.0f, 3.0f});
  CHECK(gpu.batches_per_epoch == 8);
  CHECK(gpu.steps == cpu.steps);
  CHECK(gpu.shards == cpu.shards);
  REQUIRE(gpu.step_loss.size() == cpu.step_loss.size());
  for (size_t i = 0; i < gpu.step_loss.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(gpu.step_loss[i] - cpu.step_loss[i]) <= kTolerance * cpu.step_loss[i]);
  }
  // The seed's printed run: MSE after epochs 1-4.
  const std::vector<double> seed = {0.900974, 0.136688, 0.065360, 0.062745};
  REQUIRE(gpu.epoch_mse.size() == 4);
  REQUIRE(cpu.epoch_mse.size() == 4);
  for (size_t e = 0; e < 4; ++e) {
    CAPTURE(e);
    CHECK(std::fabs(gpu.epoch_mse[e] - cpu.epoch_mse[e]) <= 1e-4);
    CHECK(std::fabs(gpu.epoch_mse[e] - seed[e]) <= 1e-5);
  }
  CHECK(relative_error(gpu.final_parameters, cpu.final_parameters) <= kTolerance);
  CHECK(sink.count(ringlab::EventKind::StepEnd) == 32);
  CHECK(sink.count(ringlab::EventKind::EpochEnd) == 4);
  CHECK(sink.count(ringlab::EventKind::SamplerShard) == 4);
}

TEST_CASE("bad input is an error, not a crash") {
  CudaMlp gpu(6, {48, 48}, 1);
  DeviceBuffer dx;
  const std::span<float> x = to_device(std::vector<float>(5, 1.0f), dx);
  CHECK_THROWS_AS(gpu.forward(x, 1), ringlab::Error);
  CHECK_THROWS_AS(gpu.upload_parameters(std::vector<float>(3)), ringlab::Error);
  CHECK_THROWS_AS(gpu.train_batch(0, 1), ringlab::Error);  // no epoch indices yet
  std::vector<float> xs(12, 0.5f), ys(2, 0.0f);
  gpu.upload_dataset(xs, ys, 2);
  CHECK_THROWS_AS(gpu.upload_epoch_indices(std::vector<int64_t>{0, 2}), ringlab::Error);
  CHECK_THROWS_AS(CudaMlp(0, {4}, 1), ringlab::InputError);
}

#endif  // RINGLAB_HAVE_CUDA
