#pragma once
// Presenting part of a frame. On a CPU renderer (Mesa's llvmpipe, no GPU) a presented frame
// costs its pixels twice: the renderer fills them, and the X server takes a copy of the whole
// window. While a run's workers compute, most frames change one pane (the ring's animation or
// the timeline) and leave the rest as it was. GLX_MESA_copy_sub_buffer copies a rectangle of
// the back buffer to the window without swapping, so the back buffer keeps the last frame: the
// app then redraws only the damaged rectangle (viz::FrameChange::damage) and copies only it.
// Where the extension is missing, or the renderer is a GPU's (whose frame is a millisecond or
// two), frames are swapped whole as before.
#include <string>

struct GLFWwindow;

namespace ringlab::app {

class PartialPresent {
 public:
  // For the window whose context is current on this thread; `renderer` is GL_RENDERER's string.
  PartialPresent(GLFWwindow* window, const std::string& renderer);
  bool available() const { return copy_ != nullptr; }
  // Copies the back buffer's rectangle (framebuffer pixels, y counted from the bottom as GL
  // does) to the window. Only when available().
  void present(int x, int y, int width, int height) const;

 private:
  using CopySubBuffer = void (*)(void* display, unsigned long drawable, int x, int y, int width, int height);
  CopySubBuffer copy_ = nullptr;
  void* display_ = nullptr;
  unsigned long drawable_ = 0;
};

// Whether GL_RENDERER names one of Mesa's CPU renderers.
bool software_renderer(const std::string& renderer);

}  // namespace ringlab::app
