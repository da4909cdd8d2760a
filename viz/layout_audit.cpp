#include "viz/layout_audit.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <utility>

namespace ringlab::viz {
namespace {

struct Box {
  float x0, y0, x1, y1;
  float area() const { return std::max(0.0f, x1 - x0) * std::max(0.0f, y1 - y0); }
};

Box intersect(const Box& a, const Box& b) {
  return {std::max(a.x0, b.x0), std::max(a.y0, b.y0), std::min(a.x1, b.x1), std::min(a.y1, b.y1)};
}

struct Glyph {
  Box box;
  Box clip;
  unsigned codepoint;
  int list;   // which draw list (window) drew it
  int order;  // draw order within the frame
  int line = -1;
};

struct Shape {  // an opaque axis-aligned filled rectangle, clipped
  Box visible;
  int list;
  int order;
};

struct Window {
  std::string name;
  bool scrolls = false;  // content taller than the window: lines cut at top or bottom are expected
  bool overlay = false;  // tooltip, popup or menu: drawn over the panes on purpose
  float work_right = 1e9f;  // where the window lays out its content (wrapped text ends before it)
};

// Glyph lookup by the top-left corner of its place in the font atlas.
using GlyphIndex = std::map<std::pair<float, float>, unsigned>;

GlyphIndex index_glyphs() {
  GlyphIndex index;
  for (const ImFont* font : ImGui::GetIO().Fonts->Fonts)
    for (const ImFontGlyph& g : font->Glyphs)
      if (g.Visible) index[{g.U0, g.V0}] = g.Codepoint;
  return index;
}

std::unordered_map<const ImDrawList*, Window> describe_windows() {
  std::unordered_map<const ImDrawList*, Window> windows;
  for (const ImGuiWindow* w : ImGui::GetCurrentContext()->Windows) {
    if (!w->WasActive) continue;
    const bool overlay = (w->Flags & (ImGuiWindowFlags_Tooltip | ImGuiWindowFlags_Popup | ImGuiWindowFlags_ChildMenu)) != 0;
    windows[w->DrawList] = {w->Name, w->ScrollMax.y > 0.5f, overlay, w->WorkRect.Max.x};
  }
  return windows;
}

// ImDrawList::PrimRectUV writes four vertices and the indices (i, i+1, i+2, i, i+2, i+3): text
// glyphs and filled rectangles are such quads. Anything else is read a triangle at a time.
bool is_quad(const ImDrawIdx* idx) {
  return idx[1] == idx[0] + 1 && idx[2] == idx[0] + 2 && idx[3] == idx[0] && idx[4] == idx[0] + 2 && idx[5] == idx[0] + 3;
}

struct Collected {
  std::vector<Glyph> glyphs;
  std::vector<Shape> shapes;
};

void collect_list(const ImDrawList* list, int list_no, const GlyphIndex& index, int& order, Collected& out) {
  const ImVec2 white = ImGui::GetIO().Fonts->TexUvWhitePixel;
  for (const ImDrawCmd& cmd : list->CmdBuffer) {
    if (cmd.UserCallback) continue;
    const Box clip{cmd.ClipRect.x, cmd.ClipRect.y, cmd.ClipRect.z, cmd.ClipRect.w};
    const ImDrawIdx* idx = list->IdxBuffer.Data + cmd.IdxOffset;
    const ImDrawVert* vtx = list->VtxBuffer.Data + cmd.VtxOffset;
    for (unsigned i = 0; i + 3 <= cmd.ElemCount;) {
      if (i + 6 > cmd.ElemCount || !is_quad(idx + i)) {
        i += 3;
        continue;
      }
      const ImDrawVert& a = vtx[idx[i]];
      const ImDrawVert& c = vtx[idx[i + 2]];
      const Box box{std::min(a.pos.x, c.pos.x), std::min(a.pos.y, c.pos.y), std::max(a.pos.x, c.pos.x),
                    std::max(a.pos.y, c.pos.y)};
      i += 6;
      ++order;
      if (a.uv.x == white.x && a.uv.y == white.y && c.uv.x == white.x && c.uv.y == white.y) {
        if ((a.col >> IM_COL32_A_SHIFT & 0xFF) >= 200) out.shapes.push_back({intersect(box, clip), list_no, order});
        continue;
      }
      const auto found = index.find({a.uv.x, a.uv.y});
      if (found != index.end() && box.area() > 0) out.glyphs.push_back({box, clip, found->second, list_no, order});
    }
  }
}

// Consecutive glyphs of one window on one baseline, close together, make a line of text.
struct Line {
  std::vector<int> glyphs;
  std::string text() const;
};

std::string utf8(unsigned cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | cp >> 6);
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | cp >> 12);
    s += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

std::vector<Line> group_lines(std::vector<Glyph>& glyphs, std::vector<std::string>& texts) {
  std::vector<Line> lines;
  for (size_t i = 0; i < glyphs.size(); ++i) {
    Glyph& g = glyphs[i];
    const float height = g.box.y1 - g.box.y0;
    bool joins = false;
    if (!lines.empty()) {
      const Glyph& prev = glyphs[lines.back().glyphs.back()];
      const float gap = g.box.x0 - prev.box.x1;
      const float tall = std::max(height, prev.box.y1 - prev.box.y0);
      // Same window, same row (glyph boxes differ in height: compare their overlap), the next
      // glyph a little to the right: a space between words leaves a gap under a glyph's height.
      const float shared_rows = std::min(g.box.y1, prev.box.y1) - std::max(g.box.y0, prev.box.y0);
      joins = g.list == prev.list && shared_rows > 0.3f * tall && gap > -0.3f * tall && gap < 1.2f * tall;
    }
    if (!joins) {
      lines.push_back({});
      texts.emplace_back();
    } else {
      const Glyph& prev = glyphs[lines.back().glyphs.back()];
      if (g.box.x0 - prev.box.x1 > 0.2f * height) texts.back() += ' ';
    }
    g.line = static_cast<int>(lines.size()) - 1;
    lines.back().glyphs.push_back(static_cast<int>(i));
    texts.back() += utf8(g.codepoint);
  }
  return lines;
}

Box bounds(const std::vector<Glyph>& glyphs, const std::vector<int>& which) {
  Box b{1e9f, 1e9f, -1e9f, -1e9f};
  for (int i : which) {
    b.x0 = std::min(b.x0, glyphs[i].box.x0);
    b.y0 = std::min(b.y0, glyphs[i].box.y0);
    b.x1 = std::max(b.x1, glyphs[i].box.x1);
    b.y1 = std::max(b.y1, glyphs[i].box.y1);
  }
  return b;
}

constexpr float kSlack = 1.0f;  // pixels: anti-aliasing and rounding

// Dear ImGui stops drawing a line at the first glyph whose pen position is past the clip edge, so
// a line cut on the right may end in a glyph that still fits: one that ends within a pixel or two
// of the edge, past where its window lays out content, is cut too.
bool cut_sideways(const Glyph& g, const Window& w) {
  if (g.box.x0 < g.clip.x0 - kSlack || g.box.x1 > g.clip.x1 + kSlack) return true;
  return g.box.x1 > g.clip.x1 - 2 * kSlack && g.box.x1 > w.work_right + kSlack;
}
bool cut_vertically(const Glyph& g) { return g.box.y0 < g.clip.y0 - kSlack || g.box.y1 > g.clip.y1 + kSlack; }

}  // namespace

