// Controls: the job (world size, backend, algorithm, bucket cap, lr, batch, samples, seed,
// epochs), the failure lab, and Start / Pause / Stop / Reset. World size and backend can change
// while training: the controller stops the workers at a step boundary, checkpoints, and starts
// the new set.
#include <imgui.h>
#include <imgui_internal.h>

#include <limits>

#include <algorithm>
#include <functional>
#include <cmath>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "viz/failure_lab_view.h"
#include "viz/fault_explanations.h"
#include "viz/fonts.h"
#include "viz/i18n.h"
#include "viz/plot.h"
#include "viz/theme.h"
#include "viz/torch_script_view.h"
#include "viz/views.h"
#include "viz/widgets.h"

namespace ringlab::viz {
namespace {

const BackendInfo* backend_info(const AppState& s, const std::string& name) {
  for (const auto& b : s.backends)
    if (b.name == name) return &b;
  return nullptr;
}

// A field that only a fresh run can change is disabled while one runs: greyed, it says why and
// what does change live.
const char* fixed_while_running() {
  return tr("Fixed while a run trains: Stop it to change this. World size and Backend change live.");
}

void restart_tooltip(const AppState& s) {
  if (s.run.live() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) WrappedTooltip(fixed_while_running());
}

const char* phase_text(RunPhase phase) {
  switch (phase) {
    case RunPhase::Idle: return tr("ready");
    case RunPhase::Running: return tr("training");
    case RunPhase::Paused: return tr("paused at the gate");
    case RunPhase::Finished: return tr("finished");
    case RunPhase::Failed: return tr("failed");
    case RunPhase::Stopped: return tr("stopped by you");
  }
  return "";
}

// A finished run stays on screen when Start is switched to the other kind (the script, or
// ringlab's engine): its status then says whose run it was, "ringlab's engine: finished", or it
// reads as a run of what the title now names. (Side by side runs both; its rows say which.)
std::string phase_of_run_on_screen(const AppState& state) {
  const TorchState& t = state.torch;
  const std::string phase = phase_text(state.run.phase);
  if (state.run.phase == RunPhase::Idle || state.run.live() || t.side_by_side || t.live == t.runs_next()) return phase;
  return t.live ? trf("{}: {}", t.script_name(), phase) : trf("ringlab's engine: {}", phase);
}

void draw_backend_choice(AppState& state) {
  ImGui::TextUnformatted(tr("Backend"));
  for (const char* name : {"gloo", "mpi", "nccl"}) {
    const BackendInfo* info = backend_info(state, name);
    const bool available = info && info->available;
    // At a large text size the three do not fit beside the label: they flow onto the next row.
    SameLineIfFits(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(name).x);
    ImGui::BeginDisabled(!available);
    if (ImGui::RadioButton(name, state.job.backend == name) && state.job.backend != name) {
      state.job.backend = name;
      if (state.run.live()) state.requests.change_world = true;
    }
    ImGui::EndDisabled();
    if (!available && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      Tooltip(info ? info->reason.c_str() : tr("not built into this ringlab"));
  }
}

// "from 1 to 100,000,000", or "0 or more" when the top is the type's own limit.
std::string range_text(int64_t lo, int64_t hi) {
  if (hi == std::numeric_limits<int64_t>::max()) return trf("{} or more", grouped(lo));
  return trf("from {} to {}", grouped(lo), grouped(hi));
}

// An integer field of the job. Its valid range shows in a tip under it while it is being edited
// (and when hovered), so it is read before a value is typed, without moving the layout or
// taking a second line for every field at 1280x720; a typed value outside it, or
// one the job refuses (JobConfig::validate, the same check as `ringlab run`'s flags), stays in
// the field with the reason under it, and the job keeps its last valid value. With a
// `pytorch_default`, the job's -1 (leave it to PyTorch) shows as PyTorch's value, as a script's
// run shows it; that value or 0 typed puts the -1 back.
template <class T>
void job_int_field(AppState& state, const char* english, const char* id, T JobConfig::*member, int64_t lo, int64_t hi,
                   const char* note = nullptr, int64_t pytorch_default = -1) {
  FieldEdit& edit = state.field_edits[id];
  const int64_t in_job = static_cast<int64_t>(state.job.*member);
  const bool has_default = pytorch_default != -1;
  int64_t value = edit.refused ? edit.typed : has_default && in_job == -1 ? pytorch_default : in_job;
  const int64_t step = 1, step_fast = std::max<int64_t>(1, (hi - lo) / 1000);
  FormLabel(tr(english));
  if (edit.refused) {  // the field itself is marked, not only the reason under it
    ImGui::PushStyleColor(ImGuiCol_Border, ImGui::ColorConvertU32ToFloat4(palette().bad));
    ImGui::PushStyleVar(ImGuiStyleVar_FrameBorderSize, 2.0f);
  }
  const bool changed = ImGui::InputScalar(("##" + std::string(id)).c_str(), ImGuiDataType_S64, &value, &step, &step_fast);
  state.said.job_fields[id] = value;
  if (edit.refused) {
    ImGui::PopStyleVar();
    ImGui::PopStyleColor();
  }
  edit.x = ImGui::GetItemRectMin().x + ImGui::GetFontSize();
  edit.y = (ImGui::GetItemRectMin().y + ImGui::GetItemRectMax().y) / 2;
  if (ImGui::IsItemActivated() && !edit.refused) {
    edit.has_before = true;
    edit.before = in_job;
  }
  if (changed) {
    edit.refused = false;
    edit.reason.clear();
    JobConfig candidate = state.job;
    candidate.*member = static_cast<T>(has_default && (value == 0 || value == pytorch_default) ? -1 : value);
    std::string refusal;
    if (value < lo || value > hi) {
      refusal = fmt::format("{}: {}", tr(english), range_text(lo, hi));
    } else {
      try {
        candidate.validate();
        state.job = candidate;
      } catch (const InputError& e) {
        refusal = e.what();
      }
    }
    if (!refusal.empty()) {
      edit.refused = true;
      edit.reveal = true;
      edit.typed = value;
      edit.reason = refusal;
      if (edit.has_before) state.job.*member = static_cast<T>(edit.before);
    }
  }
  // Typing in it, where it is in view: a field still active once the pane scrolled it away (or a
  // run started and disabled it) left its range on screen, pinned over whatever came there.
  const bool editing = ImGui::IsItemActive() && ImGui::IsItemVisible() && !state.run.live();
  if (editing && !edit.refused) {
    // Under the field, over what follows: the layout must not move while someone types.
    ImGui::SetNextWindowPos(ImVec2(ImGui::GetItemRectMin().x, ImGui::GetItemRectMax().y));
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(range_text(lo, hi).c_str());
    ImGui::EndTooltip();
  } else if (!editing && !ImGui::IsAnyItemActive() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    WrappedTooltip(state.run.live() ? fixed_while_running()
                                           : (range_text(lo, hi) + (note ? std::string("\n") + tr(note) : "")).c_str());
  }
  if (edit.refused) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().bad), "%s", edit.reason.c_str());
    ImGui::PopTextWrapPos();
    // At 1280x720 the lower fields sit at the pane's bottom edge, and the reason would be drawn
    // under it, out of sight: the pane scrolls once to show it, while the field is still typed in.
    const float pane_bottom = ImGui::GetWindowPos().y + ImGui::GetWindowHeight() - ImGui::GetStyle().WindowPadding.y;
    edit.reason_seen = ImGui::GetItemRectMax().y <= pane_bottom + 0.5f;
    if (edit.reveal && !edit.reason_seen) ImGui::SetScrollHereY(1.0f);
    edit.reveal = false;
  }
}

