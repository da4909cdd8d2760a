#include "engine/cuda/cuda_mlp.h"

#include <algorithm>
#include <utility>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/cuda/cuda_check.h"
#include "engine/cuda/cuda_wait.h"
#include "engine/cuda/mlp_kernels.h"
#include "engine/cuda/vector_ops.h"

// Why cuBLAS for the matrix products rather than hand-written kernels: for the seed's
// 6 -> 48 -> 48 -> 1 model every product is tiny and a step costs what its ~15 launches cost,
// whoever writes the kernels; but the app lets the user widen the layers, and there cuBLAS's
// tuned SGEMM stays fast where a simple kernel would not. PEDANTIC math pins it to plain FP32
// arithmetic (no TF32 tensor cores, no reduced-precision emulation, whatever the environment
// asks), so it differs from the CPU only in the order of the sums: far below the 1e-5 bar.
//
// cuBLAS is column-major and our matrices are row-major. A row-major r x c matrix is the same
// memory as a column-major c x r matrix, its transpose. So a row-major product C = A B is
// computed as the column-major product C^T = B^T A^T: swap the operands, keep the flags.

namespace ringlab::cuda {
namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

// Rounds a float count up to a 256-byte boundary, so the gradient buffer starts aligned.
size_t aligned_floats(size_t n) { return (n + 63) / 64 * 64; }

}  // namespace

CudaMlp::CudaMlp(int in_features, std::vector<int> hidden, int out_features, cudaStream_t stream) {
  if (in_features < 1 || out_features < 1) throw InputError("an MLP needs at least one input and one output");
  std::vector<int> widths = {in_features};
  widths.insert(widths.end(), hidden.begin(), hidden.end());
  widths.push_back(out_features);
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    if (widths[l + 1] < 1) throw InputError("every hidden layer needs at least one unit");
    const nn::LinearShape s{widths[l], widths[l + 1]};
    layers_.push_back(s);
    // The same names and offsets as nn::Mlp: Sequential numbers Linear layers 0, 2, 4, ...
    const std::string prefix = std::to_string(2 * l);
    views_.push_back({prefix + ".weight", num_params_, static_cast<size_t>(s.in * s.out), s.out, s.in});
    num_params_ += s.in * s.out;
    views_.push_back({prefix + ".bias", num_params_, static_cast<size_t>(s.out), s.out, 1});
    num_params_ += s.out;
  }
  widest_ = *std::max_element(widths.begin(), widths.end());
  acts_.resize(layers_.size() + 1);

  try {
    if (stream) {
      stream_ = stream;
    } else {
      // Non-blocking: the legacy default stream (used by plain cudaMemcpy) does not serialise it.
      RINGLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
      owns_stream_ = true;
    }
    cublasHandle_t handle = nullptr;
    RINGLAB_CUBLAS_CHECK(cublasCreate(&handle));
    cublas_ = handle;
    RINGLAB_CUBLAS_CHECK(cublasSetStream(handle, stream_));
    RINGLAB_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));

    const size_t grads_at = aligned_floats(num_params_);
    params_grads_.reserve_bytes((grads_at + num_params_) * sizeof(float));
    params_ = params_grads_.floats();
    grads_ = params_ + grads_at;
    RINGLAB_CUDA_CHECK(cudaMemsetAsync(params_grads_.data(), 0, params_grads_.capacity_bytes(), stream_));

    loss_device_.reserve_bytes(sizeof(float));
    RINGLAB_CUDA_CHECK(cudaMallocHost(&loss_host_, sizeof(float)));
    *loss_host_ = 0.0f;
    RINGLAB_CUDA_CHECK(cudaEventCreateWithFlags(&loss_ready_, cudaEventDisableTiming));
    RINGLAB_CUDA_CHECK(cudaEventCreateWithFlags(&sync_event_, cudaEventDisableTiming));
    ready_events_.assign(views_.size(), nullptr);
    for (cudaEvent_t& e : ready_events_) RINGLAB_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  } catch (...) {
    release();  // a constructor that throws gets no destructor
    throw;
  }
}

CudaMlp::~CudaMlp() {
  // Errors cannot leave a destructor; a broken device shows up in the next call that checks.
  // Bounded wait for queued work (a GPU stuck on a dead peer is freed by the group's abort).
  if (sync_event_ && cudaEventRecord(sync_event_, stream_) == cudaSuccess)
    poll_until([this] { return cudaEventQuery(sync_event_) != cudaErrorNotReady; }, timeout_);
  release();
}

