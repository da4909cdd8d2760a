#pragma once
// Small layout helpers shared by the views.
#include <string>

struct ImDrawList;
struct ImVec2;

namespace ringlab::viz {

// Like ImGui::SameLine(), but starts a new line when an item `width` wide would not fit.
void SameLineIfFits(float width);
// A checkbox that flows onto the current line when it fits (after the first one in a row).
bool FlowCheckbox(const std::string& label, bool* value, bool first = false);
// "■ rank 3": a swatch in the rank's colour and the text in bold ink, readable on either theme.
// Returns the width it took.
float DrawRankLabel(ImDrawList* dl, const ImVec2& at, int rank, const std::string& text);

// A hint in the dim text colour, wrapped at the pane's edge.
void DimWrapped(const char* text);

}  // namespace ringlab::viz