// In place of the engine's training fields while Start runs a PyTorch script: what the script's
// last run reported (read-only: the script, not this pane, decides them), or that it has not run.
void draw_script_job(AppState& state) {
  const TorchState& t = state.torch;
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().text_dim), "%s",
                     t.side_by_side ? tr("The PyTorch script decides its training; ringlab's engine then trains what the "
                                         "script reported. World size, Backend and Algorithm apply to both.")
                                    : tr("The PyTorch script decides its training; World size, Backend and Algorithm "
                                         "(ring: its buckets drawn as a ring) apply to it."));
  ImGui::PopTextWrapPos();
  if (!t.announced_job()) {
    DimWrapped(tr("Its learning rate, batch, samples, seed and epochs show here once it has started."));
    return;
  }
  const JobConfig& j = *t.announced_job();
  auto row = [&](const char* english, const std::string& value) {
    FormLabel(tr(english));
    ImGui::PushTextWrapPos(0);  // "25600 (PyTorch's default)" is wider than a narrow pane's value column
    ImGui::TextUnformatted(value.c_str());
    ImGui::PopTextWrapPos();
    state.said.script_job.push_back(fmt::format("{}: {}", tr(english), value));
  };
  // A field the script did not report holds ringlab's default, which is not the script's.
  auto reported_row = [&](const char* english, const char* key, const std::string& value) {
    const bool reported = std::ranges::find(t.not_reported, key) == t.not_reported.end();
    row(english, reported ? value : tr("not reported"));
    if (!reported && ImGui::IsItemHovered())
      WrappedTooltip(tr("The script did not report it to watch(): give watch() its sampler, optimizer or loader, "
                        "or pass it: epochs=, seed=, batch_size=, job={\"samples\": N}."));
  };
  reported_row("Learning rate", "lr", fmt::format("{:.3g}", j.lr));
  reported_row("Batch per rank", "batch_size", std::to_string(j.batch_size));
  reported_row("Samples", "samples", std::to_string(j.samples));
  reported_row("Seed", "seed", std::to_string(j.seed));
  if (std::ranges::find(t.not_reported, "epochs") != t.not_reported.end()) {
    reported_row("Epochs", "epochs", "");
  } else {
    row("Epochs", t.epochs_counted ? trf("{} (counted)", j.epochs) : std::to_string(j.epochs));
    if (t.epochs_counted && ImGui::IsItemHovered())
      WrappedTooltip(tr("The script did not pass epochs= to watch(): this is how many epochs its run began."));
  }
  row("Bucket cap KB", j.bucket_cap_kb == -1 ? trf("{} (PyTorch's default)", 25 * 1024) : std::to_string(j.bucket_cap_kb));
}

