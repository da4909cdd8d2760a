#pragma once
// Fonts from Debian's font packages, loaded at run time at a size fit for a projector, with a
// fallback to ImGui's own font when the files are missing. Rebuilt when the zoom changes.
#include <imgui.h>

namespace ringlab::viz {

struct Fonts {
  ImFont* regular = nullptr;
  ImFont* bold = nullptr;
  ImFont* big = nullptr;    // banners
  ImFont* mono = nullptr;   // numbers
  float size = 18.0f;       // regular size in pixels
  bool from_files = false;  // false: ImGui's built-in font
};

// Rebuilds the atlas for a regular size of `size_px`. The caller re-creates the GPU texture.
void load_fonts(float size_px);
const Fonts& fonts();

}  // namespace ringlab::viz
