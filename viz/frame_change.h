#pragma once
// Whether a frame would put anything new on the screen, and where. On a machine without a GPU the
// software renderer fills every pixel of every frame (about 28 ms of CPU at 1920x1080 here), also
// for the frames a quiet window draws now and then, which Dear ImGui lays out the same as the
// last. The window skips presenting those: it keeps showing the last frame, which is the same
// picture. And in a frame where only part of the picture moved (the ring's packets, the
// step-through slider, a number in the status), the window redraws and presents those rectangles
// alone (app/partial_present.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct ImDrawData;
struct ImDrawList;
struct ImVec4;

namespace ringlab::viz {

// A rectangle on screen in Dear ImGui's display coordinates (x0, y0 its top left corner).
struct ScreenRect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool empty() const { return x1 <= x0 || y1 <= y0; }
  float area() const { return empty() ? 0 : (x1 - x0) * (y1 - y0); }
  void add(const ScreenRect& r);  // grows to cover r as well (an empty r changes nothing)
  ScreenRect clipped_to(const ScreenRect& r) const;
  bool overlaps(const ScreenRect& r) const { return !clipped_to(r).empty(); }
  bool contains(const ScreenRect& r) const { return r.x0 >= x0 && r.y0 >= y0 && r.x1 <= x1 && r.y1 <= y1; }
};

// Where a frame differs from the one on screen: a few rectangles, none overlapping another. Each
// costs a pass of the renderer over the frame's triangles and a copy to the window, so past
// kMost the two whose joined rectangle wastes the least area are joined.
class Damage {
 public:
  static constexpr size_t kMost = 4;
  void add(ScreenRect r);
  const std::vector<ScreenRect>& rects() const { return rects_; }
  bool empty() const { return rects_.empty(); }
  float area() const;

 private:
  std::vector<ScreenRect> rects_;
};

// Cuts the clip rectangle of every command in `draw` down to its part inside `r`, from the clip
// rectangles kept in `whole` (take_clip_rects: the frame's own, as the whole framebuffer pixels
// the renderer scissors them to). The renderer then draws nothing outside r, and inside it what
// it draws in a whole frame; a command left with nothing is skipped.
std::vector<ScreenRect> take_clip_rects(const ImDrawData& draw);
void clip_draw_data(ImDrawData& draw, const std::vector<ScreenRect>& whole, const ScreenRect& r);

class FrameChange {
 public:
  // True when `draw` differs from the draw data of the frame last given here (the first always
  // does): the same display size, the same colour under it all (`background`, what the frame is
  // cleared to), the same vertices, indices, clip rectangles and textures in the same order is
  // the same picture. Keeps `draw`'s bytes for the next call.
  bool changed(const ImDrawData& draw, const ImVec4& background);
  bool changed(const ImDrawData& draw);  // over black
  // Whether a list that changed damages only the squares where it changed (the default), or all
  // it covers now and covered then: where frames are swapped whole, the squares serve nothing.
  void damage_by_squares(bool on) { squares_ = on; }
  // Where the frame last given to changed() differs from the one before it: the squares (Tiles)
  // where a draw list (a Dear ImGui window) changed, and where lists that came or went draw now
  // and drew then. The whole display
  // when that cannot be told apart: the first frame, after forget(), a new display size, or
  // windows drawn in another order (one may now cover another).
  const Damage& damage() const { return damage_; }
  // The next frame is presented whatever it holds (the window was resized, exposed, or its
  // contents may have been lost).
  void forget() {
    last_.clear();
    last_lists_.clear();
  }

 private:
  // A list's triangles by where they fall. The display is cut into squares of kTile units; each
  // square a list's triangles touch keeps a hash of those triangles, in the order drawn. Where a
  // square's hash is the same in two frames, the same triangles fill it the same way: its pixels
  // are the same. So a window that changed damages only the squares where it changed (the ring's
  // moving packets, a number in a line of text), not all it covers.
  static constexpr int kTile = 32;
  struct Tiles {
    int x0 = 0, y0 = 0, cols = 0, rows = 0;  // in squares, counted from the display's top left
    std::vector<uint64_t> hash;              // row by row; 0 where no triangle touches
    uint64_t at(int tx, int ty) const;
  };
  struct ListBytes {
    std::string owner;          // the Dear ImGui window that filled the list
    size_t begin = 0, end = 0;  // its bytes in the frame's bytes
    ScreenRect drawn;           // what its triangles cover, inside their clip rectangles
    Tiles tiles;
  };
  static Tiles tiles_of(const ImDrawList& list, const ScreenRect& drawn, const ScreenRect& display);
  static void add_changed_tiles(Damage& damage, const ListBytes& now, const ListBytes& then, const ScreenRect& display);
  Damage compare_lists(const ScreenRect& display) const;

  bool squares_ = true;
  std::vector<uint8_t> last_, now_;
  std::vector<ListBytes> last_lists_, now_lists_;
  Damage damage_;
};

}  // namespace ringlab::viz
