// Built only with the desktop app.
#ifdef RINGLAB_HAVE_GUI
#include "app/partial_check.h"

#include <glad/gl.h>

#include <algorithm>
#include <cstdlib>
#include <fmt/core.h>

#include "app/gui_capture.h"

namespace ringlab::app {

namespace {

void read_pixels(int w, int h, std::vector<uint8_t>& out) {
  out.resize(static_cast<size_t>(w) * h * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, out.data());
}

// llvmpipe blends a pixel drawn under a scissor that cuts its tile one step of 255 apart from the
// same pixel drawn whole, now and then: that is the same picture. What an earlier frame left is
// a different one.
bool same_colour(const uint8_t* a, const uint8_t* b) {
  for (int c = 0; c < 3; ++c)
    if (std::abs(a[c] - b[c]) > 2) return false;
  return true;
}

}  // namespace

PartialCheck::PartialCheck() {
  const char* v = std::getenv("RINGLAB_CHECK_PARTIAL_FRAMES");
  on_ = v && *v && std::string(v) != "0";
}

PartialCheck::~PartialCheck() = default;

void PartialCheck::compare(int fb_w, int fb_h, int64_t frame, const std::function<void()>& draw_whole) {
  if (!on_ || fb_w <= 0 || fb_h <= 0) return;
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  glReadBuffer(GL_BACK);
  read_pixels(fb_w, fb_h, part_);
  if (!target_ || target_->width() != fb_w || target_->height() != fb_h) target_ = std::make_unique<OffscreenTarget>(fb_w, fb_h);
  target_->bind();
  draw_whole();
  read_pixels(fb_w, fb_h, whole_);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  ++checked_;
  // Colour only: what the window keeps in alpha is no part of the picture. Rows are counted from
  // the bottom in GL; they are said from the top, as on screen.
  int x0 = fb_w, x1 = -1, y0 = fb_h, y1 = -1;
  int64_t pixels = 0;
  std::string first;  // the first differing pixel's place and its two colours
  for (int y = 0; y < fb_h; ++y)
    for (int x = 0; x < fb_w; ++x) {
      const size_t i = (static_cast<size_t>(y) * fb_w + x) * 4;
      if (same_colour(&part_[i], &whole_[i])) continue;
      if (++pixels == 1)
        first = fmt::format("({}, {}): {},{},{} in part, {},{},{} whole", x, fb_h - 1 - y, part_[i], part_[i + 1],
                            part_[i + 2], whole_[i], whole_[i + 1], whole_[i + 2]);
      x0 = std::min(x0, x), x1 = std::max(x1, x);
      y0 = std::min(y0, fb_h - 1 - y), y1 = std::max(y1, fb_h - 1 - y);
    }
  // A pixel or two now and then (once in some hundred frames, alone) is the renderer, not a
  // square left out: a square left out differs in a run of pixels along what moved.
  if (pixels <= kStrayPixels) return;
  if (++differing_ <= 5)
    fmt::print(stderr,
               "ringlab gui: frame {} presented in part differs from the whole frame in {} pixels, x {}..{}, y {}..{}; "
               "first {}\n",
               frame, pixels, x0, x1, y0, y1, first);
}

}  // namespace ringlab::app
#endif  // RINGLAB_HAVE_GUI