void draw_job_fields(AppState& state) {
  JobConfig& job = state.job;
  state.said.script_job.clear();
  ImGui::BeginDisabled(state.run.live());
  {
    const char* algorithms[] = {"ring", "native"};
    int algorithm = job.algorithm == "native" ? 1 : 0;
    FormLabel(tr("Algorithm"));
    if (ImGui::Combo("##algorithm", &algorithm, algorithms, 2)) job.algorithm = algorithms[algorithm];
    restart_tooltip(state);
    // A PyTorch script decides its own training, side by side too (the engine then trains the job
    // the script reported): the fields below are the engine's, and the script's stand in their place.
    if (state.torch.runs_next()) {
      draw_script_job(state);
      ImGui::EndDisabled();
      return;
    }
    job_int_field(state, "Bucket cap KB", "bucket_cap", &JobConfig::bucket_cap_kb, 0, 1'048'576,
                  "DDP's bucket_cap_mb, in KB: PyTorch's 25 MiB is 25600 (0 puts it back).", 25 * 1024);
    float lr = static_cast<float>(job.lr);
    FormLabel(tr("Learning rate"));
    const SliderOutcome slid = SliderFloatBeside("##lr", &lr, 0.001f, 1.0f, fmt::format("{:.3f}", lr), ImGuiSliderFlags_Logarithmic);
    if (slid.changed) job.lr = std::max(static_cast<double>(lr), 1e-6);
    // The slider's own hover: the last item is the value written beside it.
    if (slid.hovered)
      WrappedTooltip(state.run.live() ? fixed_while_running()
                                      : tr("SGD's learning rate, 0.001 to 1 here (Ctrl+click to type; a value outside "
                                           "is held to the range). ringlab run --lr takes any positive value, 5 "
                                           "included (the divergence lesson)."));
    job_int_field(state, "Batch per rank", "batch", &JobConfig::batch_size, 1, 1'000'000);
    job_int_field(state, "Samples", "samples", &JobConfig::samples, 1, 100'000'000);
    job_int_field(state, "Seed", "seed", &JobConfig::seed, 0, std::numeric_limits<int64_t>::max());
    job_int_field(state, "Epochs", "epochs", &JobConfig::epochs, 1, 1'000'000);
    job_int_field(state, "First bucket KB", "first_bucket", &JobConfig::first_bucket_kb, 0, 1'048'576,
                  "PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES, in KB: its 1 MiB is 1024 (0 puts it back), which holds the seed's whole model. A few KB here and in the cap split it, from step 2, into buckets that overlap backward.",
                  1024);
  }
  ImGui::EndDisabled();
}

void draw_buttons(AppState& state) {
  const bool live = state.run.live();
  const char* pause = state.run.phase == RunPhase::Paused ? "Resume" : "‖ Pause";
  const ButtonGrid grid = FitButtons({tr("▶ Start"), tr(pause), tr("■ Stop"), tr("Reset")}, 2);
  const ImVec2 size(grid.width, 0);
  // A value the job refused stays in its field, red: Start waits until it is fixed, rather than
  // train with the last valid value the field no longer shows.
  const bool refused = HasRefusedField(state);
  ImGui::BeginDisabled(live || refused);
  if (ImGui::Button(label("▶ Start", "start").c_str(), size)) RequestStart(state);
  ImGui::EndDisabled();
  if (refused && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    Tooltip(tr("A field below holds a value the job refused: fix it (its range is under it) to start."));
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) RequestStart(state);  // greyed, but the press is answered
  }
  grid.place(1);
  const bool script = ScriptRun(state);
  ImGui::BeginDisabled(!live || state.job.world_size < 2 || state.job.algorithm != "ring" || script);
  if (ImGui::Button(label(pause, "pause").c_str(), size)) state.requests.pause_toggle = true;
  const ImVec2 pause_min = ImGui::GetItemRectMin(), pause_max = ImGui::GetItemRectMax();
  state.pause_button_x = (pause_min.x + pause_max.x) / 2, state.pause_button_y = (pause_min.y + pause_max.y) / 2;
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    Tooltip(script ? tr("A PyTorch script is not held at ringlab's gate: Pause holds ringlab's own workers only.")
                   : tr("Pause holds every worker before its next ring step (needs 2+ ranks and the ring algorithm)."));
  grid.place(2);
  ImGui::BeginDisabled(!live);
  if (ImGui::Button(label("■ Stop", "stop").c_str(), size)) state.requests.stop = true;
  ImGui::EndDisabled();
  grid.place(3);
  if (ImGui::Button(label("Reset", "reset").c_str(), size)) RequestReset(state);
  if (ImGui::IsItemHovered()) Tooltip(tr("Stop, forget this run and go back to the scenario's settings."));
}

// The step time's row, in its fullest form and shorter ones for a narrow pane (the fullest
// stays in the tooltip). Empty when there is none to show.
// A step time in whole microseconds, grouped in thousands like the status's other counts.
std::string micros(double us) { return grouped(std::llround(us)); }

// Seconds after Start with no step ended before the status says so: the engine's first step
// ends within milliseconds, a script's after its imports (a few seconds here).
constexpr double kNoStepYetS = 3.0;

