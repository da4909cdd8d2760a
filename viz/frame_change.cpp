#include "viz/frame_change.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <imgui.h>

namespace ringlab::viz {
namespace {

template <class T>
void append(std::vector<uint8_t>& out, const T* data, size_t count) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data);
  out.insert(out.end(), bytes, bytes + count * sizeof(T));
}

bool same_bytes(const std::vector<uint8_t>& a, size_t a0, size_t a1, const std::vector<uint8_t>& b, size_t b0,
                size_t b1) {
  return a1 - a0 == b1 - b0 && std::memcmp(a.data() + a0, b.data() + b0, a1 - a0) == 0;
}

ScreenRect rect_of(const ImVec4& clip) { return ScreenRect{clip.x, clip.y, clip.z, clip.w}; }

// The pixels a list can touch: each command's triangles, cut to its clip rectangle (a child
// window's border is drawn under its parent's clip rectangle, far larger than the border).
ScreenRect drawn_by(const ImDrawList& list, const ScreenRect& display) {
  ScreenRect drawn;
  for (const ImDrawCmd& cmd : list.CmdBuffer) {
    if (cmd.ElemCount == 0 || cmd.UserCallback) continue;
    float x0 = std::numeric_limits<float>::max(), y0 = x0, x1 = -x0, y1 = -x0;
    for (unsigned i = 0; i < cmd.ElemCount; ++i) {
      const ImVec2 p = list.VtxBuffer[static_cast<int>(cmd.VtxOffset + list.IdxBuffer[static_cast<int>(cmd.IdxOffset + i)])].pos;
      x0 = std::min(x0, p.x);
      y0 = std::min(y0, p.y);
      x1 = std::max(x1, p.x);
      y1 = std::max(y1, p.y);
    }
    drawn.add(ScreenRect{x0, y0, x1, y1}.clipped_to(rect_of(cmd.ClipRect)));
  }
  return drawn.clipped_to(display);
}

// One triangle as it fills pixels: its corners (place, texture place, colour), its texture
// and its clip rectangle. Any change to these may change a pixel it touches.
uint64_t triangle_hash(const ImDrawList& list, const ImDrawCmd& cmd, unsigned first) {
  uint64_t h = 0;
  auto mix = [&h](const void* data) {  // eight bytes at a time: a frame has thousands of triangles
    uint64_t word = 0;
    std::memcpy(&word, data, sizeof word);
    h = (h ^ word) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  };
  for (unsigned k = 0; k < 3; ++k) {
    const ImDrawVert& v = list.VtxBuffer[static_cast<int>(cmd.VtxOffset + list.IdxBuffer[static_cast<int>(cmd.IdxOffset + first + k)])];
    const uint64_t col = v.col;
    mix(&v.pos);
    mix(&v.uv);
    mix(&col);
  }
  const auto texture = reinterpret_cast<uintptr_t>(cmd.TextureId);
  mix(&texture);
  mix(&cmd.ClipRect.x);  // x, y
  mix(&cmd.ClipRect.z);  // z, w
  return h;
}

// The pixels a triangle can touch: its corners' box, a unit out for the rounding of its edges,
// inside its clip rectangle and the display.
ScreenRect triangle_box(const ImDrawList& list, const ImDrawCmd& cmd, unsigned first, const ScreenRect& display) {
  ScreenRect box;
  for (unsigned k = 0; k < 3; ++k) {
    const ImVec2 p = list.VtxBuffer[static_cast<int>(cmd.VtxOffset + list.IdxBuffer[static_cast<int>(cmd.IdxOffset + first + k)])].pos;
    box.add(ScreenRect{p.x - 1, p.y - 1, p.x + 1, p.y + 1});
  }
  return box.clipped_to(rect_of(cmd.ClipRect)).clipped_to(display);
}

}  // namespace

