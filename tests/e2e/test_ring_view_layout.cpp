// The Ring view's layout in the app's main window, drawn without a window or GPU from an
// all-reduce fed in by hand.
//
// A ring over two nodes names its nodes ("node 0", "node 1") inside the ring, where the links'
// byte labels may also go. A run's timing picks which bucket is on screen, so a label's width
// ("8 B", "2.7 KiB", "43.8 KiB") varies from run to run: "node 0" once sat on "2.7 KiB", and a
// label that ended on a node band's rim, or flush with the pane's side, read as cut. At every
// chunk size, ring step and window size here, in both languages, no ring label meets another line.
//
// Stepping through, the ring keeps its shape and its heading its size from one step to the next:
// at 1280x720 over two nodes the first Next flattened the ring into two rows of tiny cells with
// no values, and at 1920x1080 the heading went from a small font to a large one.
#include <doctest/doctest.h>

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "engine/view_model/run_model.h"
#include "tests/support/headless_imgui.h"
#include "tests/support/run_events.h"
#include "viz/app_state.h"
#include "viz/fonts.h"
#include "viz/i18n.h"
#include "viz/layout_audit.h"
#include "viz/theme.h"
#include "viz/views.h"

using namespace ringlab;

namespace {

constexpr int kRanks = 4;

// All-reduce #0 of a ring over two nodes of two ranks, each chunk `chunk_bytes`, all its steps
// taken: begun, 2(N-1) ring steps, ended.
void two_node_all_reduce(view_model::RunModel& model, int64_t chunk_bytes) {
  JobConfig job;
  job.world_size = kRanks;
  job.backend = "gloo";
  job.ranks_per_node = {2, 2};
  for (int r = 0; r < kRanks; ++r) model.consume(test::run_begin_event(r, job));
  test::ring_allreduces(model, kRanks, 0, 1, chunk_bytes);
}

// The flaws of the main window's frame with the ring at `position` of its steps, drawn twice
// (Dear ImGui sizes content a frame late).
viz::LayoutAudit audit_at(const view_model::RunModel& model, viz::AppState& state, int position) {
  state.step.fixed_position = position;  // as --ring-step shows it
  for (int i = 0; i < 2; ++i) {
    ImGui::NewFrame();
    viz::AdvanceStepThrough(model, state);
    viz::DrawMainWindow(model, state);
    ImGui::Render();
  }
  return viz::AuditLayout(ImGui::GetDrawData());
}

// The window at `size`, its text as the app sizes it there (18 px at 1080 lines and in
// proportion, down to 0.75 of that at 720 and below) with the app's style at that scale.
void size_window(const viz::AppState& state, ImVec2 size) {
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = size;
  const float px = std::round(18.0f * std::clamp(size.y / 1080.0f, 0.75f, 2.0f));
  if (!io.Fonts->Fonts.empty() && io.Fonts->Fonts[0]->FontSize == px) return;
  viz::load_fonts(px);
  io.Fonts->Build();
  viz::apply_theme(state.theme, px / 18.0f);
}

// Stepping through, held at the gate (not playing), `enlarged` in the big pane, the window at `size`.
viz::AppState held_at_the_gate(viz::Focus enlarged, ImVec2 size, viz::Language language = viz::Language::English) {
  viz::AppState state;
  state.language = language;
  state.focus = enlarged;
  state.run.phase = viz::RunPhase::Running;
  state.step.mode = viz::RingMode::Gated;
  state.step.playing = false;
  size_window(state, size);
  return state;
}

// The main window's frame with the selected all-reduce at `position`, as Next and Previous leave
// it, drawn twice (Dear ImGui sizes content a frame late).
viz::LayoutAudit audit_stepped_to(const view_model::RunModel& model, viz::AppState& state, int position) {
  state.step.position = state.step.target = position;
  state.step.progress = 0;
  for (int i = 0; i < 2; ++i) {
    ImGui::NewFrame();
    viz::DrawMainWindow(model, state);
    ImGui::Render();
  }
  return viz::AuditLayout(ImGui::GetDrawData());
}

}  // namespace

