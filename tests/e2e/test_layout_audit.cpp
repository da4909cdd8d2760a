// The layout audit finds what a person could not read: a frame with a cut label, a cut button,
// two lines on top of each other and a line under a box gets exactly those four reports, and
// text that fits gets none. Dear ImGui runs without a window or GPU: the audit reads draw data.
#include <doctest/doctest.h>

#include <imgui.h>

#include <string>
#include <vector>

#include "engine/job/scenario.h"
#include "tests/support/headless_imgui.h"
#include "viz/frame_change.h"
#include "viz/i18n.h"
#include "viz/layout_audit.h"
#include "viz/plot.h"
#include "viz/views.h"
#include "viz/widgets.h"

using ringlab::viz::AuditLayout;
using ringlab::viz::LayoutAudit;
using ringlab::viz::TextFlaw;

namespace {

struct Frame {
  Frame() { ImGui::GetIO().Fonts->Build(); }
  ringlab::test::HeadlessImGui imgui{ImVec2(800, 600)};

  // Draws `body` in a fixed window twice (Dear ImGui sizes content a frame late) and audits the last.
  template <class Body>
  LayoutAudit audit(Body body) {
    for (int i = 0; i < 2; ++i) {
      ImGui::NewFrame();
      ImGui::SetNextWindowPos(ImVec2(10, 10));
      ImGui::SetNextWindowSize(ImVec2(220, 200));
      ImGui::Begin("pane", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoScrollbar);
      body();
      ImGui::End();
      ImGui::Render();
    }
    return AuditLayout(ImGui::GetDrawData());
  }
};

std::vector<const TextFlaw*> of_kind(const LayoutAudit& a, TextFlaw::Kind kind) {
  std::vector<const TextFlaw*> found;
  for (const auto& f : a.flaws)
    if (f.kind == kind) found.push_back(&f);
  return found;
}

}  // namespace

TEST_CASE("text that fits is not reported") {
  Frame frame;
  const LayoutAudit a = frame.audit([] {
    ImGui::TextUnformatted("Ring all-reduce");
    ImGui::TextWrapped("A longer explanation that wraps at the pane's edge instead of running past it.");
    ImGui::Button("Start");
  });
  CHECK(a.lines >= 4);
  CHECK(a.flaws.empty());
}

TEST_CASE("a label past the pane's edge is cut, and the audit says which") {
  Frame frame;
  const LayoutAudit a = frame.audit([] { ImGui::TextUnformatted("Jumlah rank (world size) is far too long here"); });
  const auto cut = of_kind(a, TextFlaw::Kind::Cut);
  REQUIRE(cut.size() == 1);
  CHECK(cut[0]->text.rfind("Jumlah rank", 0) == 0);
  CHECK(cut[0]->window == "pane");
  CHECK(cut[0]->x1 > 220);  // the glyphs reach the pane's edge
}

TEST_CASE("a button narrower than its text is cut") {
  Frame frame;
  const LayoutAudit a = frame.audit([] { ImGui::Button("← Previous step", ImVec2(60, 0)); });
  REQUIRE(of_kind(a, TextFlaw::Kind::Cut).size() == 1);
}

