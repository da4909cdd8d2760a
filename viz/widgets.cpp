#include "viz/widgets.h"

#include <imgui.h>

namespace ringlab::viz {

void SameLineIfFits(float width) {
  const float right = ImGui::GetWindowContentRegionMax().x + ImGui::GetWindowPos().x;
  ImGui::SameLine();
  if (ImGui::GetCursorScreenPos().x + width > right) ImGui::NewLine();
}

bool FlowCheckbox(const std::string& label, bool* value, bool first) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const size_t hidden = label.find("##");
  const std::string visible = label.substr(0, hidden);
  const float width = ImGui::GetFrameHeight() + style.ItemInnerSpacing.x + ImGui::CalcTextSize(visible.c_str()).x;
  if (!first) SameLineIfFits(width);
  return ImGui::Checkbox(label.c_str(), value);
}

void DimWrapped(const char* text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("%s", text);
  ImGui::PopStyleColor();
}

}  // namespace ringlab::viz
