// Start asks first when the run needs much memory: the estimate that `ringlab run` checks before
// it starts any process (engine/control/run_limits.h), said in a dialog with Start and Cancel.
// A run that cannot fit at all is not asked about: Start is refused with the same message.
// The same kind of question comes before a live run is started again for a setting it cannot
// take on half-way (set_epoch, from the Sampler pane).
#include <imgui.h>

#include <algorithm>

#include "engine/control/run_limits.h"
#include "viz/i18n.h"
#include "viz/theme.h"
#include "viz/views.h"

namespace ringlab::viz {
namespace {

// Above this a classroom machine notices: swap, a slow desktop, other programs pushed out.
constexpr uint64_t kAskAboveBytes = uint64_t{1} << 30;

constexpr const char* kDialog = "###start_confirmation";
constexpr const char* kRestartDialog = "###restart_confirmation";
constexpr const char* kResetDialog = "###reset_confirmation";

// A question in the middle of the window, which nothing else can be clicked past; false while
// it is not shown (the caller then draws nothing of it).
bool begin_question(const char* id, const char* title) {
  if (!ImGui::IsPopupOpen(id)) ImGui::OpenPopup(id);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->GetCenter(), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 30, 0));
  const std::string titled = std::string(title) + id;
  return ImGui::BeginPopupModal(titled.c_str(), nullptr, ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove);
}

// set_epoch changes every epoch's order from the first: a run cannot take it on half-way.
void draw_restart_confirmation(AppState& state) {
  AppState::PendingRestart& p = state.pending_restart;
  const bool live = state.run.phase == RunPhase::Running || state.run.phase == RunPhase::Paused;
  if (!p.asked) return;
  if (!live) {  // the run ended while the question was open: the change waits for the next Start
    p = {};
    return;
  }
  if (!begin_question(kRestartDialog, tr("Start the run again?"))) return;
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(state.job.set_epoch
                             ? tr("With set_epoch called, every epoch is shuffled afresh from the first one on: the workers start again from step 0.")
                             : tr("Without set_epoch, every epoch repeats epoch 0's order from the first one on: the workers start again from step 0."));
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().text_dim), "%s", tr("Until you answer, the run goes on; Start again stops it where it is then."));
  ImGui::PopTextWrapPos();
  const float w = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
  if (ImGui::Button(label("Start again", "confirm_restart").c_str(), ImVec2(w, 0))) {
    p = {};
    ImGui::CloseCurrentPopup();
    RequestStart(state, true);
  }
  ImGui::SameLine();
  if (ImGui::Button(label("Keep this run", "cancel_restart").c_str(), ImVec2(w, 0)) || state.escape_pressed) {
    state.job.set_epoch = p.set_epoch_before;
    p = {};
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

bool run_live(const AppState& state) {
  return state.run.phase == RunPhase::Running || state.run.phase == RunPhase::Paused;
}

// Reset ends the run and forgets it (it is not kept as an earlier run): asked first.
void draw_reset_confirmation(AppState& state) {
  if (!state.pending_reset) return;
  if (!run_live(state)) {  // the run ended while the question was open: nothing to lose now
    state.pending_reset = false;
    state.requests.reset = true;
    return;
  }
  if (!begin_question(kResetDialog, tr("Reset this run?"))) return;
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(tr("Reset stops the workers, forgets this run and the earlier runs' curves, and brings back the scenario's settings."));
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().text_dim), "%s", tr("Until you answer, the run goes on."));
  ImGui::PopTextWrapPos();
  const float w = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
  if (ImGui::Button(label("Reset", "confirm_reset").c_str(), ImVec2(w, 0))) {
    state.pending_reset = false;
    state.requests.reset = true;
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button(label("Keep this run", "cancel_reset").c_str(), ImVec2(w, 0)) || state.escape_pressed) {
    state.pending_reset = false;
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace

void RequestReset(AppState& state) {
  if (run_live(state)) state.pending_reset = true;
  else state.requests.reset = true;
}

bool HasRefusedField(const AppState& state) {
  return std::any_of(state.field_edits.begin(), state.field_edits.end(), [](const auto& f) { return f.second.refused; });
}

void RequestStart(AppState& state, bool restart) {
  if (HasRefusedField(state)) {  // nothing starts, and the controls say why (they do not scroll: Start stays put)
    state.start_waits_for_field = true;
    return;
  }
  const RunFootprint f = estimate_footprint(state.job, {state.job.world_size, state.lab.settings.max_restarts > 0, false});
  if (f.total_bytes < kAskAboveBytes) {
    state.requests.start = true;
    state.requests.restart = restart;
    return;
  }
  state.pending_start = {f.total_bytes, f.worker_breakdown, restart};
}

void DrawStartConfirmation(AppState& state) {
  draw_restart_confirmation(state);
  draw_reset_confirmation(state);
  AppState::PendingStart& p = state.pending_start;
  if (p.bytes == 0) return;
  if (!begin_question(kDialog, tr("This run needs much memory"))) return;
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(trf("About {} of memory for {} worker processes and the app.", describe_bytes(p.bytes),
                             state.job.world_size).c_str());
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().text_dim), "%s",
                     trf("Each worker: {}", p.breakdown).c_str());
  ImGui::TextUnformatted(tr("Fewer samples or ranks need less. Start anyway?"));
  ImGui::PopTextWrapPos();
  const float w = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
  if (ImGui::Button(label("▶ Start", "confirm_start").c_str(), ImVec2(w, 0))) {
    state.requests.start = true;
    state.requests.restart = p.restart;
    p = {};
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button(label("Cancel", "cancel_start").c_str(), ImVec2(w, 0)) || state.escape_pressed) {
    p = {};
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace ringlab::viz
