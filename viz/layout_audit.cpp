#include "viz/layout_audit.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <array>
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
  bool trimmed_x = false;  // cut on the CPU (buttons and fields clip their text this way): sideways
  bool trimmed_y = false;  // or at the top or bottom
  // Where the pen stood, the top of its line, and the pen's moves, in pixels: glyphs of one line
  // share the top, and a gap past the advance is a space.
  float pen = 0, top = 0, advance = 0, space = 0;
  int line = -1;
};

struct Shape {  // an opaque filled triangle (rectangles are two), clipped
  ImVec2 a, b, c;
  Box visible;
  int list;
  int order;
  bool contains(float x, float y) const {
    const auto side = [&](ImVec2 p, ImVec2 q) { return (q.x - p.x) * (y - p.y) - (q.y - p.y) * (x - p.x); };
    const float d1 = side(a, b), d2 = side(b, c), d3 = side(c, a);
    const bool neg = d1 < 0 || d2 < 0 || d3 < 0, pos = d1 > 0 || d2 > 0 || d3 > 0;
    return !(neg && pos) && x > visible.x0 && x < visible.x1 && y > visible.y0 && y < visible.y1;
  }
};

struct Window {
  std::string name;
  bool scrolls = false;  // content taller than the window: lines cut at top or bottom are expected
  bool overlay = false;  // tooltip, popup or menu: drawn over the panes on purpose
  float work_right = 1e9f;  // where the window lays out its content (wrapped text ends before it)
  float clip_right = 1e9f;  // the window's own clip edge: a nearer one belongs to a widget (a button, a field)
};

// Glyph lookup by the top-left corner of its place in the font atlas.
struct AtlasGlyph {
  unsigned codepoint;
  float u1, v1;  // the far corner: a quad that stops short of it was trimmed by a clip rectangle
  float x0, y0, w, h;     // where the ink sits from the pen position, and its size, at the font's size
  float advance, space;   // how far the pen moves after it, and after a space
};
using GlyphIndex = std::map<std::pair<float, float>, AtlasGlyph>;

GlyphIndex index_glyphs() {
  GlyphIndex index;
  for (const ImFont* font : ImGui::GetIO().Fonts->Fonts) {
    const ImFontGlyph* space = font->FindGlyphNoFallback(' ');
    const float space_advance = space ? space->AdvanceX : font->FontSize * 0.3f;
    for (const ImFontGlyph& g : font->Glyphs)
      if (g.Visible)
        index[{g.U0, g.V0}] = {g.Codepoint, g.U1, g.V1, g.X0, g.Y0, g.X1 - g.X0, g.Y1 - g.Y0, g.AdvanceX, space_advance};
  }
  return index;
}

std::unordered_map<const ImDrawList*, Window> describe_windows() {
  std::unordered_map<const ImDrawList*, Window> windows;
  for (const ImGuiWindow* w : ImGui::GetCurrentContext()->Windows) {
    if (!w->WasActive) continue;
    const bool overlay = (w->Flags & (ImGuiWindowFlags_Tooltip | ImGuiWindowFlags_Popup | ImGuiWindowFlags_ChildMenu)) != 0;
    windows[w->DrawList] = {w->Name, w->ScrollMax.y > 0.5f, overlay, w->WorkRect.Max.x, w->InnerClipRect.Max.x};
  }
  return windows;
}

// ImDrawList::PrimRectUV writes four vertices and the indices (i, i+1, i+2, i, i+2, i+3): text
// glyphs and filled rectangles are such quads. Anything else is read a triangle at a time.
bool is_quad(const ImDrawIdx* idx) {
  return idx[1] == idx[0] + 1 && idx[2] == idx[0] + 2 && idx[3] == idx[0] && idx[4] == idx[0] + 2 && idx[5] == idx[0] + 3;
}