uint64_t FrameChange::Tiles::at(int tx, int ty) const {
  if (tx < x0 || ty < y0 || tx >= x0 + cols || ty >= y0 + rows) return 0;
  return hash[static_cast<size_t>((ty - y0) * cols + (tx - x0))];
}

FrameChange::Tiles FrameChange::tiles_of(const ImDrawList& list, const ScreenRect& drawn, const ScreenRect& display) {
  Tiles t;
  if (drawn.empty()) return t;
  const ScreenRect covered = ScreenRect{drawn.x0 - 1, drawn.y0 - 1, drawn.x1 + 1, drawn.y1 + 1}.clipped_to(display);
  auto tile = [&](float v, float origin) { return static_cast<int>(std::floor((v - origin) / kTile)); };
  t.x0 = tile(covered.x0, display.x0), t.y0 = tile(covered.y0, display.y0);
  t.cols = tile(covered.x1, display.x0) - t.x0 + 1, t.rows = tile(covered.y1, display.y0) - t.y0 + 1;
  t.hash.assign(static_cast<size_t>(t.cols) * static_cast<size_t>(t.rows), 0);
  for (const ImDrawCmd& cmd : list.CmdBuffer) {
    if (cmd.UserCallback) continue;
    for (unsigned i = 0; i + 2 < cmd.ElemCount; i += 3) {
      const ScreenRect box = triangle_box(list, cmd, i, display);
      if (box.empty()) continue;
      const uint64_t h = triangle_hash(list, cmd, i);
      const int tx1 = std::min(tile(box.x1, display.x0), t.x0 + t.cols - 1);
      const int ty1 = std::min(tile(box.y1, display.y0), t.y0 + t.rows - 1);
      for (int ty = std::max(tile(box.y0, display.y0), t.y0); ty <= ty1; ++ty)
        for (int tx = std::max(tile(box.x0, display.x0), t.x0); tx <= tx1; ++tx) {
          uint64_t& cell = t.hash[static_cast<size_t>((ty - t.y0) * t.cols + (tx - t.x0))];
          cell = ((cell << 31 | cell >> 33) ^ h) * 0x9e3779b97f4a7c15ull | 1;  // in order; never 0
        }
    }
  }
  return t;
}

// The squares where the two lists' hashes differ, a row's neighbouring squares as one rectangle.
void FrameChange::add_changed_tiles(Damage& damage, const ListBytes& now, const ListBytes& then,
                                    const ScreenRect& display) {
  const Tiles &a = now.tiles, &b = then.tiles;
  if (a.cols == 0 && b.cols == 0) return;
  const int x0 = a.cols == 0 ? b.x0 : b.cols == 0 ? a.x0 : std::min(a.x0, b.x0);
  const int y0 = a.cols == 0 ? b.y0 : b.cols == 0 ? a.y0 : std::min(a.y0, b.y0);
  const int x1 = std::max(a.cols ? a.x0 + a.cols : x0, b.cols ? b.x0 + b.cols : x0);
  const int y1 = std::max(a.rows ? a.y0 + a.rows : y0, b.rows ? b.y0 + b.rows : y0);
  for (int ty = y0; ty < y1; ++ty)
    for (int tx = x0; tx < x1;) {
      if (a.at(tx, ty) == b.at(tx, ty)) {
        ++tx;
        continue;
      }
      const int run = tx;
      while (tx < x1 && a.at(tx, ty) != b.at(tx, ty)) ++tx;
      damage.add(ScreenRect{display.x0 + static_cast<float>(run * kTile), display.y0 + static_cast<float>(ty * kTile),
                            display.x0 + static_cast<float>(tx * kTile), display.y0 + static_cast<float>((ty + 1) * kTile)}
                     .clipped_to(display));
    }
}

void ScreenRect::add(const ScreenRect& r) {
  if (r.empty()) return;
  if (empty()) {
    *this = r;
    return;
  }
  x0 = std::min(x0, r.x0);
  y0 = std::min(y0, r.y0);
  x1 = std::max(x1, r.x1);
  y1 = std::max(y1, r.y1);
}