const char* to_string(TextFlaw::Kind kind) {
  switch (kind) {
    case TextFlaw::Kind::Cut: return "cut";
    case TextFlaw::Kind::Overlap: return "overlap";
    case TextFlaw::Kind::Covered: return "covered";
  }
  return "?";
}

LayoutAudit AuditLayout(const ImDrawData* frame) {
  LayoutAudit audit;
  if (!frame) return audit;
  const GlyphIndex index = index_glyphs();
  const auto windows = describe_windows();
  std::vector<Window> list_window;
  Collected all;
  int order = 0;
  for (int n = 0; n < frame->CmdListsCount; ++n) {
    const ImDrawList* list = frame->CmdLists[n];
    const auto w = windows.find(list);
    list_window.push_back(w != windows.end() ? w->second : Window{list->_OwnerName ? list->_OwnerName : "?"});
    collect_list(list, n, index, order, all);
  }
  std::vector<std::string> texts;
  const std::vector<Line> lines = group_lines(all.glyphs, texts);
  audit.lines = static_cast<int>(lines.size());
  const auto flaw = [&](TextFlaw::Kind kind, int line, const Box& b, std::string other) {
    audit.flaws.push_back({kind, texts[line], std::move(other), list_window[all.glyphs[lines[line].glyphs[0]].list].name,
                           b.x0, b.y0, b.x1, b.y1});
  };

  // Cut: a glyph that reaches past its clip rectangle. Glyphs wholly outside are not drawn at
  // all, so the last one drawn of a cut line always crosses the edge.
  for (size_t l = 0; l < lines.size(); ++l) {
    std::vector<int> sideways, vertical;
    for (int g : lines[l].glyphs) {
      if (cut_sideways(all.glyphs[g], list_window[all.glyphs[g].list])) sideways.push_back(g);
      else if (cut_vertically(all.glyphs[g])) vertical.push_back(g);
    }
    const Window& w = list_window[all.glyphs[lines[l].glyphs[0]].list];
    if (!sideways.empty()) flaw(TextFlaw::Kind::Cut, static_cast<int>(l), bounds(all.glyphs, sideways), "");
    else if (!vertical.empty() && w.scrolls) ++audit.scrolled_lines;
    else if (!vertical.empty()) flaw(TextFlaw::Kind::Cut, static_cast<int>(l), bounds(all.glyphs, vertical), "");
  }

  // Overlap: glyphs of two different lines on top of each other (a tenth of the smaller glyph is
  // enough to make both hard to read). Overlays (menus, tooltips) cover panes on purpose.
  const float cell = 32.0f;
  std::unordered_map<long long, std::vector<int>> grid;
  const auto key = [](int cx, int cy) { return (static_cast<long long>(cx) << 32) ^ static_cast<unsigned>(cy); };
  std::map<std::pair<int, int>, Box> overlaps;
  for (int i = 0; i < static_cast<int>(all.glyphs.size()); ++i) {
    const Glyph& g = all.glyphs[i];
    if (list_window[g.list].overlay) continue;
    const Box seen = intersect(g.box, g.clip);
    if (seen.area() <= 0) continue;
    for (int cx = static_cast<int>(seen.x0 / cell); cx <= static_cast<int>(seen.x1 / cell); ++cx)
      for (int cy = static_cast<int>(seen.y0 / cell); cy <= static_cast<int>(seen.y1 / cell); ++cy) {
        for (int j : grid[key(cx, cy)]) {
          const Glyph& h = all.glyphs[j];
          if (h.line == g.line) continue;
          const float shared = intersect(seen, intersect(h.box, h.clip)).area();
          if (shared > 0.1f * std::min(g.box.area(), h.box.area())) {
            Box& b = overlaps.try_emplace({std::min(g.line, h.line), std::max(g.line, h.line)}, seen).first->second;
            b = {std::min(b.x0, seen.x0), std::min(b.y0, seen.y0), std::max(b.x1, seen.x1), std::max(b.y1, seen.y1)};
          }
        }
        grid[key(cx, cy)].push_back(i);
      }
  }
  for (const auto& [pair, box] : overlaps) flaw(TextFlaw::Kind::Overlap, pair.first, box, texts[pair.second]);

  // Covered: an opaque rectangle drawn later by the same window over the middle of a glyph.
  std::map<int, Box> covered;
  for (const Glyph& g : all.glyphs) {
    const float mx = (g.box.x0 + g.box.x1) / 2, my = (g.box.y0 + g.box.y1) / 2;
    if (mx < g.clip.x0 || mx > g.clip.x1 || my < g.clip.y0 || my > g.clip.y1) continue;
    for (const Shape& s : all.shapes) {
      if (s.list != g.list || s.order <= g.order) continue;
      if (mx > s.visible.x0 && mx < s.visible.x1 && my > s.visible.y0 && my < s.visible.y1) {
        Box& b = covered.try_emplace(g.line, g.box).first->second;
        b = {std::min(b.x0, g.box.x0), std::min(b.y0, g.box.y0), std::max(b.x1, g.box.x1), std::max(b.y1, g.box.y1)};
        break;
      }
    }
  }
  for (const auto& [line, box] : covered) flaw(TextFlaw::Kind::Covered, line, box, "shape");
  return audit;
}

}  // namespace ringlab::viz
