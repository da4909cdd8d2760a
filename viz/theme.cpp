#include "viz/theme.h"

#include <imgui.h>

#include <algorithm>

namespace ringlab::viz {
namespace {

constexpr uint32_t rgb(uint32_t hex, uint32_t a = 255) {
  return (a << 24) | ((hex & 0xFF) << 16) | (hex & 0xFF00) | ((hex >> 16) & 0xFF);
}

const Palette kLight = {
    rgb(0xFFFFFF), rgb(0xE6E8EC), rgb(0x5A6270), rgb(0x1B1F27), rgb(0x5F6775),
    rgb(0xF4F6F9), rgb(0xC3C8D1), rgb(0x9AA3B2), rgb(0xE0A100), rgb(0x17915A), rgb(0xC8342B),
    rgb(0x2B59C3), rgb(0x111111),
    rgb(0x1098AD), rgb(0xE8833A), rgb(0x3CA66B), rgb(0x7B5CC4), rgb(0x9C6FB8), rgb(0xB9BEC8),
    rgb(0xD9480F), rgb(0x1C7ED6), rgb(0x111418), rgb(0xC2255C)};

const Palette kDark = {
    rgb(0x171A21), rgb(0x2A2F3A), rgb(0x9AA3B2), rgb(0xE8EAF0), rgb(0xA0A8B6),
    rgb(0x222733), rgb(0x3C4352), rgb(0x6B7486), rgb(0xFFC53D), rgb(0x3DD68C), rgb(0xFF6B5E),
    rgb(0x6EA8FF), rgb(0xFFFFFF),
    rgb(0x3BC9DB), rgb(0xF59A4F), rgb(0x4CC281), rgb(0x9B7FE6), rgb(0xB48AD0), rgb(0x4A5060),
    rgb(0xFF7F50), rgb(0x4DABF7), rgb(0xF5F6F8), rgb(0xF06595)};

const Palette* g_palette = &kLight;

ImVec4 col(uint32_t hex) { return ImGui::ColorConvertU32ToFloat4(rgb(hex)); }

void light_style(ImGuiStyle& s) {
  ImGui::StyleColorsLight(&s);
  ImVec4* c = s.Colors;
  // The page is white and panes are outlined, not filled: every full-screen layer costs a
  // software rasterizer several milliseconds at 1920x1080.
  c[ImGuiCol_WindowBg] = col(0xFFFFFF);
  c[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
  c[ImGuiCol_PopupBg] = col(0xFFFFFF);
  c[ImGuiCol_Border] = col(0xC9CED8);
  c[ImGuiCol_Text] = col(0x1B1F27);
  c[ImGuiCol_TextDisabled] = col(0x8A93A2);
  c[ImGuiCol_FrameBg] = col(0xE9ECF1);
  c[ImGuiCol_FrameBgHovered] = col(0xDCE4F5);
  c[ImGuiCol_FrameBgActive] = col(0xC9D7F2);
  c[ImGuiCol_Button] = col(0xDFE5EE);
  c[ImGuiCol_ButtonHovered] = col(0xC4D4F2);
  c[ImGuiCol_ButtonActive] = col(0xA9C1EE);
  c[ImGuiCol_Header] = col(0xD6E0F2);
  c[ImGuiCol_HeaderHovered] = col(0xC4D4F2);
  c[ImGuiCol_HeaderActive] = col(0xA9C1EE);
  c[ImGuiCol_CheckMark] = col(0x2B59C3);
  c[ImGuiCol_SliderGrab] = col(0x2B59C3);
  c[ImGuiCol_SliderGrabActive] = col(0x1E3F8F);
  c[ImGuiCol_MenuBarBg] = col(0xFFFFFF);
  c[ImGuiCol_TitleBg] = col(0xFFFFFF);
  c[ImGuiCol_Tab] = col(0xE2E7EF);
  c[ImGuiCol_TabHovered] = col(0xC4D4F2);
  c[ImGuiCol_TabActive] = col(0xFFFFFF);
  c[ImGuiCol_Separator] = col(0xD5DAE2);
}

void dark_style(ImGuiStyle& s) {
  ImGui::StyleColorsDark(&s);
  ImVec4* c = s.Colors;
  c[ImGuiCol_WindowBg] = col(0x171A21);
  c[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
  c[ImGuiCol_PopupBg] = col(0x1D212A);
  c[ImGuiCol_Border] = col(0x2E3440);
  c[ImGuiCol_FrameBg] = col(0x252A35);
  c[ImGuiCol_FrameBgHovered] = col(0x2F3747);
  c[ImGuiCol_FrameBgActive] = col(0x394459);
  c[ImGuiCol_Button] = col(0x2A3242);
  c[ImGuiCol_ButtonHovered] = col(0x35507F);
  c[ImGuiCol_ButtonActive] = col(0x3F64A6);
  c[ImGuiCol_Header] = col(0x2A3650);
  c[ImGuiCol_MenuBarBg] = col(0x171A21);
  c[ImGuiCol_Tab] = col(0x1F2430);
  c[ImGuiCol_TabActive] = col(0x2E3B55);
  c[ImGuiCol_CheckMark] = col(0x6EA8FF);
  c[ImGuiCol_SliderGrab] = col(0x6EA8FF);
}

}  // namespace

void apply_theme(ThemeKind kind, float scale) {
  ImGuiStyle style;
  if (kind == ThemeKind::Light) {
    light_style(style);
    g_palette = &kLight;
  } else {
    dark_style(style);
    g_palette = &kDark;
  }
  style.WindowRounding = 6;
  style.ChildRounding = 6;
  style.FrameRounding = 5;
  style.GrabRounding = 5;
  style.PopupRounding = 5;
  style.TabRounding = 5;
  style.WindowBorderSize = 0;
  style.ChildBorderSize = 1;
  style.FrameBorderSize = 0;
  style.WindowPadding = ImVec2(10, 10);
  style.FramePadding = ImVec2(8, 5);
  style.ItemSpacing = ImVec2(9, 7);
  style.ItemInnerSpacing = ImVec2(7, 5);
  style.ScrollbarSize = 14;
  style.GrabMinSize = 12;
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
}

const Palette& palette() { return *g_palette; }

uint32_t with_alpha(uint32_t color, float alpha) {
  const uint32_t a = static_cast<uint32_t>(std::clamp(alpha, 0.0f, 1.0f) * ((color >> 24) & 0xFF) + 0.5f);
  return (color & 0x00FFFFFF) | (a << 24);
}

uint32_t mix(uint32_t a, uint32_t b, float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  uint32_t out = 0;
  for (int shift = 0; shift < 32; shift += 8) {
    const float x = float((a >> shift) & 0xFF), y = float((b >> shift) & 0xFF);
    out |= static_cast<uint32_t>(x + (y - x) * t + 0.5f) << shift;
  }
  return out;
}

}  // namespace ringlab::viz