// Whether `f` is a flaw of the ring's own labels: a link's bytes ("2.7 KiB") or a node's name.
bool of_ring_labels(const viz::TextFlaw& f) {
  const auto label = [](const std::string& t) {
    return t.rfind("node ", 0) == 0 || t.find(" B") != std::string::npos || t.find("iB") != std::string::npos;
  };
  return label(f.text) || label(f.other);
}

TEST_CASE("node labels keep clear of the links' byte labels, whatever the chunk size and the window") {
  test::HeadlessImGui imgui{ImVec2(1280, 720)};
  int windows_with_node_labels = 0;
  for (const viz::Language language : {viz::Language::English, viz::Language::Indonesian}) {
    viz::set_language(language);
    for (const int64_t chunk : {8, 700, 2800, 11'200, 44'800, 3'000'000}) {
      view_model::RunModel model;
      two_node_all_reduce(model, chunk);
      viz::AppState state;
      state.language = language;
      state.run.phase = viz::RunPhase::Finished;
      for (float height = 480; height <= 900; height += 60) {
        for (float width = 900; width <= 1700; width += 100) {
          size_window(state, ImVec2(width, height));
          for (int position = 1; position <= 2 * (kRanks - 1); ++position) {
            CAPTURE(width);
            CAPTURE(height);
            CAPTURE(chunk);
            CAPTURE(position);
            CAPTURE(viz::language() == viz::Language::Indonesian);
            const viz::LayoutAudit a = audit_at(model, state, position);
            CHECK(a.lines >= 30);
            windows_with_node_labels += state.ring_view.cards.node_labels == 2;
            for (const auto& f : a.flaws)
              if (f.kind == viz::TextFlaw::Kind::Overlap || of_ring_labels(f))
                FAIL_CHECK(std::string(viz::to_string(f.kind)) << ": " << f.text << " / " << f.other << " at " << f.x0 << "," << f.y0);
          }
        }
      }
      // The window a class sees at 1280x720 and at 1920x1080 names both nodes, at every step,
      // and draws nothing a person could not read.
      for (const ImVec2 size : {ImVec2(1280, 720), ImVec2(1920, 1080)}) {
        size_window(state, size);
        for (int position = 1; position <= 2 * (kRanks - 1); ++position) {
          CAPTURE(size.x);
          CAPTURE(chunk);
          CAPTURE(position);
          const viz::LayoutAudit a = audit_at(model, state, position);
          CHECK(state.ring_view.cards.node_labels == 2);
          // The links' bytes, where the ring is not compact (Indonesian's longer words above it
          // leave an all-reduce of a few floats, its values on the cards, a compact ring at 1280x720).
          if (language == viz::Language::English || size.x > 1900)
            CHECK(state.ring_view.cards.link_labels.find_first_not_of('-') != std::string::npos);
          for (const auto& f : a.flaws) FAIL_CHECK(std::string(viz::to_string(f.kind)) << ": " << f.text << " / " << f.other);
        }
      }
    }
  }
  // Most windows of the sweep have room for both names inside the ring (a flat ring in a short
  // pane has none: the legend and the note under the ring say what the bands are).
  CHECK(windows_with_node_labels > 2 * 6 * 8 * 9 * 6 * 3 / 4);
  viz::set_language(viz::Language::English);
}

// The ring's layout at each of an all-reduce's positions, from before its first step to done.
struct StepLayout {
  float room_w, room_h, exponent;
  bool short_labels, cells, banner_big;
  std::string legend;
  bool operator==(const StepLayout&) const = default;
};

std::ostream& operator<<(std::ostream& os, const StepLayout& l) {
  return os << l.room_w << "x" << l.room_h << " exponent " << l.exponent << (l.short_labels ? " short labels" : "")
            << (l.cells ? " cells" : " no cells") << (l.banner_big ? " big heading" : " small heading") << " legend '"
            << l.legend << "'";
}