ScreenRect ScreenRect::clipped_to(const ScreenRect& r) const {
  return ScreenRect{std::max(x0, r.x0), std::max(y0, r.y0), std::min(x1, r.x1), std::min(y1, r.y1)};
}

// A rectangle that overlaps one already there joins it (and the joined one may then overlap
// another): the rectangles are drawn one after another, and an overlap would be drawn twice.
void Damage::add(ScreenRect r) {
  if (r.empty()) return;
  for (size_t i = 0; i < rects_.size();) {
    if (rects_[i].overlaps(r)) {
      r.add(rects_[i]);
      rects_.erase(rects_.begin() + static_cast<std::ptrdiff_t>(i));
      i = 0;
    } else {
      ++i;
    }
  }
  rects_.push_back(r);
  if (rects_.size() <= kMost) return;
  size_t best_a = 0, best_b = 1;
  float least = std::numeric_limits<float>::max();
  for (size_t a = 0; a < rects_.size(); ++a)
    for (size_t b = a + 1; b < rects_.size(); ++b) {
      ScreenRect joined = rects_[a];
      joined.add(rects_[b]);
      const float waste = joined.area() - rects_[a].area() - rects_[b].area();
      if (waste < least) least = waste, best_a = a, best_b = b;
    }
  ScreenRect joined = rects_[best_a];
  joined.add(rects_[best_b]);
  rects_.erase(rects_.begin() + static_cast<std::ptrdiff_t>(best_b));
  rects_.erase(rects_.begin() + static_cast<std::ptrdiff_t>(best_a));
  add(joined);
}

float Damage::area() const {
  float sum = 0;
  for (const ScreenRect& r : rects_) sum += r.area();
  return sum;
}

namespace {

// The pixels Dear ImGui's OpenGL backend scissors a command to, in display coordinates. It cuts
// a clip rectangle's corner and its size down to whole framebuffer pixels separately
// (glScissor((int)x0, (int)(fb_h - y1), (int)(x1 - x0), (int)(y1 - y0))), so a rectangle with
// fractional edges, cut at a square's whole edge, covered a column or row more than it covers in
// a whole frame: at 1280x720 the Timeline's right edge left a column a whole frame never draws.
ScreenRect scissored(const ScreenRect& clip, const ImDrawData& draw) {
  const ImVec2 o = draw.DisplayPos, s = draw.FramebufferScale;
  const float fb_h = static_cast<float>(static_cast<int>(draw.DisplaySize.y * s.y));
  const float x0 = (clip.x0 - o.x) * s.x, x1 = (clip.x1 - o.x) * s.x;
  const float y0 = (clip.y0 - o.y) * s.y, y1 = (clip.y1 - o.y) * s.y;
  if (x1 <= x0 || y1 <= y0) return ScreenRect{};
  const int left = static_cast<int>(x0), width = static_cast<int>(x1 - x0);
  const int bottom = static_cast<int>(fb_h - y1), height = static_cast<int>(y1 - y0);  // GL's rows, from the bottom
  const float top = fb_h - static_cast<float>(bottom + height);
  return ScreenRect{o.x + static_cast<float>(left) / s.x, o.y + top / s.y, o.x + static_cast<float>(left + width) / s.x,
                    o.y + (top + static_cast<float>(height)) / s.y};
}

}  // namespace

std::vector<ScreenRect> take_clip_rects(const ImDrawData& draw) {
  std::vector<ScreenRect> clips;
  for (int i = 0; i < draw.CmdListsCount; ++i)
    for (const ImDrawCmd& cmd : draw.CmdLists[i]->CmdBuffer) clips.push_back(scissored(rect_of(cmd.ClipRect), draw));
  return clips;
}

