#include "viz/failure_lab_view.h"

#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <string>
#include <vector>
#include <fmt/core.h>
#include <fmt/format.h>

#include "engine/events/flight_recorder.h"
#include "engine/job/epoch_shape.h"
#include "viz/fault_explanations.h"
#include "viz/fonts.h"
#include "viz/i18n.h"
#include "viz/theme.h"
#include "viz/views.h"
#include "viz/widgets.h"

namespace ringlab::viz {
namespace {

using view_model::FailureDiagnosis;
using view_model::LabFault;
using view_model::RankCause;

bool has_step(LabFault f) {
  return f == LabFault::Kill || f == LabFault::Drop || f == LabFault::Skip || f == LabFault::Extra || f == LabFault::Resize;
}

// Batches each rank takes per epoch (at least one): the most the uneven lab can take away.
int64_t batches_per_epoch(const JobConfig& job) { return std::max<int64_t>(epoch_shape(job).steps, 1); }

void hint(const char* text) {
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) WrappedTooltip(text, 24);
}

// What these faults show is another rank's answer to them: a rank alone trains on unmoved (a
// killed one alone just dies, and the lab's words about its peers fit nothing). Said before
// Start, as `ringlab run` notes it, and in place of the lesson.
const char* one_rank_note(LabFault fault) {
  return fault == LabFault::Kill
             ? tr("With one rank no other rank is left waiting: the run just fails. Set World size to 2 or more to "
                  "see its peers fail after it.")
             : tr("With one rank this lab shows nothing: no other rank waits for it or compares collectives with it. "
                  "Set World size to 2 or more.");
}

void draw_fault_fields(AppState& state) {
  view_model::FailureLabSettings& s = state.lab.settings;
  const int world = std::max(state.job.world_size, 1);
  int fault = static_cast<int>(s.fault);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
  if (ImGui::BeginCombo("##lab_fault", LabFaultTitle(s.fault))) {
    for (LabFault f : view_model::kLabFaults)
      if (ImGui::Selectable(LabFaultTitle(f), static_cast<int>(f) == fault)) s.fault = f;
    ImGui::EndCombo();
  }
  if (s.fault == LabFault::None) return;
  if (world == 1) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().bad), "%s", one_rank_note(s.fault));
    ImGui::PopTextWrapPos();
  }
  s.rank = std::clamp(s.rank, 0, world - 1);
  FormLabel(tr("Faulty rank"));
  SliderIntBeside("##lab_rank", &s.rank, 0, world - 1, fmt::format("{}", s.rank));
  if (has_step(s.fault)) {
    int step = static_cast<int>(std::min<int64_t>(s.step, 1'000'000));
    FormLabel(tr("At step"));
    if (ImGui::InputInt("##lab_step", &step)) s.step = std::clamp(step, 0, 1'000'000);
    hint(tr("The global training step (counted from 0 over all epochs) at which the fault happens."));
    // A fault past the run's last step never happens: say so before Start, not after a clean run.
    const int64_t steps = batches_per_epoch(state.job) * state.job.epochs;
    if (s.step >= steps) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().bad), "%s",
                         trf("This run has {} steps (0 to {}): a fault at step {} never happens.", steps,
                             std::max<int64_t>(steps - 1, 0), s.step)
                             .c_str());
      ImGui::PopTextWrapPos();
    }
  } else if (s.fault == LabFault::Delay) {
    FormLabel(tr("Delay per step"));
    SliderIntBeside("##lab_delay", &s.delay_ms, 1, 500, fmt::format("{} ms", s.delay_ms));
  } else if (s.fault == LabFault::Uneven) {
    const int most = static_cast<int>(std::min<int64_t>(batches_per_epoch(state.job), 1000));
    int batches = static_cast<int>(std::clamp<int64_t>(s.batches, 1, most));
    FormLabel(tr("Fewer batches"));
    if (SliderIntBeside("##lab_batches", &batches, 1, most, fmt::format("{}", batches)).changed) s.batches = batches;
    s.batches = batches;
    hint(tr("Batches per epoch taken away from this rank: its data runs out before the others'."));
    ImGui::Checkbox(label("Join (PyTorch's context manager)", "lab_join").c_str(), &s.join);
  }
  if (s.fault != LabFault::Delay) {
    float timeout = static_cast<float>(s.timeout_s);
    FormLabel(tr("Timeout"));
    if (SliderFloatBeside("##lab_timeout", &timeout, 1.0f, 60.0f, fmt::format("{:.0f} s", timeout)).changed)
      s.timeout_s = std::max(1.0, static_cast<double>(timeout));
    hint(tr("How long a rank waits for a peer before it gives up: a hang ends after this long."));
  }
}

