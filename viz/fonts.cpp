#include "viz/fonts.h"

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ringlab::viz {
namespace {

Fonts g_fonts;

// Latin with its extensions (Bahasa Indonesia needs nothing more), punctuation, arrows, maths,
// shapes and check marks used by the views.
const ImWchar kRanges[] = {0x0020, 0x00FF, 0x0100, 0x017F, 0x0391, 0x03C9, 0x2010, 0x205E,
                           0x2190, 0x21FF, 0x2200, 0x22FF, 0x2500, 0x25FF, 0x2713, 0x2718, 0};
// Banners and numbers need less.
const ImWchar kSmallRanges[] = {0x0020, 0x00FF, 0x0391, 0x03C9, 0x2010, 0x205E, 0x2190, 0x21FF,
                                0x2211, 0x2212, 0x2248, 0x2248, 0x2713, 0x2718, 0};

std::string font_path(const char* file) {
  if (const char* dir = std::getenv("RINGLAB_FONT_DIR")) {
    std::string p = std::string(dir) + "/" + file;
    if (std::filesystem::exists(p)) return p;
  }
  for (const char* dir : {"/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu",
                          "/usr/local/share/fonts/dejavu"}) {
    std::string p = std::string(dir) + "/" + file;
    if (std::filesystem::exists(p)) return p;
  }
  return {};
}

ImFont* add(ImFontAtlas* atlas, const std::string& path, float size, const ImWchar* ranges = kRanges) {
  if (path.empty()) return nullptr;
  ImFontConfig cfg;
  cfg.OversampleH = 2;
  cfg.OversampleV = 1;
  return atlas->AddFontFromFileTTF(path.c_str(), size, &cfg, ranges);
}

}  // namespace

void load_fonts(float size_px) {
  ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  atlas->Clear();
  g_fonts = Fonts{};
  g_fonts.size = size_px;
  const std::string sans = font_path("DejaVuSans.ttf");
  const std::string bold = font_path("DejaVuSans-Bold.ttf");
  const std::string mono = font_path("DejaVuSansMono.ttf");
  g_fonts.regular = add(atlas, sans, size_px);
  if (g_fonts.regular) {
    g_fonts.from_files = true;
    g_fonts.bold = add(atlas, bold.empty() ? sans : bold, size_px);
    g_fonts.big = add(atlas, bold.empty() ? sans : bold, size_px * 1.55f, kSmallRanges);
    g_fonts.mono = add(atlas, mono.empty() ? sans : mono, size_px * 0.95f, kSmallRanges);
  } else {
    ImFontConfig cfg;
    cfg.SizePixels = size_px;
    g_fonts.regular = atlas->AddFontDefault(&cfg);
    g_fonts.bold = g_fonts.mono = g_fonts.regular;
    cfg.SizePixels = size_px * 1.5f;
    g_fonts.big = atlas->AddFontDefault(&cfg);
  }
  atlas->Build();
}

const Fonts& fonts() { return g_fonts; }

}  // namespace ringlab::viz