// No step at all yet: a PyTorch script still starting (its imports take seconds), or ranks that
// hang before their first step ends (a mismatch, a peer that never came). Said after a few
// seconds, as a stall is: a hung script otherwise shows nothing until its own process group's
// timeout ends it, a minute later by default. Not at the gate, where the class sets the pace.
std::vector<std::string> no_step_yet_forms(const AppState& state) {
  if (state.run.phase != RunPhase::Running || state.gated || state.run.events_queued > 0 ||
      state.run.elapsed_s < kNoStepYetS)
    return {};
  return {trf("no step reported yet, {:.0f} s after Start", state.run.elapsed_s),
          trf("no step yet ({:.0f} s)", state.run.elapsed_s)};
}

std::vector<std::string> pace_forms(const view_model::RunModel& model, const AppState& state) {
  const bool running = state.run.phase == RunPhase::Running;
  if (running && !state.gated && model.live_us_per_step() > 0) {  // paused: no pace to show
    // following again after a stretch at the gate: the last second's pace is real
    const double us = model.live_us_per_step();
    // Unless no step has ended for far longer than a step takes (a rank stalled, a hang): the
    // last second's pace would go on reading as if they trained. The newest step taken in is
    // the newest there is only once the app has read every event that came: behind (a loaded
    // machine, a burst), the quiet is the app's, and the workers' steps wait in the queue.
    const double quiet_s = static_cast<double>(now_ns() - model.last_step_ns()) * 1e-9;
    if (state.run.events_queued == 0 && quiet_s > std::max(2.0, 20 * us * 1e-6))
      return {trf("no step for {:.0f} s (before that ≈ {} µs per step)", quiet_s, micros(us)),
              trf("no step for {:.0f} s", quiet_s)};
    return {trf("≈ {} µs per step (the last second)", micros(us)), trf("≈ {} µs per step", micros(us))};
  }
  // Playing or held, the gate sets the pace: what a step takes says nothing of training then.
  if (running && state.gated) return {tr("no step time while the gate paces the workers"), tr("no step time at the gate")};
  const std::string us = micros(model.us_per_step());
  // Stepped through for a while: the steps the gate never held say how fast it trained (a held
  // step's time holds the ranks' waits for each other to see each release).
  if (state.run.stepped && model.ungated_steps() > 0) {
    const int64_t n = model.ungated_steps();
    const std::string free_us = micros(model.ungated_us_per_step());
    // After a live change the steps counted are the last world's, as the workers count theirs.
    if (model.generations().size() > 1) {
      const view_model::Generation& last = model.generations().back();
      return {trf("{} µs per step over the last world's {} step{} the gate did not hold ({} rank{})", free_us, grouped(n),
                  n == 1 ? "" : "s", last.world_size, last.world_size == 1 ? "" : "s"),
              trf("{} µs per step, ungated steps ({} rank{})", free_us, last.world_size, last.world_size == 1 ? "" : "s")};
    }
    return {trf("{} µs per step over the {} step{} the gate did not hold", free_us, grouped(n), n == 1 ? "" : "s"),
            trf("{} µs per step, ungated steps", free_us)};
  }
  // The gate held every step for the class's Next: their time is the class's, not the workers'.
  if (state.run.stepped)
    return {tr("stepped through: the gate set the pace, so no step time"), tr("stepped through: no step time")};
  // Stopped while paused: the workers ended held, and the figure is rank 0's steps without the pause.
  if (state.run.phase == RunPhase::Stopped && state.run.paused_at_stop && model.us_per_step() > 0)
    return {trf("{} µs per step, the pause left out", us), trf("{} µs per step", us)};
  // One step far slower than the rest (a rank that slept before training, the others waiting in
  // their first all-reduce): the mean alone would describe no step at all.
  if (const std::optional<double> others = model.others_us_per_step();
      others && model.us_per_step() > 0 && model.generations().size() <= 1) {
    const SlowestStep& slow = model.slowest_step();
    const std::string took = format_duration(static_cast<double>(slow.ns));
    return {trf("{} µs per step, but step {} took {} (mean {} µs)", micros(*others), slow.step, took, us),
            trf("{} µs per step, step {}: {}", micros(*others), slow.step, took), trf("{} µs per step", us)};
  }
  if (model.us_per_step() > 0 && model.generations().size() > 1) {
    // The workers time their own steps, and each world after a live change starts its count
    // again: the figure is the last world's alone, and says so.
    const view_model::Generation& last = model.generations().back();
    const std::string backend = last.has_job ? last.job.backend : state.job.backend;
    return {trf("{} µs per step in the last world ({} rank{} on {})", us, last.world_size,
                last.world_size == 1 ? "" : "s", backend),
            trf("{} µs per step ({} rank{})", us, last.world_size, last.world_size == 1 ? "" : "s")};
  }
  if (model.us_per_step() > 0) return {trf("{} µs per step", us)};
  return {};
}

// Whether the next Start's world (its size or backend) is not the scenario's.
bool world_changed(const AppState& state) {
  return state.job.world_size != state.scenario.job.world_size || state.job.backend != state.scenario.job.backend;
}

