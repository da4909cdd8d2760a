#pragma once
// One colour per rank, the same in every view, chosen to stay apart on a projector.
#include <cstdint>

namespace ringlab::viz {

// RGBA packed as ImGui's IM_COL32 (0xAABBGGRR).
uint32_t rank_color(int rank, float alpha = 1.0f);

}  // namespace ringlab::viz