void CudaMlp::release() noexcept {
  for (cudaEvent_t& e : ready_events_)
    if (e) cudaEventDestroy(std::exchange(e, nullptr));
  if (sync_event_) cudaEventDestroy(std::exchange(sync_event_, nullptr));
  if (loss_ready_) cudaEventDestroy(std::exchange(loss_ready_, nullptr));
  if (loss_host_) cudaFreeHost(std::exchange(loss_host_, nullptr));
  if (cublas_) cublasDestroy(std::exchange(cublas_, nullptr));
  if (owns_stream_ && stream_) cudaStreamDestroy(stream_);
  stream_ = nullptr;
  owns_stream_ = false;
}

// ---- waiting and copying ------------------------------------------------------------------

void CudaMlp::synchronize(const char* what) {
  RINGLAB_CUDA_CHECK(cudaEventRecord(sync_event_, stream_));
  wait_for_event(sync_event_, timeout_, ErrorContext{-1, what, -1});
}

void CudaMlp::grow(DeviceBuffer& buffer, size_t bytes) {
  if (buffer.data() && bytes <= buffer.capacity_bytes()) return;
  // Growing frees the old allocation, which kernels queued earlier may still be using.
  synchronize("CudaMlp: growing a device buffer");
  buffer.reserve_bytes(bytes);
}

void CudaMlp::copy_to_host(const float* device, std::span<float> host, size_t n, const char* what) {
  if (host.size() != n) throw Error(fmt::format("{}: host buffer has {} floats, the model {}", what, host.size(), n));
  // Wait with a timeout first: a copy to pageable memory would otherwise wait for the stream
  // without one. Once the stream is idle the copy itself cannot hang.
  synchronize(what);
  if (n > 0) RINGLAB_CUDA_CHECK(cudaMemcpyAsync(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  synchronize(what);
}

void CudaMlp::copy_to_device(std::span<const float> host, float* device, size_t n, const char* what) {
  if (host.size() != n) throw Error(fmt::format("{}: host buffer has {} floats, expected {}", what, host.size(), n));
  // Also makes sure no queued kernel still reads the memory about to be overwritten.
  synchronize(what);
  if (n > 0) RINGLAB_CUDA_CHECK(cudaMemcpyAsync(device, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream_));
  synchronize(what);
}

void CudaMlp::upload_parameters(std::span<const float> host) {
  copy_to_device(host, params_, num_params_, "CudaMlp::upload_parameters");
}
void CudaMlp::download_parameters(std::span<float> host) {
  copy_to_host(params_, host, num_params_, "CudaMlp::download_parameters");
}
void CudaMlp::download_gradients(std::span<float> host) {
  copy_to_host(grads_, host, num_params_, "CudaMlp::download_gradients");
}

std::vector<float> CudaMlp::download_momentum_buffer() {
  if (!has_momentum_) return {};
  std::vector<float> host(num_params_);
  copy_to_host(momentum_.floats(), host, num_params_, "CudaMlp::download_momentum_buffer");
  return host;
}

void CudaMlp::upload_momentum_buffer(std::span<const float> host) {
  if (host.empty()) {
    has_momentum_ = false;
    return;
  }
  grow(momentum_, num_params_ * sizeof(float));
  copy_to_device(host, momentum_.floats(), num_params_, "CudaMlp::upload_momentum_buffer");
  has_momentum_ = true;
}

// ---- forward, loss, backward --------------------------------------------------------------

void CudaMlp::reserve_rows(int64_t rows) {
  if (rows <= rows_capacity_) return;
  grow(acts_[0], rows * layers_.front().in * sizeof(float));
  for (size_t l = 0; l < layers_.size(); ++l) grow(acts_[l + 1], rows * layers_[l].out * sizeof(float));
  grow(grad_a_, rows * widest_ * sizeof(float));
  grow(grad_b_, rows * widest_ * sizeof(float));
  rows_capacity_ = rows;
}

std::span<const float> CudaMlp::forward(std::span<const float> x, int64_t batch) {
  const int64_t in = layers_.front().in;
  if (batch < 1 || static_cast<int64_t>(x.size()) != batch * in)
    throw Error(fmt::format("CudaMlp::forward: input has {} values, expected {} x {}", x.size(), batch, in));
  reserve_rows(batch);
  batch_ = batch;
  batch_rows_ = 0;  // the activations no longer belong to a forward_batch
  RINGLAB_CUDA_CHECK(cudaMemcpyAsync(acts_[0].data(), x.data(), x.size_bytes(), cudaMemcpyDeviceToDevice, stream_));
  for (size_t l = 0; l < layers_.size(); ++l) {
    const nn::LinearShape s = layers_[l];
    float* z = acts_[l + 1].floats();
    // Z (batch x out) = A (batch x in) W^T, i.e. column-major Z^T = W A^T:
    // W's memory read column-major is W^T (in x out), so it takes OP_T; A's is A^T, OP_N.
    RINGLAB_CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.out),
                                     static_cast<int>(batch), static_cast<int>(s.in), &kOne, weight(l),
                                     static_cast<int>(s.in), acts_[l].floats(), static_cast<int>(s.in), &kZero, z,
                                     static_cast<int>(s.out)));
    add_bias_activate(z, bias(l), batch, s.out, l + 1 < layers_.size(), stream_);
  }
  return {acts_.back().floats(), static_cast<size_t>(batch * layers_.back().out)};
}

