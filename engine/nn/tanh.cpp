#include "engine/nn/tanh.h"

#include <immintrin.h>

#include <cmath>

// glibc's libmvec: eight tanhf at once for AVX2 (the same routine GCC calls when it
// vectorises tanhf under -ffast-math; called directly so the rest keeps strict IEEE math).
extern "C" __m256 _ZGVdN8v_tanhf(__m256);

namespace ringlab::nn {
namespace {

__attribute__((target("avx2,fma"))) void tanh_avx2(const float* x, int64_t n, float* y) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _ZGVdN8v_tanhf(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = std::tanh(x[i]);
}

void tanh_scalar(const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

// dx = dy * (1 - y^2). One body, compiled into both versions below; the compiler vectorises the
// AVX2 one. (Dispatched by hand like tanh_forward rather than by target_clones: an ifunc resolver
// runs before ThreadSanitizer's runtime is up and crashed the tsan build at load time.)
__attribute__((always_inline)) inline void tanh_backward_body(const float* dy, const float* y, int64_t n,
                                                                float* dx) {
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}

// AVX2 without FMA: a fused multiply-add would round 1 - y*y once instead of twice, and the
// gradient's last bit would then depend on the machine.
__attribute__((target("avx2"))) void tanh_backward_avx2(const float* dy, const float* y, int64_t n, float* dx) {
  tanh_backward_body(dy, y, n, dx);
}

void tanh_backward_scalar(const float* dy, const float* y, int64_t n, float* dx) {
  tanh_backward_body(dy, y, n, dx);
}

const bool kHaveAvx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");

}  // namespace

void tanh_forward(const float* x, int64_t n, float* y) {
  if (kHaveAvx2)
    tanh_avx2(x, n, y);
  else
    tanh_scalar(x, n, y);
}

void tanh_backward(const float* dy, const float* y, int64_t n, float* dx) {
  if (kHaveAvx2)
    tanh_backward_avx2(dy, y, n, dx);
  else
    tanh_backward_scalar(dy, y, n, dx);
}

}  // namespace ringlab::nn
