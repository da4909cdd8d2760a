#pragma once
// A random number generator that draws exactly what PyTorch's CPU generator draws, so the same
// seed gives the same data, weights and sampler order as torch.manual_seed(seed).
// Facts and their PyTorch sources: docs/fidelity.md (checked against PyTorch 1.13).
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <vector>

namespace ringlab {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL) { manual_seed(seed); }

  // torch.manual_seed / Generator.manual_seed: MT19937 seeded with the low 32 bits; the cached
  // normal sample of the scalar path is forgotten.
  void manual_seed(uint64_t seed);

  uint32_t random() { return static_cast<uint32_t>(engine_()); }
  // Two 32-bit draws: the first is the high word.
  uint64_t random64() {
    const uint64_t hi = random();
    const uint64_t lo = random();
    return (hi << 32) | lo;
  }

  // tensor.uniform_(from, to) on float32: one draw per element, 24 random bits each.
  void uniform_(std::span<float> out, float from, float to);
  // torch.randn / normal_(0, 1) on float32, both of PyTorch's paths (see normal_.cpp).
  void normal_(std::span<float> out);
  // torch.randperm(n, generator) for the sizes a DistributedSampler uses.
  std::vector<int64_t> randperm(int64_t n);

  // One float64 standard normal from the cached Box-Muller (the scalar path).
  double next_normal_double();

 private:
  std::mt19937 engine_;
  std::optional<double> cached_normal_;
};

// uniform float in [0, 1) from 24 random bits, as PyTorch's uniform_real_distribution<float>.
inline float uniform_float_from_bits(uint32_t r) {
  return static_cast<float>(r & ((1u << 24) - 1)) * (1.0f / static_cast<float>(1u << 24));
}
// uniform double in [0, 1) from 53 random bits.
inline double uniform_double_from_bits(uint64_t r) {
  return static_cast<double>(r & ((1ULL << 53) - 1)) * (1.0 / static_cast<double>(1ULL << 53));
}

}  // namespace ringlab
