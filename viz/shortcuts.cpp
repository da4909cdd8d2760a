// Keyboard: Space play/pause, Right/Left step, F11 full screen, Ctrl+= / Ctrl+- text size.
#include <GLFW/glfw3.h>
#include <imgui.h>

#include "viz/views.h"

namespace ringlab::viz {

void HandleShortcuts(const replay::RunModel& model, AppState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;  // typing in a field
  // Dear ImGui 1.86's GLFW backend stores key state by GLFW key code.
  if (ImGui::IsKeyPressed(GLFW_KEY_SPACE, false)) TogglePlay(state);
  if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT)) StepForward(model, state);
  if (ImGui::IsKeyPressed(GLFW_KEY_LEFT)) StepBack(model, state);
  if (ImGui::IsKeyPressed(GLFW_KEY_F11, false)) state.requests.toggle_fullscreen = true;
  if (io.KeyCtrl) {
    if (ImGui::IsKeyPressed(GLFW_KEY_EQUAL, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD, false))
      ++state.requests.zoom_steps;
    if (ImGui::IsKeyPressed(GLFW_KEY_MINUS, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT, false))
      --state.requests.zoom_steps;
  }
}

}  // namespace ringlab::viz
