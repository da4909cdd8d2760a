#pragma once
// Small layout helpers shared by the views.
#include <cstdint>
#include <string>
#include <vector>

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

// A tooltip, sized for its text in the frame that draws it, and opaque also over a disabled
// control (Dear ImGui 1.86 dims everything drawn inside BeginDisabled, a tooltip's window too,
// and the text under it showed through).
void Tooltip(const std::string& text);
// A tooltip whose lines wrap at `width` text heights, so that none runs off the window.
void WrappedTooltip(const std::string& text, float width = 30);

// One line that never wraps: the first of `forms` (the fullest first) that fits the rest of the
// row, else the last one cut short with "…". When a shorter form is shown, hovering it shows the
// first. A status whose numbers lengthen keeps its height this way, and the controls under it
// stay where a hand is about to click. Returns the text shown.
// The first of `forms` (longest first) whose text fits `width`, or nullptr when none does.
const std::string* FirstThatFits(const std::vector<std::string>& forms, float width);
std::string FittedLine(const std::vector<std::string>& forms, uint32_t color);
// The same, but where no form fits one line the last one wraps (a line whose words matter more
// than its height), at the pane's edge. Returns the text shown.
std::string FittedOrWrapped(const std::vector<std::string>& forms, uint32_t color);

// `parts` joined by " · " into lines no wider than `width` at font size `font_size`, broken only
// between parts (a part wider than a line gets one of its own and wraps there): no line starts
// with a "·" cut from the end of the one above.
std::string JoinedInLines(const std::vector<std::string>& parts, float width, float font_size);
// `text` in lines no wider than `width` at the current font, broken only at spaces: Dear ImGui's
// own wrapping also breaks after a comma, and cut "1,628,221" into "1," and "628,221".
std::string WordsInLines(const std::string& text, float width);

// Buttons that share a row: how many of them fit in one row of the pane, each as wide as the
// widest needs (`labels` are the texts on screen), and each button's width at that count.
struct ButtonGrid {
  int per_row = 1;
  float width = 0;
  // Before button i: stays on the row, or starts the next one.
  void place(int i) const;
};
ButtonGrid FitButtons(const std::vector<std::string>& labels, int most_per_row);

// Forms: the label in a left column (wrapped when it is longer than the column), the field in
// the rest of the row. Call before the field, which then takes the width it is given.
// `column` is a fraction of the pane's width. A field that needs `field_min` pixels and would get
// fewer beside the label takes the whole row under it.
void FormLabel(const char* text, float column = 0.5f, float field_min = 0);

// A header that opens and closes what follows, with its text wrapped (a collapsing header cuts
// a long title at the pane's edge). `id` keeps the open state; returns whether it is open.
// `close`: folded now, whatever it was (the pane lost the room for what it holds).
bool WrappedHeader(const char* text, const char* id, bool default_open, bool close = false);
// A radio button whose text wraps; a click on the text chooses it too.
bool WrappedRadio(const char* text, const char* id, bool active);

// A slider whose value is written beside it, never under its handle (Dear ImGui writes it in the
// middle of the slider, where the handle passes over it). Takes the next item width, or the rest
// of the row. `shown` is the value as it should read ("0.030", "4 ranks").
struct SliderOutcome {
  bool changed = false;
  bool released = false;  // let go after a change: the moment to act on it
  bool hovered = false;
  float x0 = 0, x1 = 0, y = 0;  // where the slider itself is on screen: its ends, its middle
};
SliderOutcome SliderIntBeside(const char* id, int* value, int lo, int hi, const std::string& shown, int flags = 0);
// The same slider with a − and a + button between it and its value, each a step of one: a
// slider with many values on a narrow pane lands a drag one off (16 worlds on 107 px at
// 1280x720), and a click on + does not. `widest` is the longest value it shows ("16"): the value's
// room is kept for it, so the buttons stay put when a click takes the value from 9 to 10.
struct SteppedOutcome : SliderOutcome {
  bool stepped = false;  // − or + changed the value
  float minus_x = 0, plus_x = 0;  // the buttons' middles, on the slider's row (y)
};
SteppedOutcome SliderIntStepped(const char* id, int* value, int lo, int hi, const std::string& shown,
                                const std::string& widest);
SliderOutcome SliderFloatBeside(const char* id, float* value, float lo, float hi, const std::string& shown, int flags = 0);

}  // namespace ringlab::viz