void draw_restarts(const view_model::RunModel& model, AppState& state) {
  FormLabel(tr("Max restarts"));
  if (ImGui::InputInt("##lab_restarts", &state.lab.settings.max_restarts))
    state.lab.settings.max_restarts = std::clamp(state.lab.settings.max_restarts, 0, 5);
  hint(tr("Like torchrun --max-restarts: after a failure the controller starts a new group that resumes from the "
          "last epoch checkpoint."));
  // The run's restarts so far: with all of them used, the next failure ends the run.
  if (state.run.live() && model.restarts() > 0)
    ImGui::TextDisabled("%s", trf("this run has used {} of its {}", model.restarts(), state.run.max_restarts).c_str());
}

void draw_kill_now(const view_model::RunModel& model, AppState& state) {
  const bool live = state.run.live();
  const int world = std::max(1, live && model.world_size() > 0 ? model.world_size() : state.job.world_size);
  const bool mpi = (live ? state.run.live_backend : state.job.backend) == "mpi";
  state.lab.kill_rank = std::clamp(state.lab.kill_rank, 0, world - 1);
  // Apart from the fault above (which the next Start injects): a rank slider each read as one.
  ImGui::Separator();
  ImGui::TextDisabled("%s", state.lab.settings.fault == LabFault::None ? tr("Now, during a run:") : tr("Or now, during a run:"));
  FormLabel(tr("Rank to kill"));
  SliderIntBeside("##kill_rank", &state.lab.kill_rank, 0, world - 1, std::to_string(state.lab.kill_rank));
  ImGui::BeginDisabled(!live || mpi || world < 2);
  ImGui::PushStyleColor(ImGuiCol_Button, ImGui::ColorConvertU32ToFloat4(with_alpha(palette().bad, 0.25f)));
  if (ImGui::Button(label(trf("Kill rank {} now", state.lab.kill_rank).c_str(), "kill_now").c_str(),
                    ImVec2(ImGui::GetContentRegionAvail().x, 0)))
    state.requests.kill_rank = state.lab.kill_rank;
  ImGui::PopStyleColor();
  ImGui::EndDisabled();
  hint(mpi        ? tr("With MPI, mpirun owns the rank processes: use the Kill fault instead.")
       : !live    ? tr("While a run trains: press Start first. A real SIGKILL to this rank's worker process, as if its "
                       "machine lost power.")
       : world < 2 ? tr("A run of one rank has no peer to notice it die: start one with World size 2 or more.")
                   : tr("A real SIGKILL to this rank's worker process, while it trains, as if its machine lost power. "
                        "With max restarts above 0 the group is restarted from the last epoch checkpoint."));
}

// Which restart, and where it resumed: the end of the newest epoch checkpoint, as `ringlab run`
// says it.
std::string restart_words(const FailureDiagnosis& f) {
  if (f.restart_epoch == 0 && f.restart_step == 0)
    return trf("Restarted ({}): from the start (no epoch had ended)", f.restart_number);
  return trf("Restarted ({}): from the end of epoch {} (step {})", f.restart_number, grouped(f.restart_epoch),
             grouped(f.restart_step));
}

