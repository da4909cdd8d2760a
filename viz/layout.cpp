// The window: a menu bar and a fixed layout of panes that resizes with the window (docking is
// not in Dear ImGui 1.86's stable branch). The focused view gets the big pane.
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "engine/view_model/failure_lab.h"
#include "viz/failure_lab_view.h"
#include "viz/fault_explanations.h"
#include "viz/fonts.h"
#include "viz/i18n.h"
#include "viz/theme.h"
#include "viz/views.h"
#include "viz/widgets.h"

namespace ringlab::viz {
namespace {

using DrawFn = void (*)(const view_model::RunModel&, AppState&);

struct ViewEntry {
  Focus focus;
  const char* title;
  const char* id;
  DrawFn draw;
};

const ViewEntry kViews[] = {
    {Focus::Ring, "Ring all-reduce", "ring", DrawRingView},
    {Focus::Training, "Training", "training", DrawTrainingView},
    {Focus::Sampler, "Sampler", "sampler", DrawSamplerView},
    {Focus::Timeline, "Timeline", "timeline", DrawTimelineView},
    {Focus::Scale, "Scale", "scale", DrawScaleView},
};

}  // namespace

std::string JobSummary(const JobConfig& job) {
  return trf(job.world_size == 1 ? "{} rank, {}, {}, lr {}" : "{} ranks, {}, {}, lr {}", job.world_size, job.backend,
             job.algorithm, fmt::format("{:.3g}", job.lr));
}

Focus FocusNamed(const std::string& name) {
  for (const auto& v : kViews)
    if (name == v.id) return v.focus;
  return Focus::Ring;
}

std::vector<std::string> ViewNames() {
  std::vector<std::string> names;
  for (const auto& v : kViews) names.push_back(v.id);
  return names;
}

namespace {

const ViewEntry& view(Focus f) {
  for (const auto& v : kViews)
    if (v.focus == f) return v;
  return kViews[0];
}

// Which view sits in the big pane, the two right panes and the bottom pane.
std::array<Focus, 4> arrangement(Focus focus) {
  switch (focus) {
    case Focus::Ring: return {Focus::Ring, Focus::Training, Focus::Sampler, Focus::Timeline};
    case Focus::Training: return {Focus::Training, Focus::Ring, Focus::Sampler, Focus::Timeline};
    case Focus::Sampler: return {Focus::Sampler, Focus::Ring, Focus::Training, Focus::Timeline};
    case Focus::Timeline: return {Focus::Timeline, Focus::Ring, Focus::Training, Focus::Sampler};
    case Focus::Scale: break;  // scale_layout() places it
  }
  return {Focus::Ring, Focus::Training, Focus::Sampler, Focus::Timeline};
}

// Records the child window being drawn as a pane of this frame.
void note_pane(AppState& state, const char* id, bool every_frame) {
  const ImVec2 at = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
  state.panes_drawn.push_back({id, ImGui::GetWindowDrawList(), at.x, at.y, at.x + size.x, at.y + size.y, every_frame});
}

// The live views lay themselves out to fit their pane (the Timeline's wheel zooms). The Scale
// view's words under its plots can outgrow a short pane (1.5x text at 1280x720 cut its note
// mid-sentence): it scrolls.
ImGuiWindowFlags pane_flags(Focus which) {
  return which == Focus::Scale ? ImGuiWindowFlags_None : ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
}

void pane(const view_model::RunModel& model, AppState& state, Focus which, ImVec2 size, bool big) {
  const ViewEntry& v = view(which);
  ImGui::BeginChild(v.id, size, true, pane_flags(which));
  note_pane(state, v.id, big || which == Focus::Ring);
  ImGui::PushFont(fonts().bold);
  ImGui::TextUnformatted(tr(v.title));
  ImGui::PopFont();
  if (!big) {
    ImGui::SameLine(ImGui::GetContentRegionMax().x - ImGui::CalcTextSize(tr("enlarge")).x - ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::SmallButton(label("enlarge", v.id).c_str())) state.focus = which;
  }
  v.draw(model, state);
  ImGui::EndChild();
}

// The failure lab's lesson and report, in the place of panes (they never float over a view).
void failure_pane(const view_model::RunModel& model, AppState& state, ImVec2 size) {
  ImGui::BeginChild("failure_lab_pane", size, true, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  ImGui::PushFont(fonts().bold);
  ImGui::TextUnformatted(tr("Failure lab"));
  ImGui::PopFont();
  const float button_w = ImGui::CalcTextSize(tr("hide")).x + ImGui::GetStyle().FramePadding.x * 2;
  SameLineIfFits(button_w + ImGui::GetStyle().ItemSpacing.x);
  ImGui::SetCursorPosX(std::max(ImGui::GetCursorPosX(), ImGui::GetContentRegionMax().x - button_w));
  if (ImGui::SmallButton(label("hide", "failure_lab_hide").c_str())) state.lab.report_open = false;
  DrawFailureLabPane(model, state);
  ImGui::EndChild();
}

// Large text or a small window: the four-pane layout would cut its text, so one view at a time
// fills the main area, picked by tabs (the View menu and the shortcuts pick them too).
bool one_view_at_a_time(ImVec2 main) {
  const float fs = ImGui::GetFontSize();
  return main.x < fs * 64 || main.y < fs * 34;
}

// A row of buttons, one per view (and the failure lab's while it has something to say), that
// wraps onto a second line rather than cutting a title; the chosen one fills the rest.
bool view_button(const char* english, const char* id, bool on) {
  const ImGuiStyle& style = ImGui::GetStyle();
  SameLineIfFits(ImGui::CalcTextSize(tr(english)).x + style.FramePadding.x * 2);
  ImGui::PushStyleColor(ImGuiCol_Button, style.Colors[on ? ImGuiCol_HeaderActive : ImGuiCol_Button]);
  const bool clicked = ImGui::Button(label(english, id).c_str());
  ImGui::PopStyleColor();
  return clicked;
}

void tabbed_layout(const view_model::RunModel& model, AppState& state) {
  const bool lab = FailureLabPaneShown(model, state);
  if (state.focus != state.tab_focus_seen) state.failure_tab = false;  // the View menu or a key chose a view
  if (state.lab.newly_shown) state.failure_tab = true;
  if (!lab) state.failure_tab = false;
  ImGui::NewLine();  // SameLineIfFits starts from a fresh line
  for (const auto& v : kViews)
    if (view_button(v.title, v.id, !state.failure_tab && state.focus == v.focus)) {
      state.focus = v.focus;
      state.failure_tab = false;
    }
  if (lab && view_button("Failure lab", "failure_tab", state.failure_tab)) state.failure_tab = true;
  state.tab_focus_seen = state.focus;
  if (state.failure_tab) {
    failure_pane(model, state, ImVec2(0, 0));
    return;
  }
  const ViewEntry& v = view(state.focus);
  ImGui::BeginChild(v.id, ImVec2(0, 0), true, pane_flags(state.focus));
  v.draw(model, state);
  ImGui::EndChild();
}

// The Scale view is a what-if with two wide plots and a step bar: it needs width more than the
// live views do, so when chosen it takes the whole top row, and the live run goes on below it in
// two half-width panes (ring and training). Their "enlarge" buttons bring the usual layout back.
void scale_layout(const view_model::RunModel& model, AppState& state, ImVec2 main) {
  const float top_h = std::floor(main.y * 0.66f);
  pane(model, state, Focus::Scale, ImVec2(0, top_h), true);
  const float half = std::floor((main.x - ImGui::GetStyle().ItemSpacing.x) / 2);
  pane(model, state, Focus::Ring, ImVec2(half, 0), false);
  ImGui::SameLine();
  if (FailureLabPaneShown(model, state)) failure_pane(model, state, ImVec2(0, 0));
  else pane(model, state, Focus::Training, ImVec2(0, 0), false);
}

// The timeline's lanes run left to right: enlarged, it takes the whole top row (in the big pane
// it would be narrower than in its usual place below), and the other views share the row below.
void timeline_layout(const view_model::RunModel& model, AppState& state, ImVec2 main) {
  const float top_h = std::floor(main.y * 0.63f);
  pane(model, state, Focus::Timeline, ImVec2(0, top_h), true);
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  if (FailureLabPaneShown(model, state)) {
    pane(model, state, Focus::Ring, ImVec2(std::floor((main.x - gap) / 2), 0), false);
    ImGui::SameLine();
    failure_pane(model, state, ImVec2(0, 0));
    return;
  }
  const float third = std::floor((main.x - 2 * gap) / 3);
  pane(model, state, Focus::Ring, ImVec2(third, 0), false);
  ImGui::SameLine();
  pane(model, state, Focus::Training, ImVec2(third, 0), false);
  ImGui::SameLine();
  pane(model, state, Focus::Sampler, ImVec2(0, 0), false);
}

// The focused view in the big pane, two views to its right and one below. While the failure lab
// has something to say it takes the right-hand column: the big pane and the timeline, which mark
// the failed rank, stay in view.
void focus_layout(const view_model::RunModel& model, AppState& state, ImVec2 main) {
  const auto slots = arrangement(state.focus);
  const float top_h = std::floor(main.y * 0.63f);
  const float big_w = std::floor(main.x * 0.6f);
  pane(model, state, slots[0], ImVec2(big_w, top_h), true);
  ImGui::SameLine();
  if (FailureLabPaneShown(model, state)) {
    failure_pane(model, state, ImVec2(0, top_h));
  } else {
    ImGui::BeginGroup();
    const float right_h = std::floor((top_h - ImGui::GetStyle().ItemSpacing.y) / 2);
    pane(model, state, slots[1], ImVec2(0, right_h), false);
    pane(model, state, slots[2], ImVec2(0, top_h - right_h - ImGui::GetStyle().ItemSpacing.y), false);
    ImGui::EndGroup();
  }
  pane(model, state, slots[3], ImVec2(0, 0), false);
}

// A menu of the bar, closed by Escape as well as by a click outside (the app leaves ImGui's
// keyboard navigation off: the arrow keys step the ring).
bool BeginMenuClosedByEscape(const char* title, const AppState& state) {
  if (!ImGui::BeginMenu(title)) return false;
  if (state.escape_pressed) ImGui::CloseCurrentPopup();
  return true;
}

// "ddp_cpu.py · 4 ranks, gloo, ring, lr 0.03": a script's job is named as the script's.
std::string ScriptJobSummary(const TorchState& t, const JobConfig& job) {
  return trf("{} · {}", t.script_name(), JobSummary(job));
}

// What Start would run. A PyTorch script trains as it decides on the world set here: its lr is
// known from its last run, not from the engine's fields.
std::string NextRunSummary(const AppState& state) {
  const TorchState& t = state.torch;
  if (!t.runs_next()) return JobSummary(state.job);
  const JobConfig& j = state.job;
  if (!t.announced_job())
    return trf(j.world_size == 1 ? "{} · {} rank, {}, {}" : "{} · {} ranks, {}, {}", t.script_name(), j.world_size,
               j.backend, j.algorithm);
  JobConfig job = *t.announced_job();
  job.world_size = j.world_size;
  job.backend = j.backend;
  job.algorithm = j.algorithm;
  return ScriptJobSummary(t, job);
}

void menu_bar(const view_model::RunModel& model, AppState& state) {
  if (!ImGui::BeginMenuBar()) return;
  if (BeginMenuClosedByEscape(label("Scenario", "menu_scenario").c_str(), state)) {
    // A script that Start would run is ticked in the scenario's place; picking a scenario goes
    // back to ringlab's engine (RunSession::load_scenario).
    TorchState& t = state.torch;
    if (!t.script().empty()) {
      if (ImGui::MenuItem(trf("PyTorch script: {}", t.script_name()).c_str(), nullptr, t.runs_next()) &&
          !t.runs_next())
        t.use = true;
      if (ImGui::IsItemHovered()) WrappedTooltip(tr("Start runs this script in place of ringlab's engine."));
      ImGui::Separator();
    }
    for (const Scenario& s : state.scenarios) {
      if (ImGui::MenuItem(s.title(language_code()).c_str(), nullptr, !t.runs_next() && state.scenario.name == s.name))
        state.requests.load_scenario = s.name;
      if (ImGui::IsItemHovered() && !s.description_en.empty()) WrappedTooltip(s.description(language_code()));
    }
    if (state.scenarios.empty()) ImGui::TextDisabled("%s", tr("no scenario folder found"));
    ImGui::Separator();
    if (ImGui::MenuItem(tr("Quit"), "Ctrl+Q")) RequestQuit(state);
    ImGui::EndMenu();
  }
  if (BeginMenuClosedByEscape(label("View", "menu_view").c_str(), state)) {
    for (const auto& v : kViews)
      if (ImGui::MenuItem(tr(v.title), nullptr, state.focus == v.focus)) state.focus = v.focus;
    ImGui::Separator();
    if (ImGui::MenuItem(tr("Light theme (projector)"), nullptr, state.theme == ThemeKind::Light)) {
      state.theme = ThemeKind::Light;
      state.requests.style_changed = true;
    }
    if (ImGui::MenuItem(tr("Dark theme"), nullptr, state.theme == ThemeKind::Dark)) {
      state.theme = ThemeKind::Dark;
      state.requests.style_changed = true;
    }
    ImGui::Separator();
    const bool can_grow = state.ui_scale * 1.1f <= state.ui_scale_max + 1e-3f;
    if (ImGui::MenuItem(tr("Larger text"), "Ctrl+=", false, can_grow)) ++state.requests.zoom_steps;
    if (!can_grow && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      Tooltip(tr("This is the largest text this window can show without cutting words."));
    if (ImGui::MenuItem(tr("Smaller text"), "Ctrl+-")) --state.requests.zoom_steps;
    if (ImGui::MenuItem(tr("Full screen"), "F11")) state.requests.toggle_fullscreen = true;
    ImGui::EndMenu();
  }
  if (BeginMenuClosedByEscape(label("Language", "menu_language").c_str(), state)) {
    if (ImGui::MenuItem("English", nullptr, state.language == Language::English)) {
      state.language = Language::English;
      state.requests.style_changed = true;
    }
    if (ImGui::MenuItem("Bahasa Indonesia", nullptr, state.language == Language::Indonesian)) {
      state.language = Language::Indonesian;
      state.requests.style_changed = true;
    }
    ImGui::EndMenu();
  }
  if (BeginMenuClosedByEscape(label("Help", "menu_help").c_str(), state)) {
    ImGui::PushFont(fonts().bold);
    ImGui::TextUnformatted(tr("What to do first"));
    ImGui::PopFont();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32);
    for (const char* line : {"1. Press Start (F5): real worker processes train the model, and the ring shows their all-reduces.",
                             "2. Choose Step-through (gated), Start, then Next (Right arrow): the workers take one ring step per press.",
                             "3. While it trains, move World size: the workers stop at a step boundary and go on with the new count.",
                             "4. Open the Failure lab (at the bottom of the left panel), pick a fault, Start with it: see who failed, where every rank was, and why."})
      ImGui::TextUnformatted(tr(line));
    ImGui::Separator();
    ImGui::PushFont(fonts().bold);
    ImGui::TextUnformatted(tr("Keys"));
    ImGui::PopFont();
    ImGui::TextUnformatted(tr("F5: Start · Shift+F5: Stop · Ctrl+R: Reset · Ctrl+Q: quit"));
    ImGui::TextUnformatted(tr("Space: play / hold the ring's animation (stepping through: the workers' steps, at the chosen speed)"));
    // Two buttons a newcomer takes for one: what each stops.
    ImGui::TextUnformatted(tr("Pause (beside Start) stops the workers; Hold (Step-through) stops only the animation"));
    ImGui::TextUnformatted(tr("Escape: close a menu or a window"));
    ImGui::TextUnformatted(tr("Right / Left: next / previous ring step"));
    ImGui::TextUnformatted(tr("PageDown / PageUp (a presenter's clicker): next / previous ring step"));
    ImGui::TextUnformatted(tr("F11: full screen"));
    ImGui::TextUnformatted(tr("Ctrl+= / Ctrl+-: larger / smaller text"));
    ImGui::TextUnformatted(tr("Timeline: wheel zooms, drag pans, double-click follows"));
    ImGui::PopTextWrapPos();
    ImGui::Separator();
    if (ImGui::MenuItem(tr("About ringlab"))) state.about_open = true;
    ImGui::EndMenu();
  }
  // What is running (or, while nothing runs, what Start would run), at the right end of the bar.
  // While nothing runs, the fields: what Start would run.
  const bool live = state.run.live();
  // A script's run is named as such: its job looks like one of ringlab's.
  const bool running = live && model.current_generation() && model.current_generation()->has_job;
  const std::string status = !running            ? NextRunSummary(state)
                             : state.torch.live ? ScriptJobSummary(state.torch, model.current_generation()->job)
                                                : JobSummary(model.current_generation()->job);
  // A fault the Failure lab armed goes with every Start until it is taken off: said where the run
  // is named, or a straggler's slow steps read as the machine's. Shorter where the bar has no room
  // for its name (large text), never over the menus.
  const JobConfig& named = running ? model.current_generation()->job : state.job;
  const view_model::FailureLabSettings lab = view_model::lab_from_job(named);
  std::vector<std::string> forms = {status};
  if (lab.fault != view_model::LabFault::None && !(running ? state.torch.live : ScriptRun(state)))
    forms = {status + trf(" · fault: {}, rank {}", LabFaultTitle(lab.fault), lab.rank),
             status + trf(" · fault on rank {}", lab.rank), trf("fault: {}, rank {}", LabFaultTitle(lab.fault), lab.rank),
             trf("fault on rank {}", lab.rank)};
  const float room = ImGui::GetWindowWidth() - ImGui::GetCursorPosX() - ImGui::GetFontSize() * 2.5f;
  const std::string* fits = FirstThatFits(forms, room);
  const std::string& shown = fits ? *fits : forms.back();
  state.said.menu_bar = forms.front();
  ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize(shown.c_str()).x - ImGui::GetFontSize() * 1.5f);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().text_dim), "%s", shown.c_str());
  state.menu_open = ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel);
  ImGui::EndMenuBar();
}