void clip_draw_data(ImDrawData& draw, const std::vector<ScreenRect>& whole, const ScreenRect& r) {
  size_t k = 0;
  for (int i = 0; i < draw.CmdListsCount; ++i)
    for (ImDrawCmd& cmd : draw.CmdLists[i]->CmdBuffer) {
      const ScreenRect cut = whole[k++].clipped_to(r);
      cmd.ClipRect = cut.empty() ? ImVec4(r.x0, r.y0, r.x0, r.y0) : ImVec4(cut.x0, cut.y0, cut.x1, cut.y1);
    }
}

bool FrameChange::changed(const ImDrawData& draw) { return changed(draw, ImVec4(0, 0, 0, 1)); }

bool FrameChange::changed(const ImDrawData& draw, const ImVec4& background) {
  now_.clear();
  now_lists_.clear();
  append(now_, &draw.DisplaySize, 1);
  append(now_, &draw.FramebufferScale, 1);
  // Where no triangle lies, the picture is this colour: a new theme changes squares no list's
  // hash covers.
  append(now_, &background, 1);
  const size_t header = now_.size();
  const ScreenRect display{draw.DisplayPos.x, draw.DisplayPos.y, draw.DisplayPos.x + draw.DisplaySize.x,
                           draw.DisplayPos.y + draw.DisplaySize.y};
  for (int i = 0; i < draw.CmdListsCount; ++i) {
    const ImDrawList& list = *draw.CmdLists[i];
    const ScreenRect drawn = drawn_by(list, display);
    ListBytes bytes{list._OwnerName ? list._OwnerName : "", now_.size(), 0, drawn,
                    squares_ ? tiles_of(list, drawn, display) : Tiles{}};
    for (const ImDrawCmd& cmd : list.CmdBuffer) {  // what each draws; callbacks are not used
      append(now_, &cmd.ClipRect, 1);
      append(now_, &cmd.TextureId, 1);
      append(now_, &cmd.VtxOffset, 1);
      append(now_, &cmd.IdxOffset, 1);
      append(now_, &cmd.ElemCount, 1);
    }
    append(now_, list.VtxBuffer.Data, static_cast<size_t>(list.VtxBuffer.Size));
    append(now_, list.IdxBuffer.Data, static_cast<size_t>(list.IdxBuffer.Size));
    bytes.end = now_.size();
    now_lists_.push_back(std::move(bytes));
  }
  const bool differs = now_ != last_;
  damage_ = Damage{};
  if (differs && !last_.empty() && same_bytes(now_, 0, header, last_, 0, header)) damage_ = compare_lists(display);
  else if (differs) damage_.add(display);
  last_.swap(now_);
  last_lists_.swap(now_lists_);
  return differs;
}

// Lists are matched by the window that filled them. A list that changed damages where it drew
// and where it draws; one that came, where it draws; one that went, where it drew. Lists drawn in
// another order than before may now cover each other differently: the whole display then.
Damage FrameChange::compare_lists(const ScreenRect& display) const {
  Damage damage;
  std::vector<bool> matched(last_lists_.size(), false);
  size_t previous_match = 0;
  bool first_match = true;
  for (const ListBytes& now : now_lists_) {
    size_t j = 0;
    while (j < last_lists_.size() && (matched[j] || last_lists_[j].owner != now.owner)) ++j;
    if (j == last_lists_.size()) {
      damage.add(now.drawn);
      continue;
    }
    if (!first_match && j < previous_match) {
      Damage whole;
      whole.add(display);
      return whole;
    }
    first_match = false;
    previous_match = j;
    matched[j] = true;
    const ListBytes& then = last_lists_[j];
    if (same_bytes(now_, now.begin, now.end, last_, then.begin, then.end)) continue;
    if (squares_) {
      add_changed_tiles(damage, now, then, display);
    } else {
      damage.add(now.drawn);
      damage.add(then.drawn);
    }
  }
  for (size_t j = 0; j < last_lists_.size(); ++j)
    if (!matched[j]) damage.add(last_lists_[j].drawn);
  return damage;
}

}  // namespace ringlab::viz
