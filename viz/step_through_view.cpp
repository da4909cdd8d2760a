// Step-through controls: the modes, Play / Pause / Next / Previous, speed, and which all-reduce
// and ring step are on screen. What they do is decided in engine/view_model/step_through.h.
#include <imgui.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "engine/view_model/step_through.h"
#include "viz/fonts.h"
#include "viz/i18n.h"
#include "viz/theme.h"
#include "viz/views.h"
#include "viz/widgets.h"

namespace ringlab::viz {
namespace {

using view_model::CollectiveRecord;

const char* mode_name(RingMode m) {
  switch (m) {
    case RingMode::Follow: return "Follow live";
    case RingMode::Gated: return "Step-through (gated)";
    case RingMode::Replay: return "Replay";
  }
  return "";
}

bool running(const AppState& state) { return state.run.phase == RunPhase::Running; }

// Hands what the step-through asked for (open the gate, gate on or off) to the app.
void apply(const view_model::StepRequest& request, AppState& state) {
  state.requests.gate_releases += request.gate_releases;
  if (request.set_gated) {
    state.gated = *request.set_gated;
    state.requests.set_gated = true;
    state.requests.gated_value = *request.set_gated;
  }
}

// The log the step-through works on. During a live run Replay scrubs a copy taken when Replay was
// chosen: the log keeps the newest 512 all-reduces, which a fast run replaces within a fraction of
// a second, so the slider and Previous would find the all-reduce on screen gone at once and jump
// to the newest. Choosing Replay again takes a newer copy. A copy taken during the run is scrubbed
// after it ends too (the all-reduce on screen stays within the slider's reach); Replay chosen
// after the run scrubs the run's log itself, which then stays still.
bool replays_a_copy(const AppState& state) {
  return state.step.mode == RingMode::Replay && (state.run.live() || state.replay_log);
}

const view_model::CollectiveLog& step_log(const view_model::RunModel& model, const AppState& state) {
  return replays_a_copy(state) && state.replay_log ? *state.replay_log : model.collectives();
}

// Following a fast run, the ring animates an all-reduce slowly while the workers go on: the
// log may have let it go already, and the timeline its spans. Replay then starts from the
// newest whole all-reduce of its copy, which the slider holds and the timeline still shows.
void replay_from_newest_unless_held(AppState& state) {
  const view_model::CollectiveLog* copy = state.replay_log.get();
  if (!copy || (state.step.has_selection && copy->find(state.step.selected))) return;
  if (const long newest = copy->latest_complete_ring(); newest >= 0)
    view_model::show_collective(state.step, copy->at(static_cast<size_t>(newest)));
}

// Takes the copy when Replay begins during a live run (again once the run's log has a whole ring
// all-reduce and the copy none: Replay chosen before a new run's first one), and lets it go when
// either ends.
void keep_replay_log(const view_model::RunModel& model, AppState& state) {
  if (!replays_a_copy(state)) {
    state.replay_log.reset();
    return;
  }
  if (!state.run.live()) return;  // the run's end: its copy stays as it was
  const bool none_yet = state.replay_log && state.replay_log->latest_complete_ring() < 0;
  if (state.replay_log && !(none_yet && model.collectives().latest_complete_ring() >= 0)) return;
  state.replay_log = std::make_shared<const view_model::CollectiveLog>(model.collectives());
  replay_from_newest_unless_held(state);
}

}  // namespace

const CollectiveRecord* ShownCollective(const view_model::RunModel& model, const AppState& state) {
  const CollectiveRecord* shown = view_model::shown_collective(state.step, step_log(model, state));
  const view_model::Generation* live = model.current_generation();
  if (shown && live && view_model::left_behind_by_one_rank(state.step, *shown, live->index, live->world_size)) return nullptr;
  return shown;
}

void AdvanceStepThrough(const view_model::RunModel& model, AppState& state) {
  keep_replay_log(model, state);
  // Replay chosen in the middle of an all-reduce scrubs a copy taken then: the one on screen
  // still takes its last steps in the run's own log (the workers are let go), and is shown whole.
  // (Without a copy, advance below follows the run's log itself.)
  if (replays_a_copy(state)) view_model::keep_newest(state.step, model.collectives());
  if (model.failure().failed) return view_model::show_failed_collective(state.step, model.collectives());
  // Play over a finished run's recording stops at its end, as Replay's does.
  if (state.step.mode == RingMode::Gated && state.step.playing && !state.run.live() &&
      !view_model::can_step_forward(state.step, step_log(model, state), false) &&
      state.step.position >= state.step.target)
    state.step.playing = false;
  apply(view_model::advance(state.step, step_log(model, state), running(state), state.frame_dt_s), state);
}

void StepForward(const view_model::RunModel& model, AppState& state) {
  apply(view_model::step_forward(state.step, step_log(model, state), running(state)), state);
}

void StepBack(const view_model::RunModel& model, AppState& state) { view_model::step_back(state.step, step_log(model, state)); }

void TogglePlay(AppState& state) { view_model::toggle_play(state.step); }

void SetRingMode(const view_model::RunModel& model, AppState& state, RingMode mode) {
  state.replay_log.reset();  // Replay chosen (again): a copy of the log as it is now
  apply(view_model::set_mode(state.step, mode), state);
  keep_replay_log(model, state);
}

void DrawStepThroughView(const view_model::RunModel& model, AppState& state) {
  StepThroughState& st = state.step;
  ImGui::PushFont(fonts().bold);
  ImGui::TextUnformatted(tr("Step-through"));
  ImGui::PopFont();

  for (RingMode m : {RingMode::Follow, RingMode::Gated, RingMode::Replay}) {
    const bool unreachable = m == RingMode::Gated && ScriptRun(state) && st.mode != m;
    ImGui::BeginDisabled(unreachable);
    if (WrappedRadio(tr(mode_name(m)), mode_name(m), st.mode == m)) SetRingMode(model, state, m);
    ImGui::EndDisabled();
    if (unreachable && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      Tooltip(tr("A PyTorch script is not held at ringlab's gate: step-through holds ringlab's own workers only."));
  }

  const char* play = st.playing ? "‖ Hold" : "▶ Play";  // "Hold": not the Pause of the training above
  const ButtonGrid grid = FitButtons({tr("← Previous"), tr(play), tr("Next →")}, 3);
  if (ImGui::Button(label("← Previous", "prev").c_str(), ImVec2(grid.width, 0))) StepBack(model, state);
  grid.place(1);
  if (ImGui::Button(label(play, "play").c_str(), ImVec2(grid.width, 0))) TogglePlay(state);
  grid.place(2);
  const bool can_next = view_model::can_step_forward(st, step_log(model, state), running(state));
  state.said.next_enabled = can_next;
  ImGui::BeginDisabled(!can_next);
  if (ImGui::Button(label("Next →", "next").c_str(), ImVec2(grid.width, 0))) StepForward(model, state);
  ImGui::EndDisabled();
  if (!can_next && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    Tooltip(tr(state.run.phase == RunPhase::Paused ? "Paused: Resume lets the workers take their next step."
                                                                    : "Nothing further was recorded: the run is over."));

  float speed = static_cast<float>(st.speed);
  FormLabel(tr("Speed"), 0.36f);
  if (SliderFloatBeside("##speed", &speed, 0.25f, 8.0f, trf("{:.2f} steps/s", speed), ImGuiSliderFlags_Logarithmic).changed)
    st.speed = speed;

  const view_model::CollectiveLog& log = step_log(model, state);
  const CollectiveRecord* shown = ShownCollective(model, state);
  std::vector<size_t> rings = st.mode == RingMode::Replay ? view_model::steppable_collectives(log) : std::vector<size_t>{};
  // Replay's copy of a live run's log ends in all-reduces the workers had not finished when it was
  // taken: the slider leaves them out (chosen, one showed a step or none, with Next greyed at the
  // copy's end), unless it is the one on screen, which follows the run (keep_newest).
  if (replays_a_copy(state))
    std::erase_if(rings, [&](size_t i) { return !log.at(i).complete() && !(shown && log.at(i).key == shown->key); });
  state.said.replay_slot.clear();
  if (!rings.empty()) {
    const int last = static_cast<int>(rings.size()) - 1;
    int slot = -1;
    for (int i = 0; shown && i <= last; ++i)
      if (log.at(rings[i]).key == shown->key) slot = i;
    // The one on screen can be older than every one the log keeps (the newest 512): the slider
    // then says so at its left end, rather than name the newest as if it were on screen.
    const std::string where = slot >= 0 ? trf("{} of {}", slot + 1, rings.size())
                              : shown   ? trf("#{}, older than the {} kept", grouped(shown->key.id), rings.size())
                                        : trf("{} of {}", last + 1, rings.size());
    if (slot < 0) slot = shown ? 0 : last;
    state.said.replay_slot = where;
    FormLabel(tr("All-reduce"), 0.36f);
    if (SliderIntBeside("##which", &slot, 0, last, where).changed) view_model::show_collective(st, log.at(rings[slot]));
  }
  if (shown) {
    const int total = view_model::recorded_steps(*shown);
    int position = st.position;
    const int expected = std::max(total, view_model::expected_steps(*shown));
    // The bar spans the whole all-reduce; it can be dragged only over the steps recorded so far.
    FormLabel(tr("Ring step"), 0.36f);
    // "done": at 0 the ring reads "Before ring step 1", and "0 of 6" beside it read as a step 0.
    if (SliderIntBeside("##position", &position, 0, std::max(expected, 1), trf("{} of {} done", st.position, expected)).changed)
      view_model::show_position(st, std::min(position, total));
  } else {
    // The same bar, greyed, until the first all-reduce: the pane keeps its layout when F5 starts a run.
    int none = 0;
    FormLabel(tr("Ring step"), 0.36f);
    ImGui::BeginDisabled();
    // One rank all-reduces with nobody: its all-reduces (the timeline's bars) have no ring steps.
    SliderIntBeside("##position", &none, 0, 1, model.world_size() == 1 ? tr("one rank: no ring") : tr("no all-reduce yet"));
    ImGui::EndDisabled();
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(palette().text_dim));
  ImGui::PushTextWrapPos(0);
  switch (st.mode) {
    case RingMode::Follow:
      ImGui::TextUnformatted(tr("Animates a recent all-reduce step by step, then jumps to the newest one, while training runs at full speed."));
      break;
    case RingMode::Gated:
      ImGui::TextUnformatted(state.run.live() || state.run.phase == RunPhase::Idle
                                 ? tr("The workers really stop before every ring step. Next lets them take one more; Play lets them go at the chosen speed.")
                             : !shown && !can_next
                                 ? tr("The run ended before its first all-reduce: nothing was recorded to step through.")
                                 : tr("The run is over: Next and Previous step through what its workers recorded."));
      break;
    case RingMode::Replay:
      ImGui::TextUnformatted(state.run.live()
                                 ? tr("Scrub the all-reduces recorded when Replay was chosen (choose it again for newer ones). The workers are not held.")
                                 : tr("Scrub any recorded all-reduce. The workers are not held."));
      break;
  }
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

}  // namespace ringlab::viz