// Three rows of one line each, the same from Start to the run's end: what the run is doing, how
// far it got, how fast. Their numbers lengthen as the run goes on; the rows do not grow with
// them (FittedLine), so the World size slider under them never moves while a class drags it.
void draw_status_rows(const view_model::RunModel& model, AppState& state) {
  const Palette& p = palette();
  // Before a run, a refused field keeps Start from starting: the status says so, in red, right
  // under Start (a row, not a message that would push the field out of the pane).
  if (!HasRefusedField(state)) state.start_waits_for_field = false;
  const bool not_ready = !state.run.live() && HasRefusedField(state);
  const uint32_t color = state.run.phase == RunPhase::Failed || not_ready ? p.bad
                         : state.run.phase == RunPhase::Running           ? p.ok
                                                                          : p.text_dim;
  // Held between the class's Next presses, the workers are not training on their own.
  const bool at_gate = state.run.phase == RunPhase::Running && state.gated;
  std::vector<std::string> status = {phase_of_run_on_screen(state)};
  if (not_ready) status = {tr("not ready: a field holds a value the job refuses (its reason is under it)"), tr("not ready: fix the red field")};
  if (at_gate && state.step.playing) status = {tr("step-through: Play lets one ring step through at a time"), tr("step-through: playing")};
  else if (at_gate) status = {tr("step-through: held at the gate"), tr("step-through: held")};
  state.said.status = status.front();
  state.said.progress.clear();
  ImGui::PushFont(fonts().bold);
  FittedLine(status, color);
  ImGui::PopFont();
  const float pane_top = ImGui::GetWindowPos().y, pane_bottom = pane_top + ImGui::GetWindowHeight();
  state.said.status_in_view = ImGui::GetItemRectMin().y >= pane_top && ImGui::GetItemRectMax().y <= pane_bottom;
  if (state.run.sequence_length > 1) {
    // Which backend this run of the sequence is on: the controls show what the next Start runs.
    const view_model::Generation* g = model.current_generation();
    const std::string backend = g && g->has_job ? g->job.backend : "";
    const std::string run = backend.empty() ? trf("run {} of {}", state.run.sequence_index + 1, state.run.sequence_length)
                                            : trf("run {} of {} · {}", state.run.sequence_index + 1, state.run.sequence_length, backend);
    SameLineIfFits(ImGui::CalcTextSize(run.c_str()).x);
    ImGui::TextUnformatted(run.c_str());
  }
  // Whose run this is, side by side (the views look the same for both); a script alone is named
  // in the title already.
  if (state.torch.live && state.torch.side_by_side) {
    const std::string name = state.torch.script_name();
    FittedLine({trf("PyTorch script: {}", name), name}, p.text);
  }
  // (Until every rank has a step done: the count beside the epoch is every rank's.)
  if (model.steps_done(state.run.live()) <= 0) {
    const int world = state.job.world_size;
    const char* plural = world == 1 ? "" : "s";
    const JobConfig& was = state.scenario.job;
    // Before any run this row is the job's, and says where it differs from the scenario's (after
    // one, that is said in a row of its own under the world's controls: draw_world_note).
    // A script's world is set here whatever the scenario said: the scenario's count means nothing to it.
    if (state.run.phase == RunPhase::Idle && world_changed(state) && !ScriptRun(state))
      FittedLine({trf("{} rank{} on {} · no step yet · set here: the scenario has {} on {}", world, plural,
                      state.job.backend, was.world_size, was.backend),
                  trf("{} rank{} on {} · set here (scenario: {} on {})", world, plural, state.job.backend,
                      was.world_size, was.backend),
                  trf("{} rank{} · set here (scenario: {})", world, plural, was.world_size),
                  trf("{} rank{} · set here", world, plural)},
                 p.text);
    else
      FittedLine({trf("{} rank{} · no step yet", world, plural)}, p.text_dim);
    // The step time's row is kept from Start on: the controls move once, at the press, not under
    // a hand on its way to them. Before any run the pane keeps the line for its fields (at
    // 1280x720 it decides whether Samples shows without scrolling). Seconds on with no step, it
    // says so.
    const std::vector<std::string> waited = no_step_yet_forms(state);
    state.said.pace = waited.empty() ? "" : waited.front();
    if (!waited.empty()) FittedLine(waited, p.text);
    else if (state.run.phase != RunPhase::Idle) ImGui::NewLine();
    return;
  }
  const int world = model.world_size();
  // A count of the steps done, and the epoch as the course's script prints it (from 1): the
  // ring and the timeline name one step by its index, from 0 ("training step 0" is the first).
  // Both are every rank's while the run goes on, so the count falls inside the epoch beside it.
  const int64_t done = model.steps_done(state.run.live());
  const int epoch = model.followed_epoch(state.run.live()) + 1;  // the Sampler's newest, not a rank ahead of it
  const char* steps = done == 1 ? "" : "s";
  // The shorter forms keep the world size: after a live change it is the only place the status
  // names the world its figures belong to.
  const char* ranks = world == 1 ? "" : "s";
  // Grouped in thousands: read from the back of a room, 40,618 is a number and 40618 a code.
  const std::string n = grouped(done), e = grouped(epoch);
  // A script that gave watch() no sampler and no epochs trains "in epoch 0" throughout: no epoch.
  const std::vector<std::string>& unreported = state.torch.not_reported;
  if (state.torch.live && std::ranges::find(unreported, "epochs") != unreported.end())
    state.said.progress = FittedLine({trf("{} rank{} · {} step{} done", world, ranks, n, steps), trf("{} rank{} · {} step{}", world, ranks, n, steps)}, p.text);
  else
    state.said.progress = FittedLine({trf("{} rank{} · {} step{} done · epoch {}", world, ranks, n, steps, e),
                                      trf("{} rank{} · {} step{} · epoch {}", world, ranks, n, steps, e),
                                      trf("{} rank{} · {} step{}", world, ranks, n, steps)},
                                     p.text);
  const std::vector<std::string> pace = pace_forms(model, state);
  state.said.pace = pace.empty() ? "" : pace.front();
  if (!pace.empty()) FittedLine(pace, p.text);
  else ImGui::NewLine();
}

