// Built only with the desktop app.
#ifdef RINGLAB_HAVE_GUI
#include "app/gui_capture.h"

#include <glad/gl.h>
#include <sys/resource.h>
#include <time.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/output_file.h"

namespace ringlab::app {

OffscreenTarget::OffscreenTarget(int width, int height) : width_(width), height_(height) {
  glGenFramebuffers(1, &framebuffer_);
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_);
  glGenTextures(1, &color_);
  glBindTexture(GL_TEXTURE_2D, color_);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, color_, 0);
  const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  if (status != GL_FRAMEBUFFER_COMPLETE)
    throw Error(fmt::format("cannot render offscreen: framebuffer {}x{} incomplete (status 0x{:x})", width, height, status));
}

OffscreenTarget::~OffscreenTarget() {
  glDeleteTextures(1, &color_);
  glDeleteFramebuffers(1, &framebuffer_);
}

void OffscreenTarget::bind() const { glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_); }

void write_screenshot(const std::string& path, int width, int height) {
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * height * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  // OpenGL's first row is the bottom one; PNG's is the top.
  std::vector<uint8_t> flipped(pixels.size());
  const size_t row = static_cast<size_t>(width) * 4;
  for (int y = 0; y < height; ++y)
    std::copy_n(pixels.begin() + static_cast<ptrdiff_t>(y * row), row,
                flipped.begin() + static_cast<ptrdiff_t>((height - 1 - y) * row));
  for (size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;  // opaque, whatever the blending left
  // stb encodes into the output file's stream, which knows whether the bytes reached the disk.
  write_output_file(path, "--screenshot", [&](std::ostream& out) {
    const auto append = [](void* stream, void* data, int size) {
      static_cast<std::ostream*>(stream)->write(static_cast<const char*>(data), size);
    };
    if (!stbi_write_png_to_func(append, &out, width, height, 4, flipped.data(), static_cast<int>(row)))
      throw Error(fmt::format("--screenshot: cannot encode a {}x{} PNG", width, height));
  });
}

namespace {

struct Summary {
  std::vector<double> sorted;
  double mean = 0;
  explicit Summary(std::vector<double> v) : sorted(std::move(v)) {
    std::sort(sorted.begin(), sorted.end());
    for (double x : sorted) mean += x;
    if (!sorted.empty()) mean /= static_cast<double>(sorted.size());
  }
  double percentile(double q) const {  // nearest rank
    if (sorted.empty()) return 0.0;
    const size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size()))) - 1;
    return sorted[std::min(i, sorted.size() - 1)];
  }
};

double max_rss_mb() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // Linux reports kilobytes
}

}  // namespace

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

void FrameTimes::write_json(const std::string& path, const std::string& context) const {
  const Summary wall(wall_ms_), cpu(cpu_ms_);
  nlohmann::json j = {{"frames", wall.sorted.size()},
                      {"p50_ms", wall.percentile(0.50)},
                      {"p95_ms", wall.percentile(0.95)},
                      {"p99_ms", wall.percentile(0.99)},
                      {"max_ms", wall.sorted.empty() ? 0.0 : wall.sorted.back()},
                      {"mean_ms", wall.mean},
                      {"cpu_p50_ms", cpu.percentile(0.50)},
                      {"cpu_p95_ms", cpu.percentile(0.95)},
                      {"cpu_mean_ms", cpu.mean},
                      {"max_rss_mb", max_rss_mb()},
                      {"context", context}};
  write_output_file(path, "--frame-stats", [&](std::ostream& out) { out << j.dump(2) << "\n"; });
}

}  // namespace ringlab::app
#endif  // RINGLAB_HAVE_GUI
