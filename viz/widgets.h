#pragma once
// Small layout helpers shared by the views.
#include <string>

namespace ringlab::viz {

// Like ImGui::SameLine(), but starts a new line when an item `width` wide would not fit.
void SameLineIfFits(float width);
// A checkbox that flows onto the current line when it fits (after the first one in a row).
bool FlowCheckbox(const std::string& label, bool* value, bool first = false);
// A hint in the dim text colour, wrapped at the pane's edge.
void DimWrapped(const char* text);

}  // namespace ringlab::viz