// The workers sent events faster than the window takes them in (a fast run on MPI): the views
// take the spans and all-reduces of fewer steps (EventFeed), and past that drop the newest.
// One wording for the whole run, whether the feed is thinning at this moment or not (its level
// moves with the backlog, and a notice that changed with it read as three different troubles).
std::string behind_words(const RunStatus& run) {
  if (run.events_lost > 0)
    return trf("The workers sent events faster than the window takes them in: the views left out the details of "
               "some steps, {} events not drawn, and lost {} more; the training is unaffected.",
               grouped(run.events_thinned), grouped(run.events_lost));
  return trf("The workers sent events faster than the window takes them in: the Ring and the Timeline left out "
             "the details of some steps, {} events not drawn, and show the others whole; the training is unaffected.",
             grouped(run.events_thinned));
}

// What happened to the run, under the world's controls: a failure's headline, the controller's
// message, dropped events, the ranks' errors. These come and go with the run, so they sit where
// their lines move nothing a live run lets a hand change.
void draw_run_notices(const view_model::RunModel& model, AppState& state) {
  const Palette& p = palette();
  // A failure's full report is in the failure lab's pane; here its headline, the same words
  // (the same rank) the report and the ring give, or the controller's first line without one.
  const bool failed = state.run.phase == RunPhase::Failed;
  const bool errors_here = !failed && !model.failure().failed && !model.errors().empty();
  const bool behind = state.run.events_lost > 0 || state.run.events_thinned > 0;
  if (!state.run.message.empty() || behind || errors_here) ImGui::Separator();
  if (!state.run.message.empty()) {
    const std::string& m = state.run.message;
    const std::string line = !failed ? m : model.failure().failed ? FailureHeadline(model.failure()) : m.substr(0, m.find('\n'));
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(failed ? p.bad : p.text_dim), "%s", line.c_str());
    ImGui::PopTextWrapPos();
    // A refusal of what the hand just did (World size 1 while paused): in view, or it goes unread.
    if (state.run.reveal_message && ImGui::GetItemRectMax().y > ImGui::GetWindowDrawList()->GetClipRectMax().y)
      ImGui::SetScrollHereY(1.0f);
    state.run.reveal_message = false;
    if (failed && !state.lab.report_open && ImGui::SmallButton(label("Show the report", "show_report").c_str()))
      state.lab.report_open = true;
  }
  // Not an error (a long fast run outpaces a window on a CPU renderer): said calmly, not in red
  // under a class's eyes.
  if (behind) {
    ImGui::PushTextWrapPos(0);
    const std::string words = WordsInLines(behind_words(state.run), ImGui::GetContentRegionAvail().x);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(p.text_dim), "%s", words.c_str());
    ImGui::PopTextWrapPos();
  }
  if (!errors_here) return;  // a failure's errors are in its report
  // Errors of the workers before these (a restart after a failure): what the run recovered from,
  // not what is wrong now.
  const view_model::Generation* now = model.current_generation();
  const bool recovered = now && model.errors_generation() < now->index;
  ImGui::PushTextWrapPos(0);
  if (recovered) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(p.text_dim), "%s", tr("Before the workers were started again:"));
  for (const auto& e : model.errors())
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(recovered ? p.text_dim : p.bad), "%s", e.c_str());
  ImGui::PopTextWrapPos();
}

// The description speaks of the scenario's own world; say so once the class has changed it.
// Before any run, in the status's row of the job's world (draw_status_rows). After one, under
// the world's controls (text above them would move the slider under a dragging hand), in a row
// of its own that is there, one line high, whether or not the world was changed (then it names
// the scenario's world). Either way the
// fields below stay where they were when the slider moves, or a click meant for Epochs lands in
// the field that slid under the pointer; and before a run, at 1280x720, Samples stays in view.
// Under the world, where the scenario puts its ranks on several nodes: how the next run's ranks
// sit on them, or that they go on one node (the nodes dropped without a word read as the app
// forgetting them). Said at the scenario's own world too: a line there only at other worlds
// moved the rows under it as the slider passed, and a click meant for one field hit the next.
void draw_nodes_note(const AppState& state) {
  const int nodes = state.scenario.job.node_count();
  if (nodes < 2) return;
  const std::vector<int>& split = state.job.ranks_per_node;
  const uint32_t dim = palette().text_dim;
  if (split.empty()) {
    FittedLine({trf("On one node: the scenario's {} nodes need a world that is a multiple of {}", nodes, nodes),
                trf("On one node ({} nodes need a multiple of {})", nodes, nodes), tr("On one node")},
               dim);
  } else if (std::adjacent_find(split.begin(), split.end(), std::not_equal_to<>()) == split.end()) {
    FittedLine({trf("{} nodes of {} ranks each, as the scenario splits its own", split.size(), split.front()),
                trf("{} nodes of {} ranks", split.size(), split.front())},
               dim);
  } else {
    FittedLine({trf("{} nodes: {} ranks", split.size(), fmt::format("{}", fmt::join(split, " + ")))}, dim);
  }
}

