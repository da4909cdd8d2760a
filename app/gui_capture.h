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

// Wall time per frame, and the process's CPU time per frame (every thread, the software
// rasterizer's included): on a busy shared machine the CPU time says what a frame costs even
// when the wall time says mostly how long the frame waited for a core.
class FrameTimes {
 public:
  void add(double wall_ms, double cpu_ms) {
    wall_ms_.push_back(wall_ms);
    cpu_ms_.push_back(cpu_ms);
  }
  size_t count() const { return wall_ms_.size(); }
  // {"frames", "p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms", "cpu_p50_ms", "cpu_p95_ms",
  //  "cpu_mean_ms", "max_rss_mb", "context"}; throws Error on a write failure.
  void write_json(const std::string& path, const std::string& context) const;

 private:
  std::vector<double> wall_ms_, cpu_ms_;
};

double process_cpu_ms();  // CPU time of the whole process so far

}  // namespace ringlab::app