void CudaMlp::mse_loss(std::span<const float> pred, std::span<const float> target, std::span<float> grad_pred) {
  if (pred.size() != target.size() || (!grad_pred.empty() && grad_pred.size() != pred.size()))
    throw Error("CudaMlp::mse_loss: prediction, target and gradient sizes differ");
  cuda::mse_loss(pred.data(), target.data(), static_cast<int64_t>(pred.size()),
                 grad_pred.empty() ? nullptr : grad_pred.data(), loss_device_.floats(), stream_);
  // Pinned destination: the copy runs on the stream and the host goes on at once.
  RINGLAB_CUDA_CHECK(cudaMemcpyAsync(loss_host_, loss_device_.data(), sizeof(float), cudaMemcpyDeviceToHost, stream_));
  RINGLAB_CUDA_CHECK(cudaEventRecord(loss_ready_, stream_));
}

float CudaMlp::read_loss() {
  wait_for_event(loss_ready_, timeout_, ErrorContext{-1, "CudaMlp::read_loss", -1});
  return *loss_host_;
}

void CudaMlp::backward(std::span<const float> grad_output, const std::function<void(int)>& ready) {
  const int64_t out = layers_.back().out;
  if (batch_ < 1 || static_cast<int64_t>(grad_output.size()) != batch_ * out)
    throw Error(fmt::format("CudaMlp::backward: gradient has {} values, expected {} x {} (forward first)",
                            grad_output.size(), batch_, out));
  float* g = grad_a_.floats();      // d loss / d (this layer's output), batch x out
  float* g_next = grad_b_.floats(); // d loss / d (this layer's input), batch x in
  RINGLAB_CUDA_CHECK(cudaMemcpyAsync(g, grad_output.data(), grad_output.size_bytes(), cudaMemcpyDeviceToDevice, stream_));
  for (size_t l = layers_.size(); l-- > 0;) {
    const nn::LinearShape s = layers_[l];
    const int in = static_cast<int>(s.in), outl = static_cast<int>(s.out), rows = static_cast<int>(batch_);
    // A hidden layer's stored activation is tanh's output: go back through Tanh first.
    if (l + 1 < layers_.size()) tanh_backward(g, acts_[l + 1].floats(), batch_ * s.out, stream_);

    // Layer l's gradients are final once its own kernels are enqueued, before any earlier
    // layer is touched: the bias (a column sum) first, as PyTorch's autograd finishes it first.
    const int bias_index = static_cast<int>(2 * l + 1), weight_index = static_cast<int>(2 * l);
    accumulate_bias_grad(grads_ + views_[bias_index].offset, g, batch_, s.out, stream_);
    RINGLAB_CUDA_CHECK(cudaEventRecord(ready_events_[bias_index], stream_));
    if (ready) ready(bias_index);

    // dW (out x in) += G^T A: column-major dW^T = A^T G, with A^T = A's memory (OP_N) and
    // G = the transpose of G's column-major reading (OP_T). beta = 1 accumulates.
    RINGLAB_CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_T, in, outl, rows, &kOne, acts_[l].floats(), in,
                                     g, outl, &kOne, grads_ + views_[weight_index].offset, in));
    RINGLAB_CUDA_CHECK(cudaEventRecord(ready_events_[weight_index], stream_));
    if (ready) ready(weight_index);

    if (l > 0) {
      // dA (batch x in) = G W: column-major dA^T = W^T G^T, both read as stored (OP_N, OP_N).
      RINGLAB_CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, in, rows, outl, &kOne, weight(l), in, g,
                                       outl, &kZero, g_next, in));
      std::swap(g, g_next);
    }
  }
}

void CudaMlp::zero_grad() {
  RINGLAB_CUDA_CHECK(cudaMemsetAsync(grads_, 0, num_params_ * sizeof(float), stream_));
}

