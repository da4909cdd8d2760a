#include "viz/rank_colors.h"

#include <array>

namespace ringlab::viz {

uint32_t rank_color(int rank, float alpha) {
  // Okabe-Ito-like palette (colour-blind safe) extended to 16 ranks; its yellow is darkened so
  // "rank 6" stays readable on a white projector screen.
  static constexpr std::array<uint32_t, 16> rgb = {
      0x0072B2, 0xE69F00, 0x009E73, 0xCC79A7, 0x56B4E9, 0xD55E00, 0xB8A000, 0x7F7F7F,
      0x1B9E77, 0xD95F02, 0x7570B3, 0xE7298A, 0x66A61E, 0xE6AB02, 0xA6761D, 0x4E79A7};
  uint32_t c = rgb[static_cast<unsigned>(rank) % rgb.size()];
  uint32_t r = (c >> 16) & 0xFF, g = (c >> 8) & 0xFF, b = c & 0xFF;
  uint32_t a = static_cast<uint32_t>(alpha * 255.0f + 0.5f) & 0xFF;
  return (a << 24) | (b << 16) | (g << 8) | r;
}

}  // namespace ringlab::viz
