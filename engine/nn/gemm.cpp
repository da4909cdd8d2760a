#include "engine/nn/gemm.h"

#include <immintrin.h>

#include <algorithm>

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

// Lanes [0, width) of eight.
__attribute__((target("avx2"))) __m256i first_lanes(int64_t width) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<int64_t>(width, 8))), lane);
}

// The edges the 4 x 16 tiles leave (columns past the last 16, rows past the last 4), with the
// tiles' arithmetic: one fused multiply-add per product, in the order of K. The sums stay in
// registers (8 rows, or 64 columns, at a time). The plain loops these replace kept each sum in
// memory, a store and a load per product, which made the seed model's narrow products (its
// 1-wide output layer, its 6-wide first layer's weight gradient) cost more than all its wide
// ones together. (Inlined into the tiles' function, those loops were fused too: the results
// are the same as before, bit for bit; tests/unit/test_nn.cpp holds them to it.)

// Narrow columns [n0, n) (fewer than 16): 8 rows at a time, 8 columns each.
__attribute__((target("avx2,fma"))) void gemm_edge_columns_avx2(int64_t m, int64_t n0, int64_t n, int64_t k,
                                                            const float* a, int64_t lda, const float* b, int64_t ldb,
                                                            float* c, int64_t ldc) {
  constexpr int kRows = 8;
  for (int64_t j = n0; j < n; j += 8) {
    const __m256i mask = first_lanes(n - j);
    for (int64_t i = 0; i < m; i += kRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kRows, m - i));
      __m256 acc[kRows];
      for (int r = 0; r < rows; ++r) acc[r] = _mm256_maskload_ps(c + (i + r) * ldc + j, mask);
      for (int64_t p = 0; p < k; ++p) {
        const __m256 bv = _mm256_maskload_ps(b + p * ldb + j, mask);
        for (int r = 0; r < rows; ++r)
          acc[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + (i + r) * lda + p), bv, acc[r]);
      }
      for (int r = 0; r < rows; ++r) _mm256_maskstore_ps(c + (i + r) * ldc + j, mask, acc[r]);
    }
  }
}

// The last few rows [m0, m) (fewer than 4), all n columns: one row at a time, 64 columns each.
__attribute__((target("avx2,fma"))) void gemm_edge_rows_avx2(int64_t m0, int64_t m, int64_t n, int64_t k,
                                                         const float* a, int64_t lda, const float* b, int64_t ldb,
                                                         float* c, int64_t ldc) {
  constexpr int kChunks = 8;
  for (int64_t i = m0; i < m; ++i)
    for (int64_t j0 = 0; j0 < n; j0 += 8 * kChunks) {
      const int chunks = static_cast<int>(std::min<int64_t>(kChunks, (n - j0 + 7) / 8));
      __m256i mask[kChunks];
      __m256 acc[kChunks];
      for (int q = 0; q < chunks; ++q) {
        mask[q] = first_lanes(n - j0 - 8 * q);
        acc[q] = _mm256_maskload_ps(c + i * ldc + j0 + 8 * q, mask[q]);
      }
      for (int64_t p = 0; p < k; ++p) {
        const __m256 x = _mm256_broadcast_ss(a + i * lda + p);
        for (int q = 0; q < chunks; ++q)
          acc[q] = _mm256_fmadd_ps(x, _mm256_maskload_ps(b + p * ldb + j0 + 8 * q, mask[q]), acc[q]);
      }
      for (int q = 0; q < chunks; ++q) _mm256_maskstore_ps(c + i * ldc + j0 + 8 * q, mask[q], acc[q]);
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
  }
  if (n16 < n) gemm_edge_columns_avx2(m4, n16, n, k, a, lda, b, ldb, c, ldc);
  if (m4 < m) gemm_edge_rows_avx2(m4, m, n, k, a, lda, b, ldb, c, ldc);
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

namespace {

void transpose_plain(const float* in, int64_t r0, int64_t rows, int64_t c0, int64_t cols, int64_t ld_in,
                     int64_t ld_out, float* out) {
  for (int64_t r = r0; r < rows; ++r)
    for (int64_t c = c0; c < cols; ++c) out[c * ld_out + r] = in[r * ld_in + c];
}

// 8 x 8 blocks through registers: each row of a block is read once and each column written
// once, where the element-by-element loop wrote one float per cache line it touched.
__attribute__((target("avx2"))) void transpose_avx2(const float* in, int64_t rows, int64_t cols, float* out) {
  const int64_t r8 = rows - rows % 8, c8 = cols - cols % 8;
  for (int64_t r = 0; r < r8; r += 8) {
    for (int64_t c = 0; c < c8; c += 8) {
      __m256 v[8], t[8];
      for (int i = 0; i < 8; ++i) v[i] = _mm256_loadu_ps(in + (r + i) * cols + c);
      for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
      }
      for (int i = 0; i < 8; i += 4) {
        v[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        v[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        v[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        v[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
      }
      for (int i = 0; i < 4; ++i) {
        _mm256_storeu_ps(out + (c + i) * rows + r, _mm256_permute2f128_ps(v[i], v[i + 4], 0x20));
        _mm256_storeu_ps(out + (c + i + 4) * rows + r, _mm256_permute2f128_ps(v[i], v[i + 4], 0x31));
      }
    }
    transpose_plain(in, r, r + 8, c8, cols, cols, rows, out);
  }
  transpose_plain(in, r8, rows, 0, cols, cols, rows, out);
}

const bool kHaveAvx2 = __builtin_cpu_supports("avx2");

}  // namespace

void transpose(const float* in, int64_t rows, int64_t cols, float* out) {
  if (kHaveAvx2)
    transpose_avx2(in, rows, cols, out);
  else
    transpose_plain(in, 0, rows, 0, cols, cols, rows, out);
}

}  // namespace ringlab::nn
