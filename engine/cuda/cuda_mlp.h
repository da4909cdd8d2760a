#pragma once
// The MLP of engine/nn on the GPU: Linear layers with Tanh between them, MSE and SGD, float32
// with TF32 off, so a GPU run can be held against the CPU engine number for number.
//
// The layout is the CPU model's: all parameters in ONE contiguous device buffer in PyTorch's
// parameter order (0.weight out x in row-major, 0.bias, 2.weight, ...), the gradients in a
// second buffer of the same layout. A DDP bucket is therefore a plain sub-span of
// device_gradients(), which the NCCL process group all-reduces in place.
//
// Everything is enqueued on one CUDA stream and nothing waits for the GPU, except the calls
// whose names say they read back (read_loss, download_*, dataset_mse). The training data stays
// on the device: upload the dataset once, the epoch's sample order once per epoch, and each
// step gathers its batch on the device.
//
// Spans returned or taken by the device_* / forward / mse_loss / backward calls hold DEVICE
// pointers; upload_* and download_* take host memory.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/cuda/device_buffer.h"
#include "engine/nn/mlp.h"

struct cublasContext;  // cuBLAS's handle type, cublasHandle_t == cublasContext*

namespace ringlab::cuda {

class CudaMlp {
 public:
  // Uses the calling thread's current device (select_cuda_device first). With stream == nullptr
  // the model creates and owns its own stream; otherwise it enqueues on the given one (share
  // the NCCL group's stream so all-reduces are ordered after the gradients they read).
  CudaMlp(int in_features, std::vector<int> hidden, int out_features, cudaStream_t stream = nullptr);
  ~CudaMlp();
  CudaMlp(const CudaMlp&) = delete;
  CudaMlp& operator=(const CudaMlp&) = delete;

  cudaStream_t stream() const { return stream_; }
  int in_features() const { return static_cast<int>(layers_.front().in); }
  int out_features() const { return static_cast<int>(layers_.back().out); }
  size_t num_parameters() const { return num_params_; }
  const std::vector<nn::ParameterView>& parameter_views() const { return views_; }

  // The flat device buffers (DEVICE pointers).
  std::span<float> device_parameters() { return {params_, num_params_}; }
  std::span<float> device_gradients() { return {grads_, num_params_}; }

  // Host <-> device copies of the flat buffers, e.g. from nn::Mlp::parameters(). These wait
  // (with the timeout below) for the stream's earlier work.
  void upload_parameters(std::span<const float> host);
  void download_parameters(std::span<float> host);
  void download_gradients(std::span<float> host);
  // The SGD momentum buffer, for checkpoints (empty until the first step with momentum).
  std::vector<float> download_momentum_buffer();
  void upload_momentum_buffer(std::span<const float> host);

  // Forward on a device input (batch x in, row-major). Returns the device output (batch x out),
  // valid until the next forward. Keeps the activations for backward.
  std::span<const float> forward(std::span<const float> x, int64_t batch);
  // MSE of pred against target (device spans of equal size); writes d loss / d pred into
  // grad_pred (device, may be empty) and starts copying the loss to pinned host memory.
  void mse_loss(std::span<const float> pred, std::span<const float> target, std::span<float> grad_pred);
  // Waits (with the timeout) for the last mse_loss and returns it: the one read-back per step.
  float read_loss();

  // Accumulates into device_gradients(). ready(i) is called for each parameter in reverse
  // parameter order, as soon as the kernels that finish its gradient are enqueued on stream();
  // work enqueued afterwards on the same stream sees the final gradient. Another stream must
  // first wait on gradient_ready_event(i).
  void backward(std::span<const float> grad_output, const std::function<void(int parameter_index)>& ready = {});
  cudaEvent_t gradient_ready_event(int parameter_index) const { return ready_events_.at(parameter_index); }
  void zero_grad();
  // grads *= factor (DDP's averaging by 1/world size), for parameter range [offset, offset + n).
  void scale_gradients(size_t offset, size_t n, float factor);
  void sgd_step(float lr, float momentum = 0.0f, float weight_decay = 0.0f);

  // The dataset, resident on the device: x is samples x in, y samples x out (host memory).
  void upload_dataset(std::span<const float> x, std::span<const float> y, int64_t samples);
  // This rank's sample order for the epoch (the DistributedSampler's indices), copied once.
  void upload_epoch_indices(std::span<const int64_t> indices);
  // A training step's forward on the batch order[offset, offset + batch): gathers the rows on
  // the device, runs forward and the MSE (its loss copy started, its gradient kept).
  void forward_batch(int64_t offset, int64_t batch);
  // Backward from that MSE gradient, with `ready` as in backward().
  void backward_batch(const std::function<void(int)>& ready = {});
  // Both of the above.
  void train_batch(int64_t offset, int64_t batch, const std::function<void(int)>& ready = {});
  // MSE of the current model over the whole resident dataset (waits for the result).
  float dataset_mse();

  // How long a read-back may wait for the GPU.
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }

 private:
  float* weight(size_t layer) const { return params_ + views_[2 * layer].offset; }
  float* bias(size_t layer) const { return params_ + views_[2 * layer + 1].offset; }
  void reserve_rows(int64_t rows);
  void grow(DeviceBuffer& buffer, size_t bytes);
  void copy_to_host(const float* device, std::span<float> host, size_t n, const char* what);
  void copy_to_device(std::span<const float> host, float* device, size_t n, const char* what);
  void synchronize(const char* what);
  void release() noexcept;

  std::vector<nn::LinearShape> layers_;
  std::vector<nn::ParameterView> views_;
  size_t num_params_ = 0;

  cudaStream_t stream_ = nullptr;
  bool owns_stream_ = false;
  cublasContext* cublas_ = nullptr;
  std::chrono::milliseconds timeout_{60000};

  float* params_ = nullptr;
  float* grads_ = nullptr;
  DeviceBuffer params_grads_;  // params_ and grads_ live here, one after the other
  DeviceBuffer momentum_;
  bool has_momentum_ = false;

  // acts_[0] is the input, acts_[l + 1] the output of layer l (after Tanh for hidden layers).
  std::vector<DeviceBuffer> acts_;
  DeviceBuffer grad_a_, grad_b_;  // backward's ping-pong buffers, rows x widest layer
  int64_t rows_capacity_ = 0;
  int64_t batch_ = 0;
  int64_t widest_ = 0;

  DeviceBuffer data_x_, data_y_, epoch_indices_;
  int64_t samples_ = 0, epoch_count_ = 0, batch_rows_ = 0;
  DeviceBuffer batch_x_, batch_y_, grad_pred_, eval_pred_;

  DeviceBuffer loss_device_;
  float* loss_host_ = nullptr;  // pinned, so the copy is truly asynchronous
  cudaEvent_t loss_ready_ = nullptr;
  cudaEvent_t sync_event_ = nullptr;
  std::vector<cudaEvent_t> ready_events_;
};

}  // namespace ringlab::cuda