TEST_CASE("stepping through, the ring keeps its shape and its heading its size") {
  test::HeadlessImGui imgui{ImVec2(1280, 720)};
  for (const bool two_nodes : {true, false}) {
    for (const ImVec2 size : {ImVec2(1280, 720), ImVec2(1920, 1080), ImVec2(1600, 900)}) {
      view_model::RunModel model;
      if (two_nodes) {
        two_node_all_reduce(model, 4);
      } else {
        for (int r = 0; r < kRanks; ++r) model.consume(test::run_begin_event(r, kRanks, "gloo"));
        test::ring_allreduces(model, kRanks, 0, 1, 4);
      }
      viz::AppState state;
      state.run.phase = viz::RunPhase::Finished;
      size_window(state, size);
      std::vector<StepLayout> layouts;
      for (int position = 0; position <= 2 * (kRanks - 1); ++position) {
        audit_at(model, state, position);
        const auto& c = state.ring_view.cards;
        layouts.push_back({c.room_w, c.room_h, c.exponent, c.short_labels, c.cells, state.ring_view.banner_big,
                           state.said.ring_legend});
      }
      CAPTURE(two_nodes);
      CAPTURE(size.x);
      CHECK(layouts.front().cells);  // room for the values' cells
      for (size_t i = 1; i < layouts.size(); ++i) {
        CAPTURE(i);
        CHECK(layouts[i] == layouts.front());
      }
      // The large heading where the pane is wide (1920x1080's), over every step.
      if (size.x >= 1900) CHECK(layouts.front().banner_big);
    }
  }
}

// The small Ring pane beside an enlarged view, stepping through while the workers are ahead of
// the screen: the long line on where they are ("The workers have finished this all-reduce, ahead
// of the screen: each Next shows ...") took three lines there, and the heading, which keeps the
// height its longest words took, left the ring a strip of bare rank numbers. A small pane says it
// in one short line, and the ring keeps its cards' cells at every step. Beside 1920x1080's
// enlarged Timeline the words left the ring no room at all, and its cards were drawn over the
// nodes' note under it: a pane whose words leave no room for a full ring says the compact words.
TEST_CASE("the small Ring pane keeps its cells while stepping through") {
  test::HeadlessImGui imgui{ImVec2(1280, 720)};
  for (const ImVec2 size : {ImVec2(1280, 720), ImVec2(1920, 1080)})
  for (const viz::Focus enlarged : {viz::Focus::Training, viz::Focus::Timeline}) {
    view_model::RunModel model;
    two_node_all_reduce(model, 4);
    viz::AppState state = held_at_the_gate(enlarged, size);
    std::vector<StepLayout> layouts;
    // Held at the gate with the all-reduce selected, each position drawn as Next and Previous leave it.
    state.step.has_selection = true;
    state.step.selected = model.collectives().at(static_cast<size_t>(model.collectives().latest_complete_ring())).key;
    for (int position = 0; position < 2 * (kRanks - 1); ++position) {
      const viz::LayoutAudit a = audit_stepped_to(model, state, position);
      CAPTURE(position);
      CHECK(a.flaws.empty());
      // Drawn short, in one line: wrapped, it took a line from the ring at this step only.
      CHECK(std::count(a.texts.begin(), a.texts.end(), "Workers done with it: Next shows it") == 1);
      // Said in full (the state and a screen reader get all of it); drawn short.
      CHECK_MESSAGE(state.said.ring_gate.rfind("The workers have finished this all-reduce, ahead of the screen", 0) == 0, state.said.ring_banner << " / " << state.said.ring_next << " / " << static_cast<int>(state.step.mode) << " / " << static_cast<int>(state.run.phase) << " panes " << state.panes_drawn.size() << " ranks " << state.ring_view.cards.ranks << " focus " << static_cast<int>(state.focus));
      const auto& c = state.ring_view.cards;
      layouts.push_back({c.room_w, c.room_h, c.exponent, c.short_labels, c.cells, state.ring_view.banner_big,
                         state.said.ring_legend});
    }
    CAPTURE(static_cast<int>(enlarged));
    CAPTURE(size.x);
    CHECK(layouts.front().cells);
    CHECK(layouts.front().room_h > 0);  // -64 beside 1920x1080's enlarged Timeline: cards over the words
    CHECK(state.ring_view.cards.clear);
    for (size_t i = 1; i < layouts.size(); ++i) {
      CAPTURE(i);
      CHECK(layouts[i] == layouts.front());
    }
  }
}

