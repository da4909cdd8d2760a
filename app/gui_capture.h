#pragma once
// Headless rendering: an offscreen framebuffer the size of the requested window, its pixels as
// a PNG, and frame-time percentiles.
#include <cstdint>
#include <string>
#include <vector>

namespace ringlab::app {

class OffscreenTarget {
 public:
  OffscreenTarget(int width, int height);  // throws Error when the framebuffer is incomplete
  ~OffscreenTarget();
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;
  void bind() const;
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  int width_, height_;
  uint32_t framebuffer_ = 0, color_ = 0;
};

// Reads the bound framebuffer (width x height) and writes it as a PNG, top row first.
// Throws Error naming the path when it cannot be written.
void write_screenshot(const std::string& path, int width, int height);

class FrameTimes {
 public:
  void add(double ms) { ms_.push_back(ms); }
  size_t count() const { return ms_.size(); }
  // {"frames", "p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms"}; throws Error on a write failure.
  void write_json(const std::string& path, const std::string& context) const;

 private:
  std::vector<double> ms_;
};

}  // namespace ringlab::app
