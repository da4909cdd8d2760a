#include "viz/widgets.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <string_view>
#include <cmath>

#include "viz/fonts.h"
#include "viz/rank_colors.h"
#include "viz/theme.h"

namespace ringlab::viz {
namespace {

// The width the next item is given (SetNextItemWidth), else the rest of the row.
float next_item_width() {
  const float width = ImGui::CalcItemWidth();
  return width <= 0 || width > ImGui::GetContentRegionAvail().x ? ImGui::GetContentRegionAvail().x : width;
}

// What the slider just drawn (the last item) did, and where it is.
void read_slider(SliderOutcome& out) {
  out.released = ImGui::IsItemDeactivatedAfterEdit();
  out.x0 = ImGui::GetItemRectMin().x;
  out.x1 = ImGui::GetItemRectMax().x;
  out.y = (ImGui::GetItemRectMin().y + ImGui::GetItemRectMax().y) / 2;
  // Not while it is dragged: a tip then covers the controls beside it, the backend's among them.
  out.hovered = ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled) && !ImGui::IsItemActive();
}

// Lays out [slider][ value], runs `slide` (the slider, with no text of its own) and reports it.
template <class Slide>
SliderOutcome slider_beside(const std::string& shown, Slide slide) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float text_w = ImGui::CalcTextSize(shown.c_str()).x;
  const float width = next_item_width();
  // Too narrow for both: the slider takes the row, and the value sits at the start of the next.
  const bool beside = width - text_w - style.ItemInnerSpacing.x >= ImGui::GetFontSize() * 3;
  ImGui::SetNextItemWidth(beside ? width - text_w - style.ItemInnerSpacing.x : width);
  SliderOutcome out;
  out.changed = slide();
  read_slider(out);
  if (beside) ImGui::SameLine(0, style.ItemInnerSpacing.x);
  ImGui::TextUnformatted(shown.c_str());
  return out;
}

}  // namespace

// The value is written beside the slider, in words ("1.00 steps/s"), not on it. Its own text is
// kept for Ctrl+click, which turns the slider into a field holding the value printed with that
// format (an empty format opened an empty field), and is drawn invisible the rest of the time.
// The field opens within the call that sees the click, so the colour is chosen by whether it was
// open before; on that one frame the value is typed invisibly. A value typed in is held to the
// slider's range like a dragged one: World size 0 typed and Start divided by it (the app died of
// SIGFPE), 65 failed in the command line's words.
template <class Slide>
bool with_text_only_while_typed(const char* id, Slide slide) {
  const bool typing = ImGui::TempInputIsActive(ImGui::GetID(id));
  if (!typing) ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(0, 0, 0, 0));
  const bool changed = slide();
  if (!typing) ImGui::PopStyleColor();
  return changed;
}

SliderOutcome SliderIntBeside(const char* id, int* value, int lo, int hi, const std::string& shown, int flags) {
  return slider_beside(shown, [&] {
    return with_text_only_while_typed(
        id, [&] { return ImGui::SliderInt(id, value, lo, hi, "%d", flags | ImGuiSliderFlags_AlwaysClamp); });
  });
}

SteppedOutcome SliderIntStepped(const char* id, int* value, int lo, int hi, const std::string& shown,
                                const std::string& widest) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float button = ImGui::GetFrameHeight(), gap = style.ItemInnerSpacing.x;
  const float value_w = std::max(ImGui::CalcTextSize(shown.c_str()).x, ImGui::CalcTextSize(widest.c_str()).x);
  ImGui::SetNextItemWidth(std::max(button, next_item_width() - 2 * (button + gap) - value_w - gap));
  SteppedOutcome out;
  out.changed = with_text_only_while_typed(
      id, [&] { return ImGui::SliderInt(id, value, lo, hi, "%d", ImGuiSliderFlags_AlwaysClamp); });
  read_slider(out);
  ImGui::PushID(id);
  for (const int step : {-1, +1}) {
    ImGui::SameLine(0, gap);
    ImGui::BeginDisabled(*value + step < lo || *value + step > hi);
    if (ImGui::Button(step < 0 ? "-" : "+", ImVec2(button, button))) {
      *value += step;
      out.changed = out.stepped = true;
    }
    ImGui::EndDisabled();
    // No tip over the buttons: it would cover the value a click has just changed.
    (step < 0 ? out.minus_x : out.plus_x) = (ImGui::GetItemRectMin().x + ImGui::GetItemRectMax().x) / 2;
  }
  ImGui::PopID();
  ImGui::SameLine(0, gap);
  ImGui::TextUnformatted(shown.c_str());
  return out;
}