// The small Ring pane beside an enlarged view at the gate, Next by Next from before the first ring
// step to done, the workers already in the next all-reduce (as a class sees the demo's last step).
// The heading wrapped at some steps ("After ring step 1 of 6 (reduce-scatter 1 of / 3)", "Workers
// in all-reduce #2: Next goes / there"), the footer took two more lines once the all-reduce was
// done, and the ring moved and shrank with them, down to bare rank numbers at the last step. The
// nodes' names sat side by side by the centre, touching ("node 1node 0"), or one was left out.
TEST_CASE("the small Ring pane keeps one ring from the first step to done, and names both nodes apart") {
  test::HeadlessImGui imgui{ImVec2(1280, 720)};
  for (const viz::Language language : {viz::Language::English, viz::Language::Indonesian})
  for (const ImVec2 size : {ImVec2(1280, 720), ImVec2(1920, 1080)})
  for (const viz::Focus enlarged : {viz::Focus::Training, viz::Focus::Timeline, viz::Focus::Sampler}) {
    viz::set_language(language);
    view_model::RunModel model;
    two_node_all_reduce(model, 4);
    for (int r = 0; r < kRanks; ++r) model.consume(test::collective_event(EventKind::CollectiveBegin, r, 1, 16));
    viz::AppState state = held_at_the_gate(enlarged, size, language);
    state.step.has_selection = true;
    state.step.selected = model.collectives().at(0).key;
    CAPTURE(language == viz::Language::Indonesian);
    CAPTURE(size.x);
    CAPTURE(static_cast<int>(enlarged));
    std::vector<StepLayout> layouts;
    int named = 0;
    for (int position = 0; position <= 2 * (kRanks - 1); ++position) {
      const viz::LayoutAudit a = audit_stepped_to(model, state, position);
      CAPTURE(position);
      CHECK(a.flaws.empty());
      for (const auto& f : a.flaws) MESSAGE(viz::to_string(f.kind) << ": " << f.text << " / " << f.other);
      // Both nodes named, or neither where one fits nowhere (Indonesian's longer words beside the
      // enlarged Sampler at 1280x720 leave a ring of 284x82 whose cards meet): never one alone.
      CHECK((state.ring_view.cards.node_labels == 2 || (state.ring_view.cards.node_labels == 0 && state.ring_view.cards.room_h < 90)));
      named += state.ring_view.cards.node_labels == 2;
      for (const std::string& line : a.texts) {
        CAPTURE(line);
        CHECK(line.find(viz::tr("node")) == line.rfind(viz::tr("node")));  // one name a line
      }
      if (language == viz::Language::English) {
        // The heading's lines whole, each in a line of its own: the full banner where it fits,
        // else the short one.
        const auto drawn = [&](std::initializer_list<const char*> either) {
          std::string all;
          for (const auto& t : a.texts) all += t + " | ";
          for (const char* text : either)
            if (std::count(a.texts.begin(), a.texts.end(), text) == 1) return true;
          MESSAGE("wanted '" << *either.begin() << "' among: " << all);
          return false;
        };
        if (position == 0) CHECK(drawn({"Before ring step 1: each rank holds its own input", "Before step 1: each rank's own input"}));
        if (position == 1) CHECK(drawn({"After ring step 1 of 6 (reduce-scatter 1 of 3)", "After step 1 of 6 (reduce-scatter)"}));
        if (position == 4) CHECK(drawn({"After ring step 4 of 6 (all-gather 1 of 3)", "After step 4 of 6 (all-gather)"}));
        if (position == 6) {
          CHECK(drawn({"All-reduce done: every rank holds the sum", "Done: every rank holds the sum"}));
          CHECK(drawn({"Workers in all-reduce #1: press Next"}));
        }
      }
      const auto& c = state.ring_view.cards;
      layouts.push_back({c.room_w, c.room_h, c.exponent, c.short_labels, c.cells, state.ring_view.banner_big,
                         state.said.ring_legend});
    }
    CHECK(layouts.front().cells);
    CHECK((named == 0 || named == 2 * (kRanks - 1) + 1));  // the names stay, step after step
    if (language == viz::Language::English) CHECK(named > 0);
    for (size_t i = 1; i < layouts.size(); ++i) {
      CAPTURE(i);
      CHECK(layouts[i] == layouts.front());
    }
  }
  viz::set_language(viz::Language::English);
}

