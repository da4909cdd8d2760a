// Where a frame differs from the last presented one (viz/frame_change.h): the window presents
// those rectangles alone on a CPU renderer, so a rectangle too small leaves a stale picture on
// screen and one too large costs what presenting in part was for. Dear ImGui runs without a
// window or GPU: the damage is read from draw data.
#include <doctest/doctest.h>

#include <imgui.h>

#include <string>

#include "tests/support/headless_imgui.h"
#include "viz/frame_change.h"

using ringlab::viz::Damage;
using ringlab::viz::FrameChange;
using ringlab::viz::ScreenRect;

namespace {

// Two panes side by side, as the app's big pane and a side pane, each a window of its own, with a
// border and a child window inside the left one (whose border carries its parent's clip rectangle).
struct TwoPanes {
  ringlab::test::HeadlessImGui imgui{ImVec2(800, 600)};
  std::string left = "step 12", right = "epoch 3";
  bool show_right = true;
  TwoPanes() { ImGui::GetIO().Fonts->Build(); }

  const ImDrawData& frame() {
    for (int i = 0; i < 2; ++i) {  // Dear ImGui sizes content a frame late
      ImGui::NewFrame();
      pane("left", ImVec2(0, 0), [&] {
        ImGui::BeginChild("inner", ImVec2(200, 100), true);
        ImGui::TextUnformatted(left.c_str());
        ImGui::EndChild();
      });
      if (show_right) pane("right", ImVec2(400, 0), [&] { ImGui::TextUnformatted(right.c_str()); });
      ImGui::Render();
    }
    return *ImGui::GetDrawData();
  }

  template <class Body>
  static void pane(const char* name, ImVec2 at, Body body) {
    ImGui::SetNextWindowPos(at);
    ImGui::SetNextWindowSize(ImVec2(400, 600));
    ImGui::Begin(name, nullptr, ImGuiWindowFlags_NoDecoration);
    body();
    ImGui::End();
  }
};

// A window's border reaches a pixel out of its rectangle (its anti-aliased edge).
bool inside(const ScreenRect& r, float x0, float y0, float x1, float y1) {
  x0 -= 1, y0 -= 1, x1 += 1, y1 += 1;
  return r.x0 >= x0 && r.y0 >= y0 && r.x1 <= x1 && r.y1 <= y1;
}

}  // namespace

TEST_CASE("a frame's damage is where the windows that changed draw, not the whole display") {
  TwoPanes panes;
  FrameChange change;
  CHECK(change.changed(panes.frame()));
  REQUIRE(change.damage().rects().size() == 1);  // the first frame: all of it
  CHECK(change.damage().area() == doctest::Approx(800 * 600));

  panes.left = "step 13";  // one digit, inside the child window of the left pane
  CHECK(change.changed(panes.frame()));
  REQUIRE_FALSE(change.damage().empty());
  for (const ScreenRect& r : change.damage().rects()) CHECK(inside(r, 0, 0, 210, 110));
  CHECK(change.damage().area() < 200 * 100);  // the child's text, not its parent's 400x600

  CHECK_FALSE(change.changed(panes.frame()));  // the same picture: nothing to present
  CHECK(change.damage().empty());

  panes.right = "epoch 4";
  CHECK(change.changed(panes.frame()));
  for (const ScreenRect& r : change.damage().rects()) CHECK(inside(r, 400, 0, 800, 600));
}

TEST_CASE("a window that went damages where it was; forget() and a new display size damage all") {
  TwoPanes panes;
  FrameChange change;
  change.changed(panes.frame());
  panes.show_right = false;
  CHECK(change.changed(panes.frame()));
  REQUIRE_FALSE(change.damage().empty());
  for (const ScreenRect& r : change.damage().rects()) CHECK(inside(r, 400, 0, 800, 600));
  panes.show_right = true;  // and came back: where it draws
  CHECK(change.changed(panes.frame()));
  for (const ScreenRect& r : change.damage().rects()) CHECK(inside(r, 400, 0, 800, 600));

  change.forget();
  CHECK(change.changed(panes.frame()));
  CHECK(change.damage().area() == doctest::Approx(800 * 600));
  ImGui::GetIO().DisplaySize = ImVec2(640, 480);
  CHECK(change.changed(panes.frame()));
  CHECK(change.damage().area() == doctest::Approx(640 * 480));
}