// One row per rank: what happened to it and where it was.
void draw_rank_table(const FailureDiagnosis& f) {
  const Palette& p = palette();
  const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##failure_ranks", 4, flags)) return;
  ImGui::TableSetupColumn(tr("Rank"), ImGuiTableColumnFlags_WidthFixed,
                          std::max(ImGui::GetFontSize() * 2.6f, ImGui::CalcTextSize(tr("Rank")).x));
  ImGui::TableSetupColumn(tr("What happened"), ImGuiTableColumnFlags_WidthStretch, 3.0f);
  ImGui::TableSetupColumn(tr("Where it was"), ImGuiTableColumnFlags_WidthStretch, 2.4f);
  // As wide as the longest step: a run of a million epochs has seven-digit steps.
  float step_w = std::max(ImGui::GetFontSize() * 2.6f, ImGui::CalcTextSize(tr("Step")).x);
  for (const view_model::RankDiagnosis& r : f.ranks)
    if (r.step >= 0) step_w = std::max(step_w, ImGui::CalcTextSize(std::to_string(r.step).c_str()).x);
  ImGui::TableSetupColumn(tr("Step"), ImGuiTableColumnFlags_WidthFixed, step_w);
  ImGui::TableHeadersRow();
  for (const view_model::RankDiagnosis& r : f.ranks) {
    ImGui::TableNextRow();
    const uint32_t color = f.is_culprit(r.rank) ? p.bad : r.cause == RankCause::Waiting ? p.text : p.text_dim;
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(color));
    ImGui::TableNextColumn();
    if (f.is_culprit(r.rank)) ImGui::PushFont(fonts().bold);
    ImGui::Text("%d", r.rank);
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", RankOutcome(r, f).c_str());
    if (f.is_culprit(r.rank)) ImGui::PopFont();
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", CollectivePosition(r, f.world_size).c_str());
    ImGui::TableNextColumn();
    if (r.step >= 0) ImGui::Text("%lld", static_cast<long long>(r.step));
    ImGui::PopStyleColor();
  }
  ImGui::EndTable();
}

std::string rank_list(const std::vector<int>& ranks) {
  return ranks.empty() ? std::string(tr("none")) : fmt::format("{}", fmt::join(ranks, ", "));
}

void draw_evidence(const FailureDiagnosis& f) {
  if (f.stuck_collective >= 0) {
    // "Missing" from the collective the others wait in: behind it, or already past it (a rank
    // that finished it before the failure is not what the others wait for).
    std::vector<int> missing, past;
    for (int r : f.missing) {
      const view_model::RankDiagnosis* d = f.rank(r);
      const bool finished = d && (d->collective > f.stuck_collective || (d->collective == f.stuck_collective && d->collective_done));
      (finished ? past : missing).push_back(r);
    }
    const std::string op = f.stuck_op == "allreduce" ? "all-reduce" : f.stuck_op;
    std::string line =
        f.stuck_from_last_reports
            ? trf("The ranks' last reports: {} #{}: waiting in it: {}; missing from it: {}", op, f.stuck_collective,
                  rank_list(f.waiting), rank_list(missing))
            : trf("Flight recorders: {} #{}: waiting in it: {}; missing from it: {}", op, f.stuck_collective,
                  rank_list(f.waiting), rank_list(missing));
    if (!past.empty()) line += "; " + trf("already past it: {}", rank_list(past));
    ImGui::TextWrapped("%s", line.c_str());
  }
  if (f.mismatch) {
    const view_model::FingerprintMismatch& m = *f.mismatch;
    ImFont* mono = fonts().mono;
    if (m.culprit >= 0) {
      ImGui::TextUnformatted(tr("Fingerprint the other ranks expected:"));
      ImGui::PushFont(mono);
      ImGui::TextWrapped("  %s", FingerprintText(m.expected).c_str());
      ImGui::PopFont();
      ImGui::TextUnformatted(trf("Fingerprint rank {} called:", m.culprit).c_str());
      ImGui::PushFont(mono);
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().bad), "  %s", FingerprintText(m.actual).c_str());
      ImGui::PopTextWrapPos();
      ImGui::PopFont();
    } else {
      ImGui::TextWrapped("%s", trf("Rank {} called {}; rank {} called {}", m.reporter, FingerprintText(m.reporter_fingerprint),
                                   m.neighbour, FingerprintText(m.neighbour_fingerprint))
                                   .c_str());
    }
  }
  // A culprit that ended without a word raised no error: the first one is a peer's, left without it.
  const bool echo = !f.culprits.empty() && view_model::ended_silently(f.ranks[f.culprits.front()].cause);
  if (!f.first_error.empty() && echo)
    ImGui::TextWrapped("%s", trf("First error, from a rank left without rank {}: {}", f.culprits.front(), f.first_error).c_str());
  else if (!f.first_error.empty())
    ImGui::TextWrapped("%s", trf("First error: {}", f.first_error).c_str());
}

