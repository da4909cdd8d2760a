#pragma once
// torch.nn.Linear on raw float32 buffers: y = x W^T + b, with W stored out x in, row-major,
// exactly as PyTorch stores it (so flat parameter buffers line up with state_dict order).
#include <cstdint>

namespace ringlab {
class Generator;
}

namespace ringlab::nn {

struct LinearShape {
  int64_t in = 0;
  int64_t out = 0;
};

// PyTorch's default initialisation: kaiming_uniform_(a=sqrt(5)) for the weight reduces to
// uniform(-1/sqrt(in), 1/sqrt(in)); the bias uses the same bound. Weight first, then bias.
void linear_reset_parameters(LinearShape s, float* weight, float* bias, Generator& gen);

// y[b, o] = bias[o] + sum_i x[b, i] * weight[o, i]. `weight_t` is scratch of in*out floats.
void linear_forward(LinearShape s, const float* x, int64_t batch, const float* weight,
                    const float* bias, float* weight_t, float* y);

// Accumulates dW += dY^T x and db += sum_b dY. `dy_t` is scratch of batch*out floats.
void linear_backward_params(LinearShape s, const float* x, const float* dy, int64_t batch,
                            float* dweight, float* dbias, float* dy_t);

// dX = dY W (overwrites dx).
void linear_backward_input(LinearShape s, const float* dy, int64_t batch, const float* weight,
                           float* dx);

}  // namespace ringlab::nn
