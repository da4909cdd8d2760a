#pragma once
// Finds text a person could not read in a rendered frame: cut at the edge of its pane or field,
// drawn over other text, or covered by a shape drawn after it. It reads what Dear ImGui handed
// to the renderer (every glyph is a textured quad with its clip rectangle), so it checks every
// view at once, including text no view meant to cut.
#include <string>
#include <vector>

struct ImDrawData;

namespace ringlab::viz {

struct TextFlaw {
  enum class Kind { Cut, Overlap, Covered };
  Kind kind;
  std::string text;     // the line of text the flaw is in, as far as it was drawn
  std::string other;    // Overlap: the other line; Covered: "shape"
  std::string window;   // the Dear ImGui window that drew it
  float x0, y0, x1, y1; // the flawed glyphs' box, in pixels
};

struct LayoutAudit {
  int lines = 0;             // lines of text drawn in the frame
  int scrolled_lines = 0;    // lines cut at the top or bottom of a pane that scrolls: not a flaw
  std::vector<std::string> texts;  // each line's text, in the order drawn: two labels a space or two apart read as one
  std::vector<TextFlaw> flaws;
};

// Call after ImGui::Render(), with the draw data of the frame just rendered.
LayoutAudit AuditLayout(const ImDrawData* frame);

const char* to_string(TextFlaw::Kind kind);

}  // namespace ringlab::viz