// A filled area: consecutive triangles of one colour (a rectangle, a rounded box's fan), its box.
// Text sits on the last fill under it; text that reaches that fill's right edge ran out of room
// (buttons and fields clip their text on the CPU, leaving no glyph across an edge to see).
// A fill's box is not enough to say what is under the text: a node's band on the ring is an arc
// whose box holds other things too, so the triangles themselves are kept.
struct Fill {
  Box box;
  int list;
  int order;  // of its first triangle
  uint32_t color;
  std::vector<std::array<ImVec2, 3>> triangles;

  bool contains(float x, float y) const;
};

bool triangle_contains(const std::array<ImVec2, 3>& t, float x, float y) {
  const auto side = [&](ImVec2 a, ImVec2 b) { return (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x); };
  const float s0 = side(t[0], t[1]), s1 = side(t[1], t[2]), s2 = side(t[2], t[0]);
  return (s0 >= 0 && s1 >= 0 && s2 >= 0) || (s0 <= 0 && s1 <= 0 && s2 <= 0);
}

bool Fill::contains(float x, float y) const {
  if (x < box.x0 || x > box.x1 || y < box.y0 || y > box.y1) return false;
  return std::any_of(triangles.begin(), triangles.end(), [&](const auto& t) { return triangle_contains(t, x, y); });
}

struct Collected {
  std::vector<Glyph> glyphs;
  std::vector<Shape> shapes;
  std::vector<Fill> fills;
};

