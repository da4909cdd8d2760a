#pragma once
// Whether a frame would put anything new on the screen. On a machine without a GPU the software
// renderer fills every pixel of every frame (about 28 ms of CPU at 1920x1080 here), also for the
// frames a quiet window draws now and then, which Dear ImGui lays out the same as the last. The
// window skips presenting those: it keeps showing the last frame, which is the same picture.
#include <cstdint>
#include <vector>

struct ImDrawData;

namespace ringlab::viz {

class FrameChange {
 public:
  // True when `draw` differs from the draw data of the frame last given here (the first always
  // does): the same display size, the same vertices, indices, clip rectangles and textures in
  // the same order is the same picture. Keeps `draw`'s bytes for the next call.
  bool changed(const ImDrawData& draw);
  // The next frame is presented whatever it holds (the window was resized, exposed, or its
  // contents may have been lost).
  void forget() { last_.clear(); }

 private:
  std::vector<uint8_t> last_, now_;
};

}  // namespace ringlab::viz
