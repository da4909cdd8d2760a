// Start asks first when the run needs much memory: the estimate that `ringlab run` checks before
// it starts any process (engine/control/run_limits.h), said in a dialog with Start and Cancel.
// A run that cannot fit at all is not asked about: Start is refused with the same message.
// The same kind of question comes before a live run is started again for a setting it cannot
// take on half-way (set_epoch, from the Sampler pane), reset or quit.
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
constexpr const char* kQuitDialog = "###quit_confirmation";

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

// Stepping through with Play off, the workers wait at the gate for Next: the run does not go
// on while a question is open.
bool held_at_gate(const AppState& state) {
  return state.step.mode == view_model::RingMode::Gated && !state.step.playing;
}

enum class Answer { None, Yes, No };

// A question's two answers side by side (Escape is the second), and the question closed once
// one is given. The caller acts on the answer, then ends the popup.
Answer two_answers(const AppState& state, const char* yes, const char* yes_id, const char* no, const char* no_id) {
  const float w = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
  Answer answer = ImGui::Button(label(yes, yes_id).c_str(), ImVec2(w, 0)) ? Answer::Yes : Answer::None;
  ImGui::SameLine();
  if (ImGui::Button(label(no, no_id).c_str(), ImVec2(w, 0)) || (answer == Answer::None && state.escape_pressed))
    answer = Answer::No;
  if (answer != Answer::None) ImGui::CloseCurrentPopup();
  return answer;
}

// set_epoch changes every epoch's order from the first: a run cannot take it on half-way.
void draw_restart_confirmation(AppState& state) {
  AppState::PendingRestart& p = state.pending_restart;
  if (!p.asked) return;
  if (!state.run.live()) {  // the run ended while the question was open: the change waits for the next Start
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
  const Answer answer = two_answers(state, "Start again", "confirm_restart", "Keep this run", "cancel_restart");
  if (answer == Answer::No) state.job.set_epoch = p.set_epoch_before;
  if (answer != Answer::None) p = {};
  if (answer == Answer::Yes) RequestStart(state, true);
  ImGui::EndPopup();
}

// Reset ends the run and forgets it (it is not kept as an earlier run): asked first. A run that
// ends while the question is open leaves it open, as Quit's does: the finished run is still there
// to lose.
void draw_reset_confirmation(AppState& state) {
  if (!state.pending_reset) return;
  if (!begin_question(kResetDialog, tr("Reset this run?"))) return;
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(tr("Reset stops the workers, forgets this run and the earlier runs' curves, and brings back the scenario's settings."));
  const char* meanwhile = !state.run.live()                    ? "The run has ended meanwhile."
                          : state.run.phase == RunPhase::Paused ? "Until you answer, the run stays paused."
                          : held_at_gate(state)                 ? "Until you answer, the workers stay held at the step-through gate."
                                                                : "Until you answer, the run goes on.";
  state.said.reset_meanwhile = meanwhile;
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().text_dim), "%s", tr(meanwhile));
  ImGui::PopTextWrapPos();
  const Answer answer = two_answers(state, "Reset", "confirm_reset", "Keep this run", "cancel_reset");
  if (answer != Answer::None) state.pending_reset = false;
  if (answer == Answer::Yes) state.requests.reset = true;
  ImGui::EndPopup();
}

// Quitting stops the workers and loses the run on screen: asked first while one trains. A run
// that ends while the question is open leaves it open (it quit by itself, and the finished run's
// curves went with the window, the answer never given).
void draw_quit_confirmation(AppState& state) {
  if (!state.pending_quit) return;
  if (!begin_question(kQuitDialog, tr("Quit ringlab?"))) return;
  ImGui::PushTextWrapPos(0);
  const bool live = state.run.live(), paused = state.run.phase == RunPhase::Paused;
  ImGui::TextUnformatted(live ? tr("Quitting stops the workers where they are; this run and its curves are not kept.")
                              : tr("The run has ended; quitting closes the window, and its curves are not kept."));
  const char* meanwhile = !live                ? "Ctrl+Q again quits."
                          : paused             ? "Until you answer, the run stays paused. Ctrl+Q again quits."
                          : held_at_gate(state) ? "Until you answer, the workers stay held at the step-through gate. Ctrl+Q again quits."
                                                : "Until you answer, the run goes on. Ctrl+Q again quits.";
  state.said.quit_meanwhile = meanwhile;
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().text_dim), "%s", tr(meanwhile));
  ImGui::PopTextWrapPos();
  const Answer answer = !live   ? two_answers(state, "Quit", "confirm_quit", "Stay", "cancel_quit")
                        : paused || held_at_gate(state) ? two_answers(state, "Quit", "confirm_quit", "Keep this run", "cancel_quit")
                                 : two_answers(state, "Quit", "confirm_quit", "Keep training", "cancel_quit");
  if (answer != Answer::None) state.pending_quit = false;
  if (answer == Answer::Yes) state.requests.quit = true;
  ImGui::EndPopup();
}

// One question at a time: a key that asks another (Ctrl+Q while Reset is asked, the window's close
// button, Ctrl+R) replaces the one open, which is answered as its Escape would answer it. Two open
// at once each took the screen from the other every frame, and neither was seen.
void close_questions(AppState& state) {
  if (state.pending_restart.asked) state.job.set_epoch = state.pending_restart.set_epoch_before;
  state.pending_restart = {};
  state.pending_start = {};
  state.pending_reset = false;
  state.pending_quit = false;
}

}  // namespace

bool QuestionOpen(const AppState& state) {
  return state.pending_start.bytes > 0 || state.pending_restart.asked || state.pending_reset || state.pending_quit;
}

void RequestQuit(AppState& state) {
  if (!state.run.live() || state.pending_quit) {
    state.requests.quit = true;
    return;
  }
  close_questions(state);
  state.pending_quit = true;
}

void RequestReset(AppState& state) {
  if (!state.run.live()) {
    state.requests.reset = true;
    return;
  }
  close_questions(state);
  state.pending_reset = true;
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
  close_questions(state);
  state.pending_start = {f.total_bytes, f.worker_breakdown, restart};
}

void DrawStartConfirmation(AppState& state) {
  state.said.reset_meanwhile.clear();
  state.said.quit_meanwhile.clear();
  draw_restart_confirmation(state);
  draw_reset_confirmation(state);
  draw_quit_confirmation(state);
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
  const Answer answer = two_answers(state, "▶ Start", "confirm_start", "Cancel", "cancel_start");
  if (answer == Answer::Yes) {
    state.requests.start = true;
    state.requests.restart = p.restart;
  }
  if (answer != Answer::None) p = {};
  ImGui::EndPopup();
}

}  // namespace ringlab::viz