// "%.4g": 0.03 opens as "0.03", 1.0 as "1". Its four digits set a logarithmic slider's smallest
// step from zero (none of these reaches below 0.001), and values are not rounded to them.
SliderOutcome SliderFloatBeside(const char* id, float* value, float lo, float hi, const std::string& shown, int flags) {
  return slider_beside(shown, [&] {
    return with_text_only_while_typed(id, [&] {
      return ImGui::SliderFloat(id, value, lo, hi, "%.4g",
                                flags | ImGuiSliderFlags_AlwaysClamp | ImGuiSliderFlags_NoRoundToFormat);
    });
  });
}

bool WrappedHeader(const char* text, const char* id, bool default_open, bool close) {
  ImGui::PushID(id);
  ImGuiStorage* storage = ImGui::GetStateStorage();
  const ImGuiID key = ImGui::GetID("open");
  bool open = !close && storage->GetBool(key, default_open);
  if (ImGui::ArrowButton("##arrow", open ? ImGuiDir_Down : ImGuiDir_Right)) open = !open;
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::AlignTextToFramePadding();
  ImGui::PushFont(fonts().bold);
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::PopFont();
  if (ImGui::IsItemClicked()) open = !open;
  storage->SetBool(key, open);
  ImGui::PopID();
  return open;
}

bool WrappedRadio(const char* text, const char* id, bool active) {
  ImGui::PushID(id);
  bool chosen = ImGui::RadioButton("##radio", active);
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::AlignTextToFramePadding();
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  chosen |= ImGui::IsItemClicked();
  ImGui::PopID();
  return chosen;
}

ButtonGrid FitButtons(const std::vector<std::string>& labels, int most_per_row) {
  const ImGuiStyle& style = ImGui::GetStyle();
  float widest = 0;
  for (const auto& l : labels) widest = std::max(widest, ImGui::CalcTextSize(l.c_str(), nullptr, true).x);
  widest += style.FramePadding.x * 2;
  const float avail = ImGui::GetContentRegionAvail().x;
  ButtonGrid grid;
  for (grid.per_row = std::max(most_per_row, 1); grid.per_row > 1; --grid.per_row)
    if (widest * grid.per_row + style.ItemSpacing.x * (grid.per_row - 1) <= avail) break;
  grid.width = (avail - style.ItemSpacing.x * (grid.per_row - 1)) / grid.per_row;
  return grid;
}

void ButtonGrid::place(int i) const {
  if (i % per_row != 0) ImGui::SameLine();
}

namespace {

float longest_word_width(std::string_view text) {
  float widest = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find(' ', start), text.size());
    widest = std::max(widest, ImGui::CalcTextSize(text.data() + start, text.data() + end).x);
    start = end + 1;
  }
  return widest;
}

}  // namespace

// The column widens to the label's longest word (at larger text, or in a narrow window, a word
// wrapped inside itself: "Kecepata / n"), up to 60% of the row; a word wider still puts the label
// on a line of its own, over its field.
void FormLabel(const char* text, float column, float field_min) {
  const float x0 = ImGui::GetCursorPosX();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float word = longest_word_width(text) + ImGui::GetStyle().ItemSpacing.x;
  const float column_w = std::max(avail * column, std::min(word, avail * 0.6f));
  if (word > column_w || avail - column_w < field_min) {
    ImGui::TextWrapped("%s", text);
    ImGui::SetNextItemWidth(avail);
    return;
  }
  ImGui::AlignTextToFramePadding();
  ImGui::PushTextWrapPos(x0 + column_w - ImGui::GetStyle().ItemSpacing.x);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::SameLine(x0 + column_w);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
}

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

namespace {

// The longest start of `text`, cut at a character's boundary, that fits `width` with "…" after it.
std::string cut_to_width(const std::string& text, float width) {
  const char* ellipsis = "…";
  const float room = width - ImGui::CalcTextSize(ellipsis).x;
  size_t keep = 0;
  for (size_t next = 0; next < text.size(); keep = next) {
    ++next;
    while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;  // UTF-8 continuation
    if (ImGui::CalcTextSize(text.data(), text.data() + next).x > room) break;
  }
  return text.substr(0, keep) + ellipsis;
}

}  // namespace