TEST_CASE("damage rectangles that overlap join; past four, the two that waste least join") {
  Damage d;
  d.add(ScreenRect{0, 0, 10, 10});
  d.add(ScreenRect{5, 5, 20, 20});  // overlaps the first: one rectangle over both
  REQUIRE(d.rects().size() == 1);
  CHECK(d.rects()[0].x0 == 0);
  CHECK(d.rects()[0].x1 == 20);
  d.add(ScreenRect{});  // an empty rectangle damages nothing
  CHECK(d.rects().size() == 1);

  Damage far;
  far.add(ScreenRect{0, 0, 10, 10});
  far.add(ScreenRect{100, 0, 110, 10});
  far.add(ScreenRect{0, 100, 10, 110});
  far.add(ScreenRect{500, 500, 510, 510});
  CHECK(far.rects().size() == 4);
  far.add(ScreenRect{12, 0, 20, 10});  // a fifth, next to the first: those two join
  REQUIRE(far.rects().size() == Damage::kMost);
  CHECK(far.area() == doctest::Approx(4 * 100 + 20 * 10 - 100));
  for (size_t a = 0; a < far.rects().size(); ++a)
    for (size_t b = a + 1; b < far.rects().size(); ++b) CHECK_FALSE(far.rects()[a].overlaps(far.rects()[b]));
}

TEST_CASE("clip_draw_data cuts each command to the rectangle, from the frame's own clip rectangles") {
  TwoPanes panes;
  ImDrawData& draw = *const_cast<ImDrawData*>(&panes.frame());
  const auto whole = ringlab::viz::take_clip_rects(draw);
  const ScreenRect part{400, 0, 500, 50};
  ringlab::viz::clip_draw_data(draw, whole, part);
  size_t k = 0, left_out = 0;
  for (int i = 0; i < draw.CmdListsCount; ++i)
    for (const ImDrawCmd& cmd : draw.CmdLists[i]->CmdBuffer) {
      const ScreenRect clip{cmd.ClipRect.x, cmd.ClipRect.y, cmd.ClipRect.z, cmd.ClipRect.w};
      CHECK((clip.empty() || inside(clip, 400, 0, 500, 50)));
      if (!whole[k++].overlaps(part)) left_out += clip.empty();
    }
  CHECK(left_out > 0);  // the left pane's commands draw nothing there
  ringlab::viz::clip_draw_data(draw, whole, ScreenRect{0, 0, 800, 600});  // the whole frame again
  k = 0;
  for (int i = 0; i < draw.CmdListsCount; ++i)
    for (const ImDrawCmd& cmd : draw.CmdLists[i]->CmdBuffer) CHECK(cmd.ClipRect.z == whole[k++].x1);
}

// Dear ImGui's OpenGL backend scissors a command to (int)x0 .. (int)x0 + (int)(x1 - x0): a clip
// rectangle from 280.7 to 1265.2 covers columns 280..1263. Cut at a square's edge (1248) it was
// scissored to 1248 + (int)17.2, through column 1264: a frame in part drew a column the whole
// frame leaves to the background, at the Timeline's right edge. The frame's clip rectangles are
// kept as the pixels the backend covers, so that a cut covers no pixel more.
TEST_CASE("the frame's clip rectangles are the whole pixels the renderer scissors to") {
  ringlab::test::HeadlessImGui imgui{ImVec2(1280, 720)};
  ImDrawList list(ImGui::GetDrawListSharedData());
  list._ResetForNewFrame();
  list.PushClipRect(ImVec2(280.7f, 100.2f), ImVec2(1265.2f, 700.9f));
  list.AddRectFilled(ImVec2(0, 0), ImVec2(1280, 720), IM_COL32_WHITE);
  list.PopClipRect();
  ImDrawList* lists[] = {&list};
  ImDrawData draw;
  draw.Valid = true;
  draw.CmdLists = lists;
  draw.CmdListsCount = 1;
  draw.DisplayPos = ImVec2(0, 0);
  draw.DisplaySize = ImVec2(1280, 720);
  draw.FramebufferScale = ImVec2(1, 1);
  const auto whole = ringlab::viz::take_clip_rects(draw);
  const ImVector<ImDrawCmd>& cmds = list.CmdBuffer;
  int filled = -1;  // the rectangle's command (the list may end with an empty one)
  for (int i = 0; i < cmds.Size; ++i)
    if (cmds[i].ElemCount > 0) filled = i;
  REQUIRE(filled >= 0);
  REQUIRE(whole.size() == static_cast<size_t>(cmds.Size));
  const ScreenRect& clip = whole[static_cast<size_t>(filled)];
  // Columns 280..1263; GL's rows (int)(720 - 700.9) = 19 up for (int)600.7 = 600: from the top,
  // rows 101..700.
  CHECK(clip.x0 == 280);
  CHECK(clip.x1 == 1264);
  CHECK(clip.y0 == 101);
  CHECK(clip.y1 == 701);
  ringlab::viz::clip_draw_data(draw, whole, ScreenRect{1248, 672, 1280, 704});
  CHECK(cmds[filled].ClipRect.x == 1248);
  CHECK(cmds[filled].ClipRect.z == 1264);
  CHECK(cmds[filled].ClipRect.w == 701);
}