void draw_world_note(const AppState& state) {
  const JobConfig& was = state.scenario.job;
  const int world = state.job.world_size;
  const char* plural = world == 1 ? "" : "s";
  if (state.torch.runs_next()) {  // the scenario's world means nothing to a script: it runs on this one
    FittedLine({trf("The script runs on {} rank{} on {}", world, plural, state.job.backend),
                trf("{} rank{} on {}", world, plural, state.job.backend)},
               palette().text_dim);
    return;
  }
  if (!world_changed(state))
    FittedLine({trf("The scenario's world: {} rank{} on {}", world, plural, state.job.backend),
                trf("{} rank{} on {}, as the scenario", world, plural, state.job.backend)},
               palette().text_dim);
  else
    FittedLine({trf("Set here: {} rank{} on {} (the scenario has {} on {})", world, plural, state.job.backend,
                    was.world_size, was.backend),
                trf("Set here: {} rank{} on {}", world, plural, state.job.backend)},
               palette().text);
  draw_nodes_note(state);
}

// The world on screen: a live run's own (a slider being dragged has changed nothing yet: the
// change happens when it is let go), else the one the next Start trains.
std::pair<int, std::string> world_on_screen(const view_model::RunModel& model, const AppState& state) {
  const view_model::Generation* g = model.current_generation();
  if (state.run.live() && g && g->has_job) return {g->job.world_size, g->job.backend};
  return {state.job.world_size, state.job.backend};
}

// The world the scenario itself gives what is on screen: the entry of its sequence that runs
// (mpi-vs-gloo's second run is on MPI by the scenario's own design), else its job.
const JobConfig& scenario_world(const AppState& state) {
  const auto& sequence = state.scenario.sequence;
  const size_t i = static_cast<size_t>(std::max(state.run.sequence_index, 0));
  return state.run.live() && i < sequence.size() ? sequence[i] : state.scenario.job;
}

// The scenario's title, once the class has changed its world, with the world on screen:
// "Four ranks on gloo" over a run of 6 ranks would contradict the header. Only a form that wraps
// to as many lines as the title alone is taken, so that the Start button and the World size
// slider under it never move while a hand drags the slider.
std::string title_with_world(const view_model::RunModel& model, const AppState& state, const std::string& title) {
  const auto [world, backend] = world_on_screen(model, state);
  const JobConfig& own = scenario_world(state);
  if (world == own.world_size && backend == own.backend) return title;
  const char* plural = world == 1 ? "" : "s";
  const float wrap = ImGui::GetContentRegionAvail().x;
  const auto lines = [&](const std::string& text) { return ImGui::CalcTextSize(text.c_str(), nullptr, false, wrap).y; };
  std::vector<std::string> forms = {trf("{}, changed here to {} rank{} on {}", title, world, plural, backend),
                                    trf("{} (now {} rank{} on {})", title, world, plural, backend)};
  if (backend == own.backend)  // the shorter forms name the world only
    forms.insert(forms.end(), {trf("{} (now {} rank{})", title, world, plural), trf("{} (now {})", title, world)});
  else  // or the world and the backend, tersely: "Four ranks on gloo (now 2 on mpi)"
    forms.push_back(trf("{} (now {} on {})", title, world, backend));
  for (const std::string& form : forms)
    if (lines(form) <= lines(title)) return form;
  return title;  // the note under the world's controls says it then
}

// The header over the scenario's description. Its words speak of the scenario's own world ("each
// rank gets 64 of the 256 samples"): once another world is on screen the header says which they
// are for, in a form that takes no more lines than the plain header (the same reason as above).
std::string description_header(const view_model::RunModel& model, const AppState& state) {
  const std::string plain = tr("What this scenario shows");
  const int world = scenario_world(state).world_size;
  if (world_on_screen(model, state).first == world) return plain;
  const char* plural = world == 1 ? "" : "s";
  const float wrap = ImGui::GetContentRegionAvail().x - ImGui::GetFrameHeight() - ImGui::GetStyle().ItemInnerSpacing.x;
  ImGui::PushFont(fonts().bold);
  const auto lines = [&](const std::string& text) { return ImGui::CalcTextSize(text.c_str(), nullptr, false, wrap).y; };
  std::string chosen = plain;
  for (const std::string& form : {trf("What this scenario shows at its {} rank{}", world, plural),
                                  trf("What it shows at its {} rank{}", world, plural)})
    if (lines(form) <= lines(plain)) {
      chosen = form;
      break;
    }
  ImGui::PopFont();
  return chosen;
}