void CudaMlp::scale_gradients(size_t offset, size_t n, float factor) {
  if (offset + n > num_params_) throw Error("CudaMlp::scale_gradients: range outside the gradient buffer");
  scale_inplace(grads_ + offset, factor, n, stream_);
}

void CudaMlp::sgd_step(float lr, float momentum, float weight_decay) {
  bool first = false;
  if (momentum != 0.0f && !has_momentum_) {
    grow(momentum_, num_params_ * sizeof(float));
    has_momentum_ = true;
    first = true;  // PyTorch starts the buffer as a copy of the first step's gradient
  }
  cuda::sgd_step(params_, grads_, momentum_.floats(), static_cast<int64_t>(num_params_), lr, momentum,
                 weight_decay, first, stream_);
}

// ---- the resident dataset -----------------------------------------------------------------

void CudaMlp::upload_dataset(std::span<const float> x, std::span<const float> y, int64_t samples) {
  const int64_t in = layers_.front().in, out = layers_.back().out;
  if (samples < 1 || static_cast<int64_t>(x.size()) != samples * in || static_cast<int64_t>(y.size()) != samples * out)
    throw Error(fmt::format("CudaMlp::upload_dataset: {} samples need {} x and {} y values; got {} and {}", samples,
                            samples * in, samples * out, x.size(), y.size()));
  grow(data_x_, x.size_bytes());
  grow(data_y_, y.size_bytes());
  copy_to_device(x, data_x_.floats(), x.size(), "CudaMlp::upload_dataset");
  copy_to_device(y, data_y_.floats(), y.size(), "CudaMlp::upload_dataset");
  samples_ = samples;
}

void CudaMlp::upload_epoch_indices(std::span<const int64_t> indices) {
  for (int64_t i : indices)
    if (i < 0 || i >= samples_)
      throw Error(fmt::format("CudaMlp::upload_epoch_indices: index {} outside the {}-sample dataset", i, samples_));
  // Earlier gathers may still be reading the old list: wait for them before overwriting it.
  synchronize("CudaMlp::upload_epoch_indices");
  grow(epoch_indices_, indices.size_bytes());
  if (!indices.empty())
    RINGLAB_CUDA_CHECK(cudaMemcpyAsync(epoch_indices_.data(), indices.data(), indices.size_bytes(),
                                       cudaMemcpyHostToDevice, stream_));
  synchronize("CudaMlp::upload_epoch_indices");
  epoch_count_ = static_cast<int64_t>(indices.size());
}

void CudaMlp::forward_batch(int64_t offset, int64_t batch) {
  if (batch < 1 || offset < 0 || offset + batch > epoch_count_)
    throw Error(fmt::format("CudaMlp::forward_batch: batch [{}, {}) outside the epoch's {} indices", offset,
                            offset + batch, epoch_count_));
  const int64_t in = layers_.front().in, out = layers_.back().out;
  grow(batch_x_, batch * in * sizeof(float));
  grow(batch_y_, batch * out * sizeof(float));
  grow(grad_pred_, batch * out * sizeof(float));
  const int64_t* order = static_cast<const int64_t*>(epoch_indices_.data()) + offset;
  gather_rows(batch_x_.floats(), data_x_.floats(), order, batch, in, stream_);
  gather_rows(batch_y_.floats(), data_y_.floats(), order, batch, out, stream_);
  const size_t n_out = static_cast<size_t>(batch * out);
  const std::span<const float> pred = forward({batch_x_.floats(), static_cast<size_t>(batch * in)}, batch);
  mse_loss(pred, {batch_y_.floats(), n_out}, {grad_pred_.floats(), n_out});
  batch_rows_ = batch;
}

void CudaMlp::backward_batch(const std::function<void(int)>& ready) {
  if (batch_rows_ < 1)
    throw Error("CudaMlp::backward_batch: no forward_batch to go back from");
  backward({grad_pred_.floats(), static_cast<size_t>(batch_rows_ * layers_.back().out)}, ready);
}

void CudaMlp::train_batch(int64_t offset, int64_t batch, const std::function<void(int)>& ready) {
  forward_batch(offset, batch);
  backward_batch(ready);
}

float CudaMlp::dataset_mse() {
  if (samples_ < 1) throw Error("CudaMlp::dataset_mse: no dataset uploaded");
  const int64_t in = layers_.front().in, out = layers_.back().out;
  const std::span<const float> pred = forward({data_x_.floats(), static_cast<size_t>(samples_ * in)}, samples_);
  mse_loss(pred, {data_y_.floats(), static_cast<size_t>(samples_ * out)}, {});
  return read_loss();
}

}  // namespace ringlab::cuda
