#pragma once
// A check that frames presented in part show what a whole frame would. With
// RINGLAB_CHECK_PARTIAL_FRAMES=1 each frame the window presents in part (app/partial_present.h)
// is drawn a second time, whole, into a framebuffer of its own, and the two are compared pixel
// by pixel: a square of the screen left out of a frame's damage (viz::FrameChange) keeps what an
// earlier frame put there, and shows as a difference here (a colour more than 2 of 255 apart in
// more than kStrayPixels pixels). For the tests that drive the real window; it doubles a frame's
// cost.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ringlab::app {

class OffscreenTarget;

class PartialCheck {
 public:
  PartialCheck();  // on when RINGLAB_CHECK_PARTIAL_FRAMES is set to anything but "" and "0"
  ~PartialCheck();
  bool on() const { return on_; }
  // After a frame presented in part into the window's back buffer (fb_w x fb_h): draws it whole
  // with `draw_whole` into a framebuffer of that size, bound when it is called, and compares.
  // Leaves the window's framebuffer bound. Each differing frame is said on stderr (`frame`: its
  // number), the first few in full.
  void compare(int fb_w, int fb_h, int64_t frame, const std::function<void()>& draw_whole);
  // Frames where at most this many pixels differ are counted the same.
  static constexpr int64_t kStrayPixels = 4;
  int64_t checked() const { return checked_; }
  int64_t differing() const { return differing_; }

 private:
  bool on_ = false;
  std::unique_ptr<OffscreenTarget> target_;
  std::vector<uint8_t> part_, whole_;
  int64_t checked_ = 0, differing_ = 0;
};

}  // namespace ringlab::app
