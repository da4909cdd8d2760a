#pragma once
// Dear ImGui with no window or GPU: a context whose frames give draw data only, for the views'
// tests. One at a time: it is the current context from construction to destruction.
#include <imgui.h>

namespace ringlab::test {

struct HeadlessImGui {
  explicit HeadlessImGui(ImVec2 display) {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = display;
    io.DeltaTime = 1.0f / 60;
  }
  ~HeadlessImGui() { ImGui::DestroyContext(); }
  HeadlessImGui(const HeadlessImGui&) = delete;
  HeadlessImGui& operator=(const HeadlessImGui&) = delete;
};

}  // namespace ringlab::test