void draw_failure(const FailureDiagnosis& f, const char* title) {
  ImGui::PushFont(fonts().bold);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().bad), "%s", title);
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(FailureHeadline(f).c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopFont();
  draw_rank_table(f);
  draw_evidence(f);
}

// `from_button`: the lesson of the app's kill button, whose shell line is the nearest planned kill.
void draw_lesson(const view_model::FailureLabSettings& s, AppState& state, int world, bool from_button) {
  ImGui::PushFont(fonts().bold);
  ImGui::TextUnformatted(trf("Why · {}", LabFaultTitle(s.fault)).c_str());
  ImGui::PopFont();
  if (world == 1) {  // the lesson's words are about the rank's peers
    ImGui::TextWrapped("%s", one_rank_note(s.fault));
    return;
  }
  ImGui::TextWrapped("%s", LabLesson(s, world).c_str());
  const std::string restart = LabRestartLesson(s, world);
  if (!restart.empty()) ImGui::TextWrapped("%s", restart.c_str());
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("%s", tr(from_button ? "The nearest run from a shell (a planned kill fires as its step begins; the "
                                             "button's landed wherever the rank was in it):"
                                           : "The same run from a shell:"));
  ImGui::PopTextWrapPos();
  ImGui::PushFont(fonts().mono);
  state.said.lab_command = view_model::lab_command_line(s, state.job);
  ImGui::TextWrapped("%s", state.said.lab_command.c_str());
  ImGui::PopFont();
  if (HasRefusedField(state)) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().bad), "%s",
                       tr("A field above holds a value the job refused: this command would run with its last valid value."));
    ImGui::PopTextWrapPos();
  }
}

// The controller's report as `ringlab run` prints it. Its prose lines (the first error, with the
// library's file and the peer's address) wrap at the pane's edge: a sideways scrollbar below the
// fold hid them. The flight recorder's table keeps its columns, in a strip that scrolls sideways.
void draw_controller_report(const std::string& report) {
  std::vector<std::string> lines;
  for (size_t at = 0; at <= report.size();) {
    const size_t end = std::min(report.find('\n', at), report.size());
    lines.push_back(report.substr(at, end - at));
    at = end + 1;
  }
  const auto table_row = [](const std::string& l) {
    return l.rfind("  rank ", 0) == 0 || (l.size() > 2 && l.rfind("  ", 0) == 0 && std::isdigit(static_cast<unsigned char>(l[2])));
  };
  ImGui::PushTextWrapPos(0);
  for (size_t i = 0; i < lines.size(); ++i) {
    const bool table = i > 0 && lines[i - 1] == kFlightReportTitle;
    if (!table) {
      ImGui::TextUnformatted(lines[i].c_str());
      continue;
    }
    std::string rows;
    for (; i < lines.size() && table_row(lines[i]); ++i) rows += lines[i] + "\n";
    --i;
    rows.pop_back();
    const float height = ImGui::CalcTextSize(rows.c_str()).y + ImGui::GetStyle().ScrollbarSize +
                         ImGui::GetStyle().WindowPadding.y;
    // Named by its rows: a new run's table opens at its left edge, not where the last one was left.
    ImGui::BeginChild(("flight_table_" + std::to_string(std::hash<std::string>{}(rows))).c_str(), ImVec2(0, height), false,
                      ImGuiWindowFlags_HorizontalScrollbar);
    ImGui::TextUnformatted(rows.c_str());
    ImGui::EndChild();
  }
  ImGui::PopTextWrapPos();
}

