#include "engine/dist/process_group.h"

#include <algorithm>
#include <cstring>

namespace ringlab {

void ProcessGroup::reduce_add(std::span<float> acc, std::span<const float> incoming) {
  const size_t n = std::min(acc.size(), incoming.size());
  float* a = acc.data();
  const float* b = incoming.data();
  for (size_t i = 0; i < n; ++i) a[i] += b[i];
}

std::span<float> ProcessGroup::scratch(size_t n) {
  if (scratch_.size() < n) scratch_.resize(n);
  return {scratch_.data(), n};
}

void ProcessGroup::copy_to_host(std::span<const float> src, float* dst) {
  if (!src.empty()) std::memcpy(dst, src.data(), src.size_bytes());
}

}  // namespace ringlab
