#include "viz/widgets.h"

#include <imgui.h>

#include "viz/fonts.h"
#include "viz/rank_colors.h"
#include "viz/theme.h"

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

float DrawRankLabel(ImDrawList* dl, const ImVec2& at, int rank, const std::string& text) {
  ImFont* bold = fonts().bold;
  const float fs = ImGui::GetFontSize();
  const float s = fs * 0.7f;
  const float top = at.y + (fs - s) / 2 + 1;
  dl->AddRectFilled(ImVec2(at.x, top), ImVec2(at.x + s, top + s), rank_color(rank), 2);
  dl->AddText(bold, fs, ImVec2(at.x + s + fs * 0.3f, at.y), palette().text, text.c_str());
  return s + fs * 0.3f + bold->CalcTextSizeA(fs, FLT_MAX, 0, text.c_str()).x;
}

void DimWrapped(const char* text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("%s", text);
  ImGui::PopStyleColor();
}

}  // namespace ringlab::viz
