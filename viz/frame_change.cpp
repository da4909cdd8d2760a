#include "viz/frame_change.h"

#include <algorithm>
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

}  // namespace

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

std::vector<ScreenRect> take_clip_rects(const ImDrawData& draw) {
  std::vector<ScreenRect> clips;
  for (int i = 0; i < draw.CmdListsCount; ++i)
    for (const ImDrawCmd& cmd : draw.CmdLists[i]->CmdBuffer) clips.push_back(rect_of(cmd.ClipRect));
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

bool FrameChange::changed(const ImDrawData& draw) {
  now_.clear();
  now_lists_.clear();
  append(now_, &draw.DisplaySize, 1);
  append(now_, &draw.FramebufferScale, 1);
  const size_t header = now_.size();
  const ScreenRect display{draw.DisplayPos.x, draw.DisplayPos.y, draw.DisplayPos.x + draw.DisplaySize.x,
                           draw.DisplayPos.y + draw.DisplaySize.y};
  for (int i = 0; i < draw.CmdListsCount; ++i) {
    const ImDrawList& list = *draw.CmdLists[i];
    ListBytes bytes{list._OwnerName ? list._OwnerName : "", now_.size(), 0, drawn_by(list, display)};
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
    if (!same_bytes(now_, now.begin, now.end, last_, then.begin, then.end)) {
      damage.add(now.drawn);
      damage.add(then.drawn);
    }
  }
  for (size_t j = 0; j < last_lists_.size(); ++j)
    if (!matched[j]) damage.add(last_lists_[j].drawn);
  return damage;
}

}  // namespace ringlab::viz
