#include "engine/nn/gemm.h"

#include <immintrin.h>

namespace ringlab::nn {
namespace {

// The generic path: innermost loop over contiguous columns of B and C, no reduction in it.
void gemm_plain(int64_t m0, int64_t m, int64_t n0, int64_t n, int64_t k, const float* a, int64_t lda,
                const float* b, int64_t ldb, float* c, int64_t ldc) {
  for (int64_t i = m0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const float x = a[i * lda + p];
      const float* __restrict br = b + p * ldb;
      float* __restrict cr = c + i * ldc;
      for (int64_t j = n0; j < n; ++j) cr[j] += x * br[j];
    }
}

__attribute__((target("avx2,fma"))) void gemm_avx2(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                                   const float* b, int64_t ldb, float* c, int64_t ldc) {
  const int64_t m4 = m - m % 4, n16 = n - n % 16;
  for (int64_t i = 0; i < m4; i += 4) {
    for (int64_t j = 0; j < n16; j += 16) {
      __m256 acc[4][2];
      for (int r = 0; r < 4; ++r) {
        acc[r][0] = _mm256_loadu_ps(c + (i + r) * ldc + j);
        acc[r][1] = _mm256_loadu_ps(c + (i + r) * ldc + j + 8);
      }
      for (int64_t p = 0; p < k; ++p) {
        const __m256 b0 = _mm256_loadu_ps(b + p * ldb + j);
        const __m256 b1 = _mm256_loadu_ps(b + p * ldb + j + 8);
        for (int r = 0; r < 4; ++r) {
          const __m256 x = _mm256_broadcast_ss(a + (i + r) * lda + p);
          acc[r][0] = _mm256_fmadd_ps(x, b0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(x, b1, acc[r][1]);
        }
      }
      for (int r = 0; r < 4; ++r) {
        _mm256_storeu_ps(c + (i + r) * ldc + j, acc[r][0]);
        _mm256_storeu_ps(c + (i + r) * ldc + j + 8, acc[r][1]);
      }
    }
    if (n16 < n) gemm_plain(i, i + 4, n16, n, k, a, lda, b, ldb, c, ldc);
  }
  if (m4 < m) gemm_plain(m4, m, 0, n, k, a, lda, b, ldb, c, ldc);
}

const bool kHaveAvx2Fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");

}  // namespace

void gemm_accumulate(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                     float* c, int64_t ldc) {
  if (kHaveAvx2Fma)
    gemm_avx2(m, n, k, a, lda, b, ldb, c, ldc);
  else
    gemm_plain(0, m, 0, n, k, a, lda, b, ldb, c, ldc);
}

void transpose(const float* in, int64_t rows, int64_t cols, float* out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
}

}  // namespace ringlab::nn