bool killed_from_app(const FailureDiagnosis& f) {
  return !f.culprits.empty() && f.ranks[f.culprits.front()].fault_from_controller;
}

// The app's kill button taught as the kill fault it equals: the same rank, at the step it was in,
// with the timeout the killed run had (the lab's own is for the faults it arms).
view_model::FailureLabSettings as_lab_kill(const FailureDiagnosis& f, view_model::FailureLabSettings s, double timeout_s) {
  const view_model::RankDiagnosis& r = f.ranks[f.culprits.front()];
  s.fault = LabFault::Kill;
  s.rank = r.rank;
  s.step = std::max<int64_t>(r.step, 0);
  s.timeout_s = timeout_s;
  return s;
}

// A fault the next Start injects: one is chosen, and ringlab's own workers run (a script's faults
// are in its own code).
bool armed_fault(const AppState& state) { return state.lab.settings.fault != LabFault::None && !ScriptRun(state); }

// Whether the armed fault is the one the shown run ran with (same fault, rank and step).
bool armed_fault_ran(const view_model::RunModel& model, const view_model::FailureLabSettings& armed) {
  const view_model::Generation* g = model.current_generation();
  if (!g || !g->has_job) return false;
  const view_model::FailureLabSettings ran = view_model::lab_from_job(g->job);
  return ran.fault == armed.fault && ran.rank == armed.rank && ran.step == armed.step;
}

// A straggler's run ends well, and its only trace is in the step time: said beside the lesson, as
// `ringlab run --fault delay:...` says it, or the run read as a plain one under "every step costs
// the slowest rank's time".
void draw_straggler_outcome(const view_model::RunModel& model, const view_model::FailureLabSettings& lab,
                            std::string& said) {
  if (lab.fault != LabFault::Delay || !armed_fault_ran(model, lab) || model.us_per_step() <= 0) return;
  const double us = model.us_per_step(), delay_us = lab.delay_ms * 1000.0;
  ImGui::PushFont(fonts().bold);
  ImGui::PushTextWrapPos(0);
  said = trf("This run: {} µs per step, {} µs of which is rank {}'s delay: every rank's step waits for it",
             grouped(std::llround(us)), grouped(std::llround(std::min(delay_us, us))), lab.rank);
  ImGui::TextUnformatted(said.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopFont();
}

void draw_lab_buttons(const view_model::RunModel& model, AppState& state) {
  const bool live = state.run.live();
  if (armed_fault(state)) {
    ImGui::BeginDisabled(HasRefusedField(state));  // as the Start above: fix the field first
    if (ImGui::Button(label(live ? "↻ Restart with this fault" : "▶ Start with this fault", "lab_start").c_str(),
                      ImVec2(ImGui::GetContentRegionAvail().x, 0))) {
      RequestStart(state, live);
      state.lab.report_open = true;
    }
    ImGui::EndDisabled();
  }
  draw_kill_now(model, state);
  if (!state.lab.report_open && (armed_fault(state) || model.failure().failed) &&
      ImGui::SmallButton(label("Show the explanation", "lab_show").c_str()))
    state.lab.report_open = true;
}

}  // namespace