namespace {

// One pane full of still shapes (a grid of boxes, a line of text) and two boxes drawn over each
// other that the test moves or reorders: the ring's packets over its cards, in small.
struct MovingBox {
  ringlab::test::HeadlessImGui imgui{ImVec2(800, 600)};
  ImVec2 box{100, 100};
  bool red_on_top = true;
  MovingBox() { ImGui::GetIO().Fonts->Build(); }

  const ImDrawData& frame() {
    for (int i = 0; i < 2; ++i) {
      ImGui::NewFrame();
      ImGui::SetNextWindowPos(ImVec2(0, 0));
      ImGui::SetNextWindowSize(ImVec2(800, 600));
      ImGui::Begin("ring", nullptr, ImGuiWindowFlags_NoDecoration);
      ImGui::TextUnformatted("all-reduce #12 · bucket 0 · 2737 floats");
      ImDrawList* d = ImGui::GetWindowDrawList();
      for (int x = 0; x < 10; ++x)
        for (int y = 0; y < 8; ++y)
          d->AddRectFilled(ImVec2(200.0f + 50 * x, 150.0f + 50 * y), ImVec2(230.0f + 50 * x, 180.0f + 50 * y),
                           IM_COL32(40, 120, 200, 255));
      const ImVec2 red(box.x + 10, box.y + 10);
      auto yellow_box = [&] { d->AddRectFilled(box, ImVec2(box.x + 20, box.y + 20), IM_COL32(200, 200, 0, 255)); };
      auto red_box = [&] { d->AddRectFilled(red, ImVec2(red.x + 20, red.y + 20), IM_COL32(200, 0, 0, 255)); };
      if (red_on_top) yellow_box(), red_box();
      else red_box(), yellow_box();
      ImGui::End();
      ImGui::Render();
    }
    return *ImGui::GetDrawData();
  }
};

bool covered(const Damage& d, const ScreenRect& r) {
  // Every point of r lies in one of the damage's rectangles (sampled at each pixel's centre).
  for (float y = r.y0 + 0.5f; y < r.y1; y += 1.0f)
    for (float x = r.x0 + 0.5f; x < r.x1; x += 1.0f) {
      bool in = false;
      for (const ScreenRect& a : d.rects()) in = in || (x >= a.x0 && x < a.x1 && y >= a.y0 && y < a.y1);
      if (!in) return false;
    }
  return true;
}

}  // namespace

TEST_CASE("a window that changed damages only the squares where its triangles changed") {
  MovingBox ring;
  FrameChange change;
  change.changed(ring.frame());
  ring.box = ImVec2(140, 100);  // the packet moves 40 units right
  REQUIRE(change.changed(ring.frame()));
  // Where it was and where it is (a unit out, for the rounding of its edges) are redrawn...
  CHECK(covered(change.damage(), ScreenRect{99, 99, 131, 131}));
  CHECK(covered(change.damage(), ScreenRect{139, 99, 171, 131}));
  // ...and not the window's 800x600: the 32-unit squares the two places touch, 3 by 2 of them.
  CHECK(change.damage().area() == doctest::Approx(6 * 32 * 32));
  for (const ScreenRect& r : change.damage().rects()) CHECK(inside(r, 96, 96, 192, 160));
}

TEST_CASE("the same triangles in another order are another picture where they overlap") {
  MovingBox ring;
  FrameChange change;
  change.changed(ring.frame());
  ring.red_on_top = false;  // the same two boxes, drawn the other way round: where they overlap
  REQUIRE(change.changed(ring.frame()));
  CHECK(covered(change.damage(), ScreenRect{110, 110, 120, 120}));
  CHECK(change.damage().area() <= 4 * 32 * 32);  // the squares the overlap touches
  ring.red_on_top = true;
  REQUIRE(change.changed(ring.frame()));
  CHECK(covered(change.damage(), ScreenRect{110, 110, 120, 120}));
  CHECK_FALSE(change.changed(ring.frame()));  // nothing moved: nothing to present
}

TEST_CASE("a new colour under the panes (another theme) is a new picture everywhere") {
  MovingBox ring;
  FrameChange change;
  change.changed(ring.frame(), ImVec4(0.1f, 0.1f, 0.1f, 1));
  CHECK_FALSE(change.changed(ring.frame(), ImVec4(0.1f, 0.1f, 0.1f, 1)));
  // Squares no triangle touches show the clear colour: no list's hash would see them change.
  REQUIRE(change.changed(ring.frame(), ImVec4(0.95f, 0.95f, 0.95f, 1)));
  CHECK(change.damage().area() == doctest::Approx(800 * 600));
}

TEST_CASE("where frames are swapped whole, a window that changed damages all it covers") {
  MovingBox ring;
  FrameChange change;
  change.damage_by_squares(false);
  change.changed(ring.frame());
  ring.box = ImVec2(140, 100);
  REQUIRE(change.changed(ring.frame()));
  CHECK(change.damage().area() > 700 * 500);  // the window's drawn area, as before the squares
}
