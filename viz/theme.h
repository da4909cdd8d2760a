#pragma once
// Two themes: light for projectors (dark ink on white, saturated rank colours) and dark.
// Views take their drawing colours from palette(), never from literals.
#include <cstdint>

#include "viz/app_state.h"

namespace ringlab::viz {

struct Palette {
  uint32_t canvas;       // background of drawing areas
  uint32_t grid;         // axes grid lines
  uint32_t axis;         // axes and ticks
  uint32_t text;
  uint32_t text_dim;
  uint32_t card;         // rank cards
  uint32_t card_border;
  uint32_t edge;         // ring links
  uint32_t reduced;      // a fully reduced chunk's mark
  uint32_t ok;
  uint32_t bad;
  uint32_t accent;
  uint32_t highlight;    // current batch, hover
  uint32_t forward, backward, optimizer, collective, native, gate;
  uint32_t reduce_scatter, all_gather;
  uint32_t mse;          // whole-dataset MSE curve
  uint32_t network;      // what crosses the network between nodes: dashed ring links, node labels
};

// Applies the ImGui style for `kind` at `scale` and selects the matching palette.
void apply_theme(ThemeKind kind, float scale);
const Palette& palette();

// Colour helpers (IM_COL32 layout).
uint32_t with_alpha(uint32_t color, float alpha);
uint32_t mix(uint32_t a, uint32_t b, float t);

}  // namespace ringlab::viz