void DrawFailureLabControls(const view_model::RunModel& model, AppState& state) {
  view_model::FailureLabSettings& s = state.lab.settings;
  const bool open = WrappedHeader(tr("Failure lab"), "failure_lab", s.fault != LabFault::None);
  if (!open && armed_fault(state)) {  // the fault the next Start injects, in words that wrap
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().bad), "%s", trf("Armed: {}", LabFaultTitle(s.fault)).c_str());
    ImGui::PopTextWrapPos();
  }
  // A PyTorch script's faults are in its own code: the lab's are injected by ringlab's workers, and
  // a script started "with" one trained as if nothing was chosen, under the lab's lesson of it.
  const bool script = ScriptRun(state);
  if (open && script) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().text_dim), "%s",
                       tr("A PyTorch script runs: the lab's faults are injected by ringlab's own workers, not into a "
                          "script (a script's fault is in its own code). Kill rank now works on any run."));
    ImGui::PopTextWrapPos();
  }
  if (open) {
    ImGui::BeginDisabled(script);
    draw_fault_fields(state);
    draw_restarts(model, state);
    ImGui::EndDisabled();
  }
  // The job follows the lab, so Start (here or above) runs with the fault; the scenario's own
  // timeout comes back when the lab has no fault.
  view_model::FailureLabSettings applied = s;
  if (script) applied.fault = LabFault::None;
  view_model::apply_lab(applied, state.scenario.job.timeout_s, state.job);
  if (!open) return;
  draw_lab_buttons(model, state);
}

bool FailureLabPaneShown(const view_model::RunModel& model, AppState& state) {
  const bool failed = model.failure().failed;
  state.lab.newly_shown = failed && !state.lab.was_failed;
  if (state.lab.newly_shown) state.lab.report_open = true;  // a new failure is always shown
  state.lab.was_failed = failed;
  state.said.lab_command.clear();  // said again by the pane when it is drawn
  state.said.lab_outcome.clear();
  const bool armed = armed_fault(state);
  return state.lab.report_open && (failed || armed || model.restarted_failure().has_value());
}

void DrawFailureLabPane(const view_model::RunModel& model, AppState& state) {
  const FailureDiagnosis& f = model.failure();
  const auto& restarted = model.restarted_failure();
  const bool failed = f.failed;
  const bool armed = armed_fault(state);
  const int world = f.world_size > 0 ? f.world_size : std::max(state.job.world_size, 1);
  ImGui::BeginChild("failure_lab_text", ImVec2(0, 0), false);
  if (failed) draw_failure(f, tr("The run failed"));
  // A script's own collectives outside DDP (a dist.all_reduce of its own) are not reported: a rank
  // named missing may be inside one, as the second walk's extra all_reduce was.
  if (failed && state.torch.live && !f.missing.empty())
    DimWrapped(tr("The script's own collectives outside DDP (a dist.all_reduce or barrier of its own) are not "
                  "reported to ringlab: a rank named missing may be waiting inside one."));
  // Right under the failure it reports: below a fault armed for the next Start, it read as the
  // output of that fault's shell line.
  if (failed && !state.run.message.empty() &&
      ImGui::CollapsingHeader(label("The controller's report (as ringlab run prints it)", "controller_report").c_str())) {
    ImGui::PushFont(fonts().mono);
    draw_controller_report(state.run.message);
    ImGui::PopFont();
  }
  if (restarted) {
    if (failed) ImGui::Separator();
    ImGui::PushFont(fonts().bold);
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().ok), "%s", restart_words(*restarted).c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
    draw_failure(*restarted, tr("The failure it recovered from"));
  }
  if (armed || killed_from_app(f)) {
    if (failed || restarted) ImGui::Separator();
    // A fault chosen after the run ended is the next Start's, not this report's: say which.
    if ((failed || restarted) && armed && !armed_fault_ran(model, state.lab.settings)) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().bad), "%s",
                         trf("Armed for the next Start (the report above is the last run's): {}",
                             LabFaultTitle(state.lab.settings.fault))
                             .c_str());
      ImGui::PopTextWrapPos();
    }
    draw_lesson(armed ? state.lab.settings : as_lab_kill(f, state.lab.settings, state.job.timeout_s), state, world, !armed);
    if (armed && !failed) draw_straggler_outcome(model, state.lab.settings, state.said.lab_outcome);
  }
  ImGui::EndChild();
}

}  // namespace ringlab::viz
