#pragma once
// C += A * B for the small row-major matrices of the MLP (M, N, K up to a few thousand).
// The AVX2+FMA path keeps a 4 x 16 tile of C in registers while it walks K, so each loaded
// row of B serves four rows of A; other shapes and processors take plain loops.
#include <cstdint>

namespace ringlab::nn {

// A is M x K (row stride lda), B is K x N (ldb), C is M x N (ldc).
void gemm_accumulate(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                     float* c, int64_t ldc);

// out (cols x rows) = in (rows x cols) transposed.
void transpose(const float* in, int64_t rows, int64_t cols, float* out);

}  // namespace ringlab::nn