void collect_list(const ImDrawList* list, int list_no, const GlyphIndex& index, int& order, Collected& out) {
  const ImVec2 white = ImGui::GetIO().Fonts->TexUvWhitePixel;
  for (const ImDrawCmd& cmd : list->CmdBuffer) {
    if (cmd.UserCallback) continue;
    const Box clip{cmd.ClipRect.x, cmd.ClipRect.y, cmd.ClipRect.z, cmd.ClipRect.w};
    const ImDrawIdx* idx = list->IdxBuffer.Data + cmd.IdxOffset;
    const ImDrawVert* vtx = list->VtxBuffer.Data + cmd.VtxOffset;
    const auto opaque_white = [&](const ImDrawVert& v) {
      return v.uv.x == white.x && v.uv.y == white.y && (v.col >> IM_COL32_A_SHIFT & 0xFF) >= 200;
    };
    int last_fill_order = -2;
    const auto add_triangle = [&](const ImDrawVert& a, const ImDrawVert& b, const ImDrawVert& c) {
      const Box box{std::min({a.pos.x, b.pos.x, c.pos.x}), std::min({a.pos.y, b.pos.y, c.pos.y}),
                    std::max({a.pos.x, b.pos.x, c.pos.x}), std::max({a.pos.y, b.pos.y, c.pos.y})};
      const bool one_colour = a.col == b.col && b.col == c.col && a.uv.x == white.x && a.uv.y == white.y;
      if (one_colour && (a.col >> IM_COL32_A_SHIFT & 0xFF) >= 40) {
        if (out.fills.empty() || last_fill_order != order - 1 || out.fills.back().color != a.col)
          out.fills.push_back({box, list_no, order, a.col, {}});
        Fill& fill = out.fills.back();
        Box& f = fill.box;
        f = {std::min(f.x0, box.x0), std::min(f.y0, box.y0), std::max(f.x1, box.x1), std::max(f.y1, box.y1)};
        fill.triangles.push_back({a.pos, b.pos, c.pos});
        last_fill_order = order;
      }
      if (!opaque_white(a) || !opaque_white(b) || !opaque_white(c)) return;
      if (box.area() >= 4.0f) out.shapes.push_back({a.pos, b.pos, c.pos, intersect(box, clip), list_no, order});
    };
    for (unsigned i = 0; i + 3 <= cmd.ElemCount;) {
      ++order;
      if (i + 6 > cmd.ElemCount || !is_quad(idx + i)) {  // a triangle of some shape: lines, rounded boxes
        add_triangle(vtx[idx[i]], vtx[idx[i + 1]], vtx[idx[i + 2]]);
        i += 3;
        continue;
      }
      const ImDrawVert& a = vtx[idx[i]];
      const ImDrawVert& c = vtx[idx[i + 2]];
      const Box box{std::min(a.pos.x, c.pos.x), std::min(a.pos.y, c.pos.y), std::max(a.pos.x, c.pos.x),
                    std::max(a.pos.y, c.pos.y)};
      if (a.uv.x == white.x && a.uv.y == white.y && c.uv.x == white.x && c.uv.y == white.y) {
        add_triangle(a, vtx[idx[i + 1]], c);
        ++order;
        add_triangle(a, c, vtx[idx[i + 5]]);
        i += 6;
        continue;
      }
      i += 6;
      const auto found = index.find({a.uv.x, a.uv.y});
      if (found == index.end() || box.area() <= 0) continue;
      static constexpr float eps = 1e-6f;
      // Only a widget's own clip rectangle (a button's, a field's) trims glyphs on the CPU; the
      // window's is left to the GPU. More than a pixel and a half gone is a cut a person sees.
      const AtlasGlyph& full = found->second;
      const auto lost_px = [](float shown_px, float shown_uv, float full_uv) {
        return shown_uv > eps ? shown_px * (full_uv / shown_uv - 1.0f) : 1e9f;
      };
      const bool trimmed_x = lost_px(box.x1 - box.x0, c.uv.x - a.uv.x, full.u1 - a.uv.x) > 1.5f;
      const bool trimmed_y = lost_px(box.y1 - box.y0, c.uv.y - a.uv.y, full.v1 - a.uv.y) > 1.5f;
      Glyph g{box, clip, full.codepoint, list_no, order, trimmed_x, trimmed_y};
      const float scale = !trimmed_y && full.h > 0 ? (box.y1 - box.y0) / full.h
                          : !trimmed_x && full.w > 0 ? (box.x1 - box.x0) / full.w
                                                     : 1.0f;
      g.pen = box.x0 - full.x0 * scale;
      g.top = box.y0 - full.y0 * scale;
      g.advance = full.advance * scale;
      g.space = full.space * scale;
      out.glyphs.push_back(g);
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
    float extra = 0;  // how far past where the last glyph left the pen this one starts
    bool joins = false;
    if (!lines.empty()) {
      const Glyph& prev = glyphs[lines.back().glyphs.back()];
      extra = g.pen - (prev.pen + prev.advance);
      // Same window, same line top, the pen at most a few spaces further on (and not back).
      joins = g.list == prev.list && std::fabs(g.top - prev.top) < 1.5f && extra > -1.5f && extra < 3.5f * g.space;
    }
    if (!joins) {
      lines.push_back({});
      texts.emplace_back();
    } else if (extra > 0.5f * g.space) {
      texts.back() += ' ';
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
// Inside a widget (its clip edge short of the window's), text that fits is centred with padding,
// so text that reaches the widget's edge is cut too.
bool cut_sideways(const Glyph& g, const Window& w) {
  if (g.box.x0 < g.clip.x0 - kSlack || g.box.x1 > g.clip.x1 + kSlack) return true;
  const bool at_edge = g.box.x1 > g.clip.x1 - 2 * kSlack;
  return at_edge && (g.box.x1 > w.work_right + kSlack || g.clip.x1 < w.clip_right - kSlack);
}
bool cut_vertically(const Glyph& g) { return g.box.y0 < g.clip.y0 - kSlack || g.box.y1 > g.clip.y1 + kSlack; }

// The fill a line of text sits on: the last one drawn before it, by its window, under its first glyph.
// A surface drawn in pieces (a ring's band, slice by slice) goes on past a piece's edge: text
// that stops there stopped on the surface, not at its edge. And a slanted piece's box reaches
// past its rim: text that ends there, above the rim, ended beside the piece.
bool reaches_edge_of_fill(const Collected& all, const Line& line) {
  const Glyph& first = all.glyphs[line.glyphs.front()];
  const Glyph& last = all.glyphs[line.glyphs.back()];
  const float mx = (first.box.x0 + first.box.x1) / 2, my = (first.box.y0 + first.box.y1) / 2;
  for (auto f = all.fills.rbegin(); f != all.fills.rend(); ++f) {
    if (f->list != first.list || f->order > first.order) continue;
    if (!f->contains(mx, my)) continue;
    // Text that fits keeps its padding from the edge of what it is written on: a line that
    // starts on the fill and stops right at its edge was stopped there.
    const bool at_edge = last.box.x1 > f->box.x1 - 1.5f * kSlack && last.box.x1 <= f->box.x1 + 0.5f * kSlack;
    if (!at_edge || first.box.x0 < f->box.x0 || f->box.x1 >= first.clip.x1 - kSlack) return false;
    // Its end on the fill too: a label that crosses the rim of a slanted shape is not written on it.
    if (!f->contains(last.box.x1 - 1.5f * kSlack, (last.box.y0 + last.box.y1) / 2)) return false;
    const float past = f->box.x1 + 2 * kSlack;
    return std::none_of(all.fills.begin(), all.fills.end(), [&](const Fill& g) {
      return &g != &*f && g.list == f->list && g.color == f->color && g.contains(past, my);
    });
  }
  return false;
}

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
  audit.texts = texts;
  const auto flaw = [&](TextFlaw::Kind kind, int line, const Box& b, std::string other) {
    audit.flaws.push_back({kind, texts[line], std::move(other), list_window[all.glyphs[lines[line].glyphs[0]].list].name,
                           b.x0, b.y0, b.x1, b.y1});
  };

  // Cut: a glyph that reaches past its clip rectangle. Glyphs wholly outside are not drawn at
  // all, so the last one drawn of a cut line always crosses the edge.
  for (size_t l = 0; l < lines.size(); ++l) {
    std::vector<int> sideways, vertical;
    for (int g : lines[l].glyphs) {
      if (all.glyphs[g].trimmed_x || cut_sideways(all.glyphs[g], list_window[all.glyphs[g].list])) sideways.push_back(g);
      else if (all.glyphs[g].trimmed_y || cut_vertically(all.glyphs[g])) vertical.push_back(g);
    }
    const Window& w = list_window[all.glyphs[lines[l].glyphs[0]].list];
    if (sideways.empty() && reaches_edge_of_fill(all, lines[l])) sideways.push_back(lines[l].glyphs.back());
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

  // Covered: an opaque shape drawn later by the same window over the middle of a glyph.
  std::unordered_map<long long, std::vector<int>> shape_grid;
  for (int i = 0; i < static_cast<int>(all.shapes.size()); ++i) {
    const Box& v = all.shapes[i].visible;
    if (v.area() <= 0) continue;
    for (int cx = static_cast<int>(v.x0 / cell); cx <= static_cast<int>(v.x1 / cell); ++cx)
      for (int cy = static_cast<int>(v.y0 / cell); cy <= static_cast<int>(v.y1 / cell); ++cy) shape_grid[key(cx, cy)].push_back(i);
  }
  std::map<int, Box> covered;
  for (const Glyph& g : all.glyphs) {
    const float mx = (g.box.x0 + g.box.x1) / 2, my = (g.box.y0 + g.box.y1) / 2;
    if (mx < g.clip.x0 || mx > g.clip.x1 || my < g.clip.y0 || my > g.clip.y1) continue;
    const auto cell_shapes = shape_grid.find(key(static_cast<int>(mx / cell), static_cast<int>(my / cell)));
    if (cell_shapes == shape_grid.end()) continue;
    for (int si : cell_shapes->second) {
      const Shape& s = all.shapes[si];
      if (s.list != g.list || s.order <= g.order) continue;
      if (s.contains(mx, my)) {
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