// The scenario's title and what it shows; while Start runs a PyTorch script (or its run is still
// going), the script's: the scenario's words speak of ringlab's own job. A script's run that has
// ended stays on screen under the scenario's title once Start runs the engine again, and the
// status line names it (as the engine's run under the script's title).
void draw_title(const view_model::RunModel& model, AppState& state) {
  const TorchState& t = state.torch;
  const bool script = t.runs_next() || (t.live && !t.script().empty() && state.run.live());
  const std::string title = script ? trf("PyTorch script: {}", t.script_name()) : state.scenario.title(language_code());
  const std::string about = !script ? state.scenario.description(language_code())
                            : t.side_by_side
                                ? tr("Your script runs once per rank with torchrun's environment, then ringlab's engine "
                                     "trains the job the script reported on the same world. The Training view draws "
                                     "the two loss curves over each other: where they coincide, the engine ran what "
                                     "PyTorch ran.")
                                : tr("Your script runs once per rank with torchrun's environment. Every view draws what "
                                     "its ringlab_torch watcher reports: its gradient buckets going round the ring, its "
                                     "DistributedSampler's shards, its steps and its losses.");
  ImGui::PushFont(fonts().bold);
  const std::string shown = script ? title : title_with_world(model, state, title);
  state.said.title = shown;
  ImGui::TextWrapped("%s", shown.c_str());
  ImGui::PopFont();
  if (about.empty()) return;
  // Open at first where the pane has room for it beside Start and the World size: at 1.5x text in
  // a 1280x720 window the two were never on screen together (every live change needed a scroll).
  const bool room = ImGui::GetWindowHeight() >= ImGui::GetFontSize() * 18;
  // The scenario's words speak of its own world ("each rank gets 64 of the 256 samples"): the
  // header says which, once another one is on screen.
  const std::string header = script ? tr("What this shows") : description_header(model, state);
  // Text made larger (Ctrl+=) or the window smaller, the open description pushed the status and
  // Start out of sight: it folds once, when the room goes; opened again, it stays open.
  const bool room_went = state.description_had_room && !room;
  state.description_had_room = room;
  if (!WrappedHeader(header.c_str(), "scenario_description", room, room_went)) return;
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(palette().text_dim));
  ImGui::TextWrapped("%s", about.c_str());
  ImGui::PopStyleColor();
}

// A live change restarts the workers, so it waits for the world the person is going to: the
// slider's value when it is let go (not every value it passes), and after clicks on - or +, the
// value once they pause (4 to 8 is four clicks and one restart, not four).
void request_live_world_change(AppState& state, const SteppedOutcome& slid) {
  double& stepped_at = state.world_stepped_at;
  if (!state.run.live()) {
    stepped_at = -1;
    return;
  }
  if (slid.stepped) stepped_at = ImGui::GetTime();
  const bool clicks_paused = stepped_at >= 0 && ImGui::GetTime() - stepped_at >= AppState::kWorldStepPauseS;
  if (slid.released || clicks_paused) {
    state.requests.change_world = true;
    stepped_at = -1;
  }
}

}  // namespace

void SetWorldSize(AppState& state, int world) {
  state.job.world_size = world;
  // The scenario's node split holds for its own world; another world keeps its nodes where its
  // ranks divide evenly over them, and runs on one node otherwise (the world's note says so).
  const std::vector<int>& nodes = state.scenario.job.ranks_per_node;
  state.job.ranks_per_node = world == state.scenario.job.world_size ? nodes : even_node_split(nodes, world);
}

void DrawControlsView(const view_model::RunModel& model, AppState& state) {
  draw_title(model, state);

  draw_buttons(state);
  draw_status_rows(model, state);  // right under the buttons: what Start or Stop just did is seen at once
  ImGui::Separator();

  int world = state.job.world_size;
  // The slider with its - and + and "16" beside it, in a row whose label column is narrower
  // than the other rows' (the label is short): at 1280x720 the slider keeps 83 px of the pane's
  // 240. Under its label only where even that leaves it less than 5 text heights: a row of its
  // own pushed Samples and Epochs out of the idle pane at 1280x720.
  const float world_row_min = ImGui::GetFontSize() * 5 + 3 * ImGui::GetFrameHeight() + ImGui::CalcTextSize("16").x;
  FormLabel(tr("World size"), 0.36f, world_row_min);
  if (state.run.phase == RunPhase::Running) state.controls_moved.saw_world_slider_at(ImGui::GetCursorScreenPos().y);
  const SteppedOutcome slid =
      SliderIntStepped("##world_size", &world, 1, kMaxAppWorldSize, fmt::format("{}", world), fmt::format("{}", kMaxAppWorldSize));
  state.world_slider = {slid.x0, slid.x1, slid.y, slid.minus_x, slid.plus_x};
  if (world != state.job.world_size) SetWorldSize(state, world);
  request_live_world_change(state, slid);
  // Its tip is long, and shown at once it covered the value just set and the "Set here" line
  // under it (and, beside a small pane, the ring's cards): it waits for the pointer to rest on the
  // slider half a second, and not within two seconds of a change.
  if (slid.changed) state.world_changed_at = ImGui::GetTime();
  const bool resting = ImGui::GetCurrentContext()->HoveredIdTimer > 0.5f && ImGui::GetTime() - state.world_changed_at > 2.0;
  if (slid.hovered && resting)
    WrappedTooltip(tr("How many worker processes, 1 to 16 (- and + step by one; Ctrl+click to type, and a value outside "
                      "is held to the range). While training, a change restarts the workers from a checkpoint at the "
                      "next step boundary, once the slider is let go or the clicks on - and + pause."));
  draw_backend_choice(state);
  if (state.run.phase != RunPhase::Idle) draw_world_note(state);
  draw_run_notices(model, state);
  draw_job_fields(state);
  DrawFailureLabControls(model, state);
  DrawTorchScriptControls(state);
}

}  // namespace ringlab::viz