// Two things a newcomer saw stepping through at 1280x720. In the big Ring pane, each Next's
// packets on their way to the step the workers had just taken were said to be "behind the
// workers" in two lines (now: that step's packets are on their way), and the heading, which keeps its tallest height, took a line from the
// ring for good. In the small pane, the next all-reduce's subtitle wrapped ("... · training step
// 1" on a line of its own) and the ring moved down; Previous back then drew the first all-reduce
// under that taller heading, different from the way forward.
TEST_CASE("a Next's packets on their way keep the ring, and unlike all-reduces are laid out afresh") {
  test::HeadlessImGui imgui{ImVec2(1280, 720)};
  view_model::RunModel model;
  for (int r = 0; r < kRanks; ++r) model.consume(test::run_begin_event(r, kRanks, "gloo"));
  test::ring_allreduces(model, kRanks, 0, 1, 4);       // 4 floats: their values in the cells
  test::ring_allreduces(model, kRanks, 1, 2, 11'200);  // 11,200 floats: no values
  const auto select = [&](viz::AppState& state, size_t which) {
    state.step.has_selection = true;
    state.step.selected = model.collectives().at(which).key;
  };
  SUBCASE("the big pane, Next at the gate") {
    // The workers have taken ring step 1 of a third all-reduce, and wait at the gate.
    test::ring_allreduces(model, kRanks, 2, 3, 11'200, 1);
    viz::AppState state = held_at_the_gate(viz::Focus::Ring, ImVec2(1280, 720));
    select(state, 2);
    audit_stepped_to(model, state, 0);
    const auto before = state.ring_view.cards;
    // Next pressed: the screen on its way from step 0 to step 1, which the workers have taken.
    state.step.target = 1;
    state.step.progress = 0.5;
    ImGui::NewFrame();
    viz::DrawMainWindow(model, state);
    ImGui::Render();
    CHECK(state.said.ring_gate == "Ring step 1: its packets are on their way");
    audit_stepped_to(model, state, 1);
    CHECK(state.ring_view.cards.room_h == before.room_h);
    CHECK(state.ring_view.cards.room_w == before.room_w);
  }
  SUBCASE("the small pane, on to the next all-reduce and back") {
    viz::AppState state = held_at_the_gate(viz::Focus::Timeline, ImVec2(1280, 720));
    select(state, 0);
    audit_stepped_to(model, state, 2 * (kRanks - 1));
    const auto first = state.ring_view.cards;
    select(state, 1);
    const viz::LayoutAudit a = audit_stepped_to(model, state, 0);
    for (const std::string& line : a.texts) {
      CAPTURE(line);
      CHECK(line.rfind("training step", 0) != 0);  // the subtitle in one line
    }
    select(state, 0);
    audit_stepped_to(model, state, 2 * (kRanks - 1));
    CHECK(state.ring_view.cards.room_h == first.room_h);
    CHECK(state.ring_view.cards.cells == first.cells);
  }
}

// A class steps through a two-node run in the big Ring pane at 1280x720 and the small one: the
// demo-like all-reduce (its values in the cells), a finished bucket, and a bucket the workers
// are in, held at the gate after its step 2; then Previous all the way back. Each all-reduce
// keeps one ring at every step, drawn with its packets on their way too, and the same on the way
// back as on the way forward: the words above it moved it (a long gate line after Previous, the
// first Next of a bucket stacking the legend over the gated all-reduce's footer), and Previous
// into the demo drew it as a flat two-column ring.
TEST_CASE("stepping forward and back, each all-reduce keeps one ring") {
  test::HeadlessImGui imgui{ImVec2(1280, 720)};
  view_model::RunModel model;
  JobConfig job;
  job.world_size = kRanks;
  job.backend = "gloo";
  job.ranks_per_node = {2, 2};
  for (int r = 0; r < kRanks; ++r) model.consume(test::run_begin_event(r, job));
  test::ring_allreduces(model, kRanks, 0, 1, 4);
  test::ring_allreduces(model, kRanks, 1, 2, 11'200);
  test::ring_allreduces(model, kRanks, 2, 3, 11'200, 2);
  const int last = 2 * (kRanks - 1);
  // In Indonesian too: its brief gate line ("Worker sudah melewati langkah ring 4: Maju
  // menampilkannya") took two lines after Previous, and the small pane's ring shrank to bare numbers.
  for (const viz::Language language : {viz::Language::English, viz::Language::Indonesian})
  for (const viz::Focus focus : {viz::Focus::Ring, viz::Focus::Timeline}) {
    viz::set_language(language);
    CAPTURE(language == viz::Language::Indonesian);
    viz::AppState state = held_at_the_gate(focus, ImVec2(1280, 720), language);
    std::map<std::pair<size_t, int>, StepLayout> forward;
    const auto layout_at = [&](size_t which, int position, bool moving) {
      state.step.has_selection = true;
      state.step.selected = model.collectives().at(which).key;
      audit_stepped_to(model, state, position);
      if (moving && position < last) {  // a Next's packets half-way to the step after
        state.step.target = position + 1;
        state.step.progress = 0.5;
        for (int i = 0; i < 2; ++i) {
          ImGui::NewFrame();
          viz::DrawMainWindow(model, state);
          ImGui::Render();
        }
      }
      const auto& c = state.ring_view.cards;
      return StepLayout{c.room_w, c.room_h, c.exponent, c.short_labels, c.cells, state.ring_view.banner_big, state.said.ring_legend};
    };
    CAPTURE(static_cast<int>(focus));
    for (size_t which = 0; which < 3; ++which)
      for (int position = 0; position <= (which == 2 ? 2 : last); ++position)
        for (const bool moving : {false, true}) {
          CAPTURE(which);
          CAPTURE(position);
          CAPTURE(moving);
          const StepLayout l = layout_at(which, position, moving && which < 2);
          const auto first = forward.find({which, 0});
          if (first != forward.end()) CHECK(l == first->second);
          forward.emplace(std::make_pair(which, position), l);
        }
    for (size_t which = 3; which-- > 0;)
      for (int position = which == 2 ? 1 : last; position >= 0; --position) {
        CAPTURE(which);
        CAPTURE(position);
        CHECK(layout_at(which, position, false) == forward.at({which, position}));
      }
    // The demo-like all-reduce's values stay in the cells in the big pane.
    if (focus == viz::Focus::Ring) CHECK(forward.at({0, 0}).cells);
  }
}

// After a live change to 2 ranks the small pane's subtitle read "all-reduce #54,514 since the
// change to 2 / ranks", in two lines: its number takes the brief form there, "all-reduce" being
// the heading's word, and the subtitle keeps to one line (said.ring_number stays whole).
TEST_CASE("after a live change the small Ring pane numbers the all-reduce in one line") {
  test::HeadlessImGui imgui{ImVec2(1280, 720)};
  for (const viz::Language language : {viz::Language::English, viz::Language::Indonesian}) {
    viz::set_language(language);
    view_model::RunModel model;
    for (int r = 0; r < 4; ++r) model.consume(test::run_begin_event(r, 4, "gloo"));
    test::ring_allreduces(model, 4, 1, 3);
    for (int r = 0; r < 2; ++r) model.consume(test::run_begin_event(r, 2, "gloo"));
    test::ring_allreduces(model, 2, 54514, 54515, 8, 1);
    viz::AppState state = held_at_the_gate(viz::Focus::Timeline, ImVec2(1280, 720), language);
    state.step.has_selection = true;
    state.step.selected = model.collectives().at(model.collectives().size() - 1).key;
    CAPTURE(language == viz::Language::Indonesian);
    const viz::LayoutAudit a = audit_stepped_to(model, state, 1);
    CHECK(a.flaws.empty());
    CHECK(state.said.ring_number ==
          viz::trf("all-reduce {}", viz::trf("#{} since the change to {} ranks", viz::grouped(54514), 2)));
    // The audit reads a no-break space (Indonesian's digit grouping) as a space.
    std::string brief = viz::trf("#{} since the change to {} ranks", viz::grouped(54514), 2);
    for (size_t at; (at = brief.find("\u00a0")) != std::string::npos;) brief.replace(at, 2, " ");
    const auto subtitle = std::find_if(a.texts.begin(), a.texts.end(), [&](const std::string& t) { return t.rfind(brief, 0) == 0; });
    REQUIRE(subtitle != a.texts.end());
    // One line: the next line drawn is the next step's, not the subtitle's end.
    REQUIRE(subtitle + 1 != a.texts.end());
    CHECK(subtitle[1].rfind(viz::trf("Next: {}", ""), 0) == 0);
  }
}