// A ring's link label can end where a node's band, drawn after the band it sits on, ends: the
// later band's box holds the label but the band itself does not, so the label is not cut. The
// same label ending at the edge of a box it is written on is.
TEST_CASE("a label ending where a later shape's box ends is not cut; one ending at its own box's edge is") {
  Frame frame;
  const char* text = "2.7 KiB";
  const LayoutAudit beside = frame.audit([&] {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float end = at.x + 10 + ImGui::CalcTextSize(text).x;
    dl->AddRectFilled(ImVec2(at.x, at.y), ImVec2(at.x + 150, at.y + 40), 0xFFE0E0E0);
    // Its box reaches the label's end and holds the label's start; the triangle stays below-right.
    dl->AddTriangleFilled(ImVec2(end, at.y), ImVec2(end, at.y + 40), ImVec2(at.x, at.y + 40), 0xFFC0C0F0);
    dl->AddText(ImVec2(at.x + 10, at.y + 4), 0xFF000000, text);
  });
  CHECK(beside.flaws.empty());
  CHECK(beside.lines == 1);
  const LayoutAudit on = frame.audit([&] {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(ImVec2(at.x, at.y), ImVec2(at.x + 10 + ImGui::CalcTextSize(text).x, at.y + 40), 0xFFE0E0E0);
    dl->AddText(ImVec2(at.x + 10, at.y + 4), 0xFF000000, text);
  });
  REQUIRE(of_kind(on, TextFlaw::Kind::Cut).size() == 1);
  CHECK(of_kind(on, TextFlaw::Kind::Cut)[0]->text == text);
  // A band drawn slice by slice: the label ends at its slice's edge, and the next slice goes on.
  const LayoutAudit band = frame.audit([&] {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float end = at.x + 10 + ImGui::CalcTextSize(text).x + 0.5f;  // past the fill's anti-aliased rim
    dl->AddQuadFilled(ImVec2(at.x, at.y), ImVec2(end, at.y + 2), ImVec2(end, at.y + 38), ImVec2(at.x, at.y + 40), 0xFFE0E0E0);
    dl->AddQuadFilled(ImVec2(end, at.y + 2), ImVec2(end + 40, at.y + 6), ImVec2(end + 40, at.y + 34), ImVec2(end, at.y + 38),
                      0xFFE0E0E0);
    dl->AddText(ImVec2(at.x + 10, at.y + 12), 0xFF000000, text);
  });
  CHECK(band.flaws.empty());
  // A slanted slice of a band: the label's start is on it, its end is above the slice's rim,
  // where the slice's box (not the slice) reaches.
  const LayoutAudit rim = frame.audit([&] {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float end = at.x + 10 + ImGui::CalcTextSize(text).x + 0.5f;
    dl->AddQuadFilled(ImVec2(at.x, at.y), ImVec2(end, at.y + 14), ImVec2(end - 20, at.y + 60), ImVec2(at.x - 10, at.y + 58),
                      0xFFE0E0E0);
    dl->AddText(ImVec2(at.x + 10, at.y + 4), 0xFF000000, text);
  });
  CHECK(rim.flaws.empty());
}

TEST_CASE("two lines drawn over each other overlap") {
  Frame frame;
  const LayoutAudit a = frame.audit([] {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddText(at, 0xFF000000, "busbw 8.8 MB/s");
    dl->AddText(ImVec2(at.x + 20, at.y + 3), 0xFF000000, "fully reduced");
  });
  const auto overlap = of_kind(a, TextFlaw::Kind::Overlap);
  REQUIRE(overlap.size() == 1);
  CHECK(overlap[0]->text == "busbw 8.8 MB/s");
  CHECK(overlap[0]->other == "fully reduced");
  CHECK(of_kind(a, TextFlaw::Kind::Cut).empty());
}

TEST_CASE("an opaque box drawn after a line covers it; one drawn before is its background") {
  Frame frame;
  const LayoutAudit a = frame.audit([] {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(ImVec2(at.x, at.y + 40), ImVec2(at.x + 150, at.y + 60), 0xFFFFFFFF);
    dl->AddText(ImVec2(at.x + 2, at.y + 42), 0xFF000000, "on its background");
    dl->AddText(at, 0xFF000000, "rank 0 label");
    dl->AddRectFilled(ImVec2(at.x - 2, at.y - 2), ImVec2(at.x + 150, at.y + 20), 0xFFFFFFFF, 8.0f);  // rounded
  });
  const auto covered = of_kind(a, TextFlaw::Kind::Covered);
  REQUIRE(covered.size() == 1);
  CHECK(covered[0]->text == "rank 0 label");
}

TEST_CASE("the view registry holds one view for each name a scenario may give, in the same order") {
  using namespace ringlab;
  std::vector<std::string> names(std::begin(kViewNames), std::end(kViewNames));
  CHECK(viz::ViewNames() == names);
  CHECK(viz::FocusNamed("sampler") == viz::Focus::Sampler);
  CHECK(viz::FocusNamed("scale") == viz::Focus::Scale);
  CHECK(viz::FocusNamed("no such view") == viz::Focus::Ring);
}

TEST_CASE("the Indonesian table built into the app is the one tr() answers from") {
  using namespace ringlab::viz;
  set_language(Language::Indonesian);
  CHECK(std::string(tr("▶ Start")) == "▶ Mulai");
  CHECK(std::string(tr("The run failed")) == "Run gagal");
  CHECK(trf("from {} to {}", 1, 2) == "dari 1 sampai 2");
  CHECK(std::string(tr("no such English sentence")) == "no such English sentence");  // falls back
  // Thousands apart by no-break spaces: a point, as Indonesian writes them, would read as the
  // decimal point the app's other numbers keep (0.030).
  CHECK(grouped(1234567) == "1\u00a0234\u00a0567");
  set_language(Language::English);
  CHECK(std::string(tr("▶ Start")) == "▶ Start");
  CHECK(grouped(1234567) == "1,234,567");
}