namespace {

// A tooltip sized for its text in the frame that draws it. Dear ImGui fits a window to what it
// held the frame before, so a tooltip whose text grew (a timeline followed live, the span under
// the pointer changing every frame) was drawn cut at the old size; at a few frames a second
// during a run, for long enough to see. `wrap`: where lines wrap (window coordinates), 0: never.
void SizedTooltip(const std::string& text, float wrap) {
  const ImVec2 pad = ImGui::GetStyle().WindowPadding;
  const ImVec2 size = ImGui::CalcTextSize(text.c_str(), nullptr, false, wrap > 0 ? wrap - pad.x : -1.0f);
  ImGui::PushStyleVar(ImGuiStyleVar_Alpha, 1.0f);
  ImGui::SetNextWindowSize(ImVec2(std::ceil(size.x + 2 * pad.x), std::ceil(size.y + 2 * pad.y)));
  ImGui::BeginTooltip();
  if (wrap > 0) ImGui::PushTextWrapPos(wrap);
  ImGui::TextUnformatted(text.c_str());
  if (wrap > 0) ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
  ImGui::PopStyleVar();
}

}  // namespace

// One line where it fits; a long sentence wraps (at 32 em, or less on a small window), or in
// Indonesian at 1.5x text it ran off the window's edge.
void Tooltip(const std::string& text) {
  const float limit = std::min(ImGui::GetFontSize() * 32.0f, ImGui::GetIO().DisplaySize.x * 0.6f);
  SizedTooltip(text, ImGui::CalcTextSize(text.c_str()).x > limit ? limit : 0);
}

void WrappedTooltip(const std::string& text, float width) { SizedTooltip(text, ImGui::GetFontSize() * width); }

namespace {

std::string in_lines(const std::vector<std::string>& parts, const char* separator, float width, float font_size) {
  const auto width_of = [&](const std::string& text) {
    return ImGui::GetFont()->CalcTextSizeA(font_size, FLT_MAX, 0, text.c_str()).x;
  };
  std::string text, line;
  for (const std::string& part : parts) {
    if (part.empty()) continue;
    const std::string longer = line.empty() ? part : line + separator + part;
    if (line.empty() || width_of(longer) <= width) {
      line = longer;
      continue;
    }
    text += line + "\n";
    line = part;
  }
  return text + line;
}

}  // namespace

std::string JoinedInLines(const std::vector<std::string>& parts, float width, float font_size) {
  return in_lines(parts, " · ", width, font_size);
}

std::string WordsInLines(const std::string& text, float width) {
  std::vector<std::string> words;
  for (size_t at = 0; at <= text.size();) {
    const size_t space = std::min(text.find(' ', at), text.size());
    words.push_back(text.substr(at, space - at));
    at = space + 1;
  }
  return in_lines(words, " ", width, ImGui::GetFontSize());
}

const std::string* FirstThatFits(const std::vector<std::string>& forms, float width) {
  for (const std::string& form : forms)
    if (ImGui::CalcTextSize(form.c_str()).x <= width) return &form;
  return nullptr;
}

namespace {

// The first of `forms` that fits the rest of the row, else the last one cut short (`wrap`: the
// last one whole, wrapped at the pane's edge); the first under the mouse when another is shown.
std::string fitted(const std::vector<std::string>& forms, uint32_t color, bool wrap) {
  if (forms.empty()) return "";
  const float width = ImGui::GetContentRegionAvail().x;
  const std::string* fits = FirstThatFits(forms, width);
  const std::string shown = fits ? *fits : wrap ? forms.back() : cut_to_width(forms.back(), width);
  if (wrap) ImGui::PushTextWrapPos(0);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(color), "%s", shown.c_str());
  if (wrap) ImGui::PopTextWrapPos();
  if (shown != forms.front() && ImGui::IsItemHovered()) WrappedTooltip(forms.front());
  return shown;
}

}  // namespace

std::string FittedLine(const std::vector<std::string>& forms, uint32_t color) { return fitted(forms, color, false); }

std::string FittedOrWrapped(const std::vector<std::string>& forms, uint32_t color) { return fitted(forms, color, true); }

}  // namespace ringlab::viz
