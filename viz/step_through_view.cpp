// Step-through: Play / Pause / Next / Previous / speed, and which all-reduce is on screen.
//
// In follow mode the newest finished all-reduce is animated step by step, then the next newest.
// In gated mode the workers wait before every ring step; the screen shows the all-reduce they
// are in, up to the last step they really took, and Next lets them take one more. In replay
// mode any recorded all-reduce can be scrubbed.
#include <imgui.h>

#include <algorithm>

#include "engine/replay/ring_state.h"
#include "viz/fonts.h"
#include "viz/i18n.h"
#include "viz/theme.h"
#include "viz/views.h"

namespace ringlab::viz {
namespace {

using replay::CollectiveLog;
using replay::CollectiveRecord;

// All-reduces that go around the ring (the backend's own all-reduce and the initial broadcast
// have no steps to show).
bool is_ring(const CollectiveRecord& r) { return r.algorithm == "ring" || r.algorithm == "demo"; }

long newest_ring(const CollectiveLog& log) {
  for (size_t i = log.size(); i-- > 0;)
    if (is_ring(log.at(i)) && (log.at(i).world_size > 1 || !log.at(i).transfers.empty())) return static_cast<long>(i);
  return -1;
}

long index_of(const CollectiveLog& log, const replay::CollectiveKey& key) {
  for (size_t i = log.size(); i-- > 0;)
    if (log.at(i).key == key) return static_cast<long>(i);
  return -1;
}

void select(StepThroughState& st, const CollectiveRecord& r) {
  st.has_selection = true;
  st.selected = r.key;
  st.position = 0;
  st.progress = 0;
  st.hold_s = 0;
}

int recorded_steps(const CollectiveRecord& r) { return static_cast<int>(replay::ring_schedule(r).steps.size()); }

int expected_steps(const CollectiveRecord& r) {
  const int n = std::max(r.world_size, static_cast<int>(r.ranks.size()));
  return r.transfers.empty() && n <= 1 ? 0 : 2 * (n - 1);
}

// Moves the packets along; a step completes when they arrive.
void animate(StepThroughState& st, int available_steps, double dt) {
  if (st.position >= available_steps) {
    st.progress = 0;
    return;
  }
  st.progress += dt * st.speed;
  while (st.progress >= 1.0 && st.position < available_steps) {
    st.progress -= 1.0;
    ++st.position;
  }
  if (st.position >= available_steps) st.progress = 0;
}

void advance_follow(const replay::RunModel& model, AppState& state, const CollectiveRecord* shown) {
  StepThroughState& st = state.step;
  const CollectiveLog& log = model.collectives();
  const long latest = log.latest_complete_ring();
  if (st.fixed_position >= 0) {  // --ring-step: always the newest finished one, held at that step
    if (latest >= 0 && (!shown || log.at(latest).key != shown->key)) select(st, log.at(latest));
    st.position = st.fixed_position;
    st.progress = 0;
    return;
  }
  if (!shown) {
    if (latest >= 0) select(st, log.at(latest));
    return;
  }
  // After a live change of world, show the new set of workers at once.
  if (latest >= 0 && log.at(latest).key.generation > shown->key.generation) {
    select(st, log.at(latest));
    return;
  }
  if (!st.playing) return;
  const int total = recorded_steps(*shown);
  // Following live, one all-reduce takes at most about 4 s however many ranks there are.
  StepThroughState paced = st;
  paced.speed = std::max(st.speed, total / 4.0);
  animate(paced, total, state.frame_dt_s);
  st.position = paced.position;
  st.progress = paced.progress;
  if (st.position < total) return;
  st.hold_s += state.frame_dt_s;
  if (st.hold_s < std::max(1.2, 1.0 / st.speed)) return;
  if (latest >= 0) select(st, log.at(latest));  // the newest one, or the same one again
}

void advance_gated(const replay::RunModel& model, AppState& state, const CollectiveRecord* shown) {
  StepThroughState& st = state.step;
  const CollectiveLog& log = model.collectives();
  if (!shown) {
    const long newest = newest_ring(log);
    if (newest >= 0) select(st, log.at(newest));
    return;
  }
  const int recorded = recorded_steps(*shown);
  animate(st, recorded, state.frame_dt_s);
  // Play in gated mode paces the real workers: one ring step per 1/speed seconds. With a fixed
  // position (--ring-step) they are let go until the all-reduce on screen reaches it.
  const bool wanted = st.fixed_position >= 0 ? st.position < st.fixed_position : st.playing;
  if (wanted && st.position >= recorded && state.run.phase == RunPhase::Running) {
    st.since_release_s += state.frame_dt_s;
    if (st.since_release_s >= 1.0 / st.speed) {
      st.since_release_s = 0;
      StepForward(model, state);
    }
  }
}

void advance_replay(const replay::RunModel& model, AppState& state, const CollectiveRecord* shown) {
  StepThroughState& st = state.step;
  if (!shown) {
    const long latest = model.collectives().latest_complete_ring();
    if (latest >= 0) select(st, model.collectives().at(latest));
    st.playing = false;
    return;
  }
  if (!st.playing) return;
  const int total = recorded_steps(*shown);
  animate(st, total, state.frame_dt_s);
  if (st.position >= total) st.playing = false;
}

const char* mode_name(RingMode m) {
  switch (m) {
    case RingMode::Follow: return "Follow live";
    case RingMode::Gated: return "Step-through (gated)";
    case RingMode::Replay: return "Replay";
  }
  return "";
}

}  // namespace

const CollectiveRecord* ShownCollective(const replay::RunModel& model, const AppState& state) {
  if (!state.step.has_selection) return nullptr;
  return model.collectives().find(state.step.selected);
}

void AdvanceStepThrough(const replay::RunModel& model, AppState& state) {
  const CollectiveRecord* shown = ShownCollective(model, state);
  if (!shown) state.step.has_selection = false;
  switch (state.step.mode) {
    case RingMode::Follow: advance_follow(model, state, shown); break;
    case RingMode::Gated: advance_gated(model, state, shown); break;
    case RingMode::Replay: advance_replay(model, state, shown); break;
  }
}

void StepForward(const replay::RunModel& model, AppState& state) {
  StepThroughState& st = state.step;
  const CollectiveRecord* shown = ShownCollective(model, state);
  if (st.mode == RingMode::Follow) {
    st.mode = RingMode::Replay;
    st.playing = false;
  }
  if (st.mode == RingMode::Replay) {
    st.playing = false;
    if (shown) st.position = std::min(st.position + 1, recorded_steps(*shown));
    st.progress = 0;
    return;
  }
  // Gated: first catch the screen up with what the workers did, then let them take a step.
  st.since_release_s = 0;
  if (shown && st.position < recorded_steps(*shown)) {
    ++st.position;
    st.progress = 0;
    return;
  }
  if (shown && st.position >= expected_steps(*shown)) {
    const CollectiveLog& log = model.collectives();
    const long here = index_of(log, shown->key);
    for (size_t i = static_cast<size_t>(here + 1); i < log.size(); ++i)
      if (is_ring(log.at(i))) {
        select(st, log.at(i));
        break;
      }
  }
  if (state.run.phase == RunPhase::Running) ++state.requests.gate_releases;
}

void StepBack(const replay::RunModel& model, AppState& state) {
  StepThroughState& st = state.step;
  if (st.mode == RingMode::Follow) st.mode = RingMode::Replay;
  st.playing = false;
  st.progress = 0;
  st.position = std::max(0, st.position - 1);
}

void TogglePlay(AppState& state) { state.step.playing = !state.step.playing; }

void SetRingMode(const replay::RunModel& model, AppState& state, RingMode mode) {
  StepThroughState& st = state.step;
  if (st.mode == mode) return;
  const bool was_gated = st.mode == RingMode::Gated;
  st.mode = mode;
  st.fixed_position = -1;
  if (mode == RingMode::Gated) {
    st.playing = false;
    st.has_selection = false;  // show the all-reduce the workers are in
    state.gated = true;
    state.requests.set_gated = true;
    state.requests.gated_value = true;
  } else if (was_gated) {
    state.gated = false;
    state.requests.set_gated = true;
    state.requests.gated_value = false;
  }
  if (mode == RingMode::Follow) {
    st.playing = true;
    st.has_selection = false;
  }
  if (mode == RingMode::Replay) st.playing = false;
}

void DrawStepThroughView(const replay::RunModel& model, AppState& state) {
  StepThroughState& st = state.step;
  ImGui::PushFont(fonts().bold);
  ImGui::TextUnformatted(tr("Step-through"));
  ImGui::PopFont();

  for (RingMode m : {RingMode::Follow, RingMode::Gated, RingMode::Replay}) {
    const std::string text = label(mode_name(m), mode_name(m));
    if (ImGui::RadioButton(text.c_str(), st.mode == m)) SetRingMode(model, state, m);
  }

  const float w = ImGui::GetContentRegionAvail().x;
  const float bw = (w - ImGui::GetStyle().ItemSpacing.x * 2) / 3;
  if (ImGui::Button(label("← Previous", "prev").c_str(), ImVec2(bw, 0))) StepBack(model, state);
  ImGui::SameLine();
  if (ImGui::Button(label(st.playing ? "‖ Pause" : "▶ Play", "play").c_str(), ImVec2(bw, 0)))
    TogglePlay(state);
  ImGui::SameLine();
  if (ImGui::Button(label("Next →", "next").c_str(), ImVec2(bw, 0))) StepForward(model, state);

  float speed = static_cast<float>(st.speed);
  ImGui::SetNextItemWidth(w);
  if (ImGui::SliderFloat("##speed", &speed, 0.25f, 8.0f, trf("speed: {} steps/s", "%.2f").c_str(),
                         ImGuiSliderFlags_Logarithmic))
    st.speed = speed;

  const replay::CollectiveLog& log = model.collectives();
  const CollectiveRecord* shown = ShownCollective(model, state);
  if (st.mode == RingMode::Replay && log.size() > 0) {
    int slot = shown ? static_cast<int>(index_of(log, shown->key)) : static_cast<int>(log.size()) - 1;
    ImGui::SetNextItemWidth(w);
    const std::string fmt_text = trf("all-reduce {} of {}", "%d", log.size());
    if (ImGui::SliderInt("##which", &slot, 0, static_cast<int>(log.size()) - 1, fmt_text.c_str()))
      select(st, log.at(slot));
  }
  if (shown) {
    const int total = recorded_steps(*shown);
    int position = st.position;
    ImGui::SetNextItemWidth(w);
    const std::string text = trf("ring step %d of {}", std::max(total, expected_steps(*shown)));
    if (ImGui::SliderInt("##position", &position, 0, std::max(total, 0), text.c_str())) {
      if (st.mode == RingMode::Follow) st.mode = RingMode::Replay;
      st.position = position;
      st.progress = 0;
      st.playing = false;
    }
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(palette().text_dim));
  ImGui::PushTextWrapPos(0);
  switch (st.mode) {
    case RingMode::Follow:
      ImGui::TextUnformatted(tr("Shows the newest finished all-reduce, step by step, while training runs at full speed."));
      break;
    case RingMode::Gated:
      ImGui::TextUnformatted(tr("The workers really stop before every ring step. Next lets them take one more; Play lets them go at the chosen speed."));
      break;
    case RingMode::Replay:
      ImGui::TextUnformatted(tr("Scrub any recorded all-reduce. The workers are not held."));
      break;
  }
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

}  // namespace ringlab::viz
