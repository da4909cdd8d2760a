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