// A pane whose content gets shorter while it is scrolled to its end slides everything above the
// change down by as much: picking "No fault" in the Failure lab, or folding a section, put another
// field (Bucket cap KB) where Epochs had been, under the pointer about to click it. While the
// pointer is in the pane (or one of its menus is open) the pane keeps its tallest height, the
// difference left blank at its end; it settles once the pointer leaves.
void keep_height_under_pointer(float& tallest) {
  const float height = ImGui::GetCursorPosY();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const ImVec2 lo = ImGui::GetWindowPos(), hi(lo.x + ImGui::GetWindowWidth(), lo.y + ImGui::GetWindowHeight());
  const bool pointer_in = mouse.x >= lo.x && mouse.x < hi.x && mouse.y >= lo.y && mouse.y < hi.y;
  if (!pointer_in && !ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel)) tallest = 0;
  tallest = std::max(tallest, height);
  const float gap = tallest - height - ImGui::GetStyle().ItemSpacing.y;
  if (gap > 0) ImGui::Dummy(ImVec2(0, gap));
}

// Larger or smaller text scales what a pane holds, not its scroll, which is in pixels: the
// controls scrolled down to Epochs showed the Start buttons cut in half at the top after Ctrl+=.
// The scroll goes with the text, so the same line stays at the top.
void keep_scroll_at_scale(float& scrolled_at, float scale) {
  if (scrolled_at > 0 && scrolled_at != scale) ImGui::SetScrollY(ImGui::GetScrollY() * scale / scrolled_at);
  scrolled_at = scale;
}

}  // namespace