TEST_CASE("a frame laid out the same as the last is not presented again; any change is") {
  Frame frame;
  ringlab::viz::FrameChange change;
  std::string text = "rank 0: step 12";
  const auto draw = [&] { frame.audit([&] { ImGui::TextUnformatted(text.c_str()); }); };
  draw();
  CHECK(change.changed(*ImGui::GetDrawData()));  // the first frame
  draw();
  CHECK_FALSE(change.changed(*ImGui::GetDrawData()));  // the same picture
  text = "rank 0: step 13";
  draw();
  CHECK(change.changed(*ImGui::GetDrawData()));  // one digit changed
  draw();
  CHECK_FALSE(change.changed(*ImGui::GetDrawData()));
  ImGui::GetIO().DisplaySize = ImVec2(640, 480);  // the window resized, the pane drawn the same
  draw();
  CHECK(change.changed(*ImGui::GetDrawData()));
  draw();
  CHECK_FALSE(change.changed(*ImGui::GetDrawData()));
  change.forget();  // the window was uncovered: present whatever comes
  draw();
  CHECK(change.changed(*ImGui::GetDrawData()));
}

TEST_CASE("a log axis of losses is labelled in one format from 1 down to 0.0001") {
  std::vector<std::string> labels;
  for (double v : {1.0, 0.1, 0.01, 0.001, 0.0001}) labels.push_back(ringlab::viz::format_number(v));
  CHECK(labels == std::vector<std::string>{"1", "0.1", "0.01", "0.001", "0.0001"});
  CHECK(ringlab::viz::format_number(3e-5) == "3.0e-05");  // below that, powers of ten
  CHECK(ringlab::viz::format_number(25000) == "25k");
  // An axis that reaches below 0.0001 writes every tick as a power of ten, not 0.0001 over 1.0e-05.
  CHECK(ringlab::viz::format_log_axis({1.0, 0.01, 0.0001, 1e-6}) == std::vector<std::string>{"1", "1e-2", "1e-4", "1e-6"});
  CHECK(ringlab::viz::format_log_axis({1.0, 0.1, 0.01}) == std::vector<std::string>{"1", "0.1", "0.01"});
  // A diverged run's losses reach 1e+29: powers of ten up there too, not "1e-05M" under "1e+29M".
  CHECK(ringlab::viz::format_log_axis({10.0, 1e3, 1e29}) == std::vector<std::string>{"1e1", "1e3", "1e29"});
  CHECK(ringlab::viz::format_number(1e29) == "1e+29");
  // Durations in the unit that keeps them short: an MPI all-reduce's 45 µs is not "0.05 ms".
  CHECK(ringlab::viz::format_duration(45'000) == "45.0 µs");
  CHECK(ringlab::viz::format_duration(2'310'000) == "2.31 ms");
  CHECK(ringlab::viz::format_duration(2.06e9) == "2.06 s");
}

TEST_CASE("a tooltip whose text grew is sized for it in the same frame, not cut at last frame's size") {
  ringlab::test::HeadlessImGui imgui{ImVec2(800, 600)};
  ImGui::GetIO().Fonts->Build();
  // A timeline followed live changes the span under a still pointer every frame, and with it the
  // tooltip's text; at a few frames a second during a run, a cut tooltip stays on screen.
  const std::string grown = "rank 2 · all-reduce #40 · bucket 0\nwaited 0.17 ms for the slowest rank, then reduce-scatter "
                            "and all-gather took 0.31 ms: 2,737 floats in 6 ring steps";
  const auto frame = [&](const std::string& text, bool ours) {
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::Begin("pane", nullptr, ImGuiWindowFlags_NoDecoration);
    if (ours) ringlab::viz::WrappedTooltip(text);
    else ImGui::SetTooltip("%s", text.c_str());  // Dear ImGui's own: fitted to last frame's text
    ImGui::End();
    ImGui::Render();
    return AuditLayout(ImGui::GetDrawData());
  };
  for (const bool ours : {false, true}) {
    CAPTURE(ours);
    frame("short", ours);
    frame("short", ours);
    const LayoutAudit a = frame(grown, ours);
    if (ours) CHECK(of_kind(a, TextFlaw::Kind::Cut).empty());
    else CHECK_FALSE(of_kind(a, TextFlaw::Kind::Cut).empty());  // the audit sees the cut it fixes
    frame("short", ours);  // and back, for the next round
    frame("short", ours);
  }
}
