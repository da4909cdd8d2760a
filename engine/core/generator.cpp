#include "engine/core/generator.h"

#include <cmath>
#include <numbers>

namespace ringlab {

void Generator::manual_seed(uint64_t seed) {
  engine_.seed(static_cast<uint32_t>(seed & 0xFFFFFFFFu));
  cached_normal_.reset();
}

void Generator::uniform_(std::span<float> out, float from, float to) {
  const float range = to - from;
  for (float& x : out) x = uniform_float_from_bits(random()) * range + from;
}

double Generator::next_normal_double() {
  if (cached_normal_) {
    const double v = *cached_normal_;
    cached_normal_.reset();
    return v;
  }
  const double u1 = uniform_double_from_bits(random64());
  const double u2 = uniform_double_from_bits(random64());
  const double r = std::sqrt(-2.0 * std::log1p(-u2));
  const double theta = 2.0 * std::numbers::pi * u1;
  cached_normal_ = r * std::sin(theta);
  return r * std::cos(theta);
}

namespace {

// Box-Muller on one block of 16 uniforms: element j pairs with element j + 8.
void box_muller_block16(float* d) {
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - d[j];
    const float u2 = d[j + 8];
    const float radius = std::sqrt(-2.0f * std::log(u1));
    const float theta = 2.0f * std::numbers::pi_v<float> * u2;
    d[j] = radius * std::cos(theta);
    d[j + 8] = radius * std::sin(theta);
  }
}

}  // namespace

void Generator::normal_(std::span<float> out) {
  const size_t n = out.size();
  if (n < 16) {
    // Small tensors take the scalar path: float64 Box-Muller with a cached second value.
    for (float& x : out) x = static_cast<float>(next_normal_double());
    return;
  }
  // The vector path: fill with uniforms first, then transform whole blocks of 16. A ragged
  // tail is handled by drawing 16 fresh uniforms into the LAST 16 elements and transforming
  // that block again (it overlaps the previous full block; PyTorch does the same).
  uniform_(out, 0.0f, 1.0f);
  for (size_t i = 0; i + 16 <= n; i += 16) box_muller_block16(out.data() + i);
  if (n % 16 != 0) {
    float* tail = out.data() + n - 16;
    uniform_({tail, 16}, 0.0f, 1.0f);
    box_muller_block16(tail);
  }
}

std::vector<int64_t> Generator::randperm(int64_t n) {
  // PyTorch's CPU randperm for small n: a forward Fisher-Yates pass.
  std::vector<int64_t> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) r[i] = i;
  for (int64_t i = 0; i + 1 < n; ++i) {
    const int64_t z = static_cast<int64_t>(random() % static_cast<uint64_t>(n - i));
    std::swap(r[i], r[i + z]);
  }
  return r;
}

}  // namespace ringlab