void DrawMainWindow(const view_model::RunModel& model, AppState& state) {
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->WorkPos);
  ImGui::SetNextWindowSize(viewport->WorkSize);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_MenuBar |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBackground;
  ImGui::Begin("ringlab", nullptr, flags);
  state.panes_drawn.clear();
  menu_bar(model, state);

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const float fs = ImGui::GetFontSize();
  const float left_w = std::clamp(fs * 19.0f, 260.0f, avail.x * 0.3f);

  ImGui::BeginChild("left", ImVec2(left_w, avail.y), false);
  const float step_h = std::min(fs * 19.5f, avail.y * 0.5f);
  ImGui::BeginChild("controls", ImVec2(0, avail.y - step_h - spacing), true);
  // Another scenario (or the script instead of the engine) opens at its title: the pane kept the
  // last one's scroll, and the new title sat half cut at the top.
  const std::string shown = state.torch.runs_next() ? "script" : state.scenario.name;
  if (shown != state.controls_shown_for) {
    ImGui::SetScrollY(0.0f);
    state.controls_shown_for = shown;
  }
  keep_scroll_at_scale(state.controls_scrolled_at_scale, state.ui_scale);
  note_pane(state, "controls", false);
  DrawControlsView(model, state);
  keep_height_under_pointer(state.controls_tallest);
  ImGui::EndChild();
  ImGui::BeginChild("step_through", ImVec2(0, 0), true);
  keep_scroll_at_scale(state.step_scrolled_at_scale, state.ui_scale);
  DrawStepThroughView(model, state);
  ImGui::EndChild();
  ImGui::EndChild();

  ImGui::SameLine();
  ImGui::BeginChild("main", ImVec2(0, avail.y), false);
  const ImVec2 main = ImGui::GetContentRegionAvail();
  if (one_view_at_a_time(main)) tabbed_layout(model, state);
  else if (state.focus == Focus::Scale) scale_layout(model, state, main);
  else if (state.focus == Focus::Timeline) timeline_layout(model, state, main);
  else focus_layout(model, state, main);
  ImGui::EndChild();
  ImGui::End();
  DrawAboutWindow(state);
  DrawStartConfirmation(state);
}

}  // namespace ringlab::viz
