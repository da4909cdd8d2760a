// Built only with the desktop app.
#ifdef RINGLAB_HAVE_GUI
#include "app/gui_session.h"

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/view_model/failure_lab.h"
#include "engine/job/scenario.h"
#include "app/app_scenario.h"
#include "app/torch_script.h"
#include "viz/i18n.h"
#include "viz/views.h"

namespace ringlab::app {
namespace {

// Events are taken in within a time budget per frame, so a flood never stalls the frame; when
// a backlog builds up (the machine is busy) the budget grows until it is worked off.
constexpr int64_t kIngestBudgetNs = 6'000'000;
constexpr int64_t kBacklogBudgetNs = 30'000'000;
constexpr size_t kBacklog = 20'000;
constexpr size_t kIngestBatch = 4096;
constexpr double kLetGoNoteS = 30.0;
constexpr size_t kMaxOverlays = 6;
constexpr int64_t kTrimEveryNs = 2'000'000'000;
// How long Stop waits for the workers to stop together at a step boundary before terminating them.
constexpr std::chrono::milliseconds kStopPatience{2000};

double seconds_now() { return now_ns() * 1e-9; }

}  // namespace

// At most 400k events wait for the frame loop (a busy machine's backlog); the models keep what
// the views draw. Together they stay within a few hundred MB however long the run.
RunSession::RunSession(viz::AppState& state) : state_(state), feed_(400'000) {}

RunSession::~RunSession() {
  if (controller_) controller_->request_stop();
  controller_.reset();  // joins the monitor, which reaps every worker
}

bool RunSession::run_over() const {
  return state_.run.phase != viz::RunPhase::Running && state_.run.phase != viz::RunPhase::Paused;
}

void RunSession::keep_as_overlay() {
  if (model_.loss().empty()) return;
  state_.overlays.push_back(model_.loss());
  ++state_.overlays_kept;
  // A PyTorch script's run is named as such: the overlay is what the engine's run is compared to.
  if (state_.torch.live) {
    state_.overlays.back().label = fmt::format("PyTorch · {}", state_.torch.script_name());
    state_.overlays.back().job.reset();
  }
  if (state_.overlays.size() > kMaxOverlays) state_.overlays.erase(state_.overlays.begin());
}

// A scenario's sequence (e.g. the same job on gloo, then on MPI) runs with whatever the controls
// changed since, each run differing from the controls only where the scenario's runs differ.
std::vector<JobConfig> runs_to_make(const viz::AppState& state) {
  if (state.scenario.sequence.empty()) return {state.job};
  const nlohmann::json base = state.scenario.job;
  std::vector<JobConfig> runs;
  for (const JobConfig& entry : state.scenario.sequence) {
    nlohmann::json run = state.job;
    const nlohmann::json differs = entry;
    for (const auto& [key, value] : differs.items())
      if (base.at(key) != value) run[key] = value;
    runs.push_back(run.get<JobConfig>());
  }
  return runs;
}

// `job` with what `script` trained (model, data, sampler, optimizer, epochs): how the engine shows
// the run (its all-reduce algorithm, tracing, checks, faults, timeout) stays the app's.
JobConfig with_training_of(JobConfig job, const JobConfig& script) {
  const std::string algorithm = job.algorithm, trace_level = job.trace_level;
  const bool check = job.check_collectives;
  const std::vector<std::string> faults = job.faults;
  const double timeout = job.timeout_s;
  job = script;
  job.algorithm = algorithm;
  job.trace_level = trace_level;
  job.check_collectives = check;
  job.faults = faults;
  job.timeout_s = timeout;
  return job;
}

// The PyTorch script side by side: its run, then the engine's of the same job; else the script
// alone, or the scenario's runs on the engine.
std::vector<RunSession::PlannedRun> RunSession::plan_runs() const {
  const viz::TorchState& t = state_.torch;
  if (!t.script().empty() && t.side_by_side) return {{state_.job, true}, {state_.job, false}};
  if (!t.script().empty() && t.use) return {{state_.job, true}};
  std::vector<PlannedRun> runs;
  for (const JobConfig& job : runs_to_make(state_)) runs.push_back({job, false});
  return runs;
}

void RunSession::start() {
  sequence_ = plan_runs();
  state_.run.sequence_length = static_cast<int>(sequence_.size());
  state_.run.sequence_index = 0;
  PlannedRun first = sequence_.front();
  sequence_.erase(sequence_.begin());
  launch(first);
}

void RunSession::launch(const PlannedRun& run) {
  const JobConfig& job = run.job;
  if (controller_) {  // the previous run is over (or stopping): reap it before starting again
    controller_->request_stop();
    controller_.reset();
  }
  keep_as_overlay();
  feed_.discard_queued();
  model_.clear();
  view_model::begin_run(state_.step);
  // Replay scrubs a run already recorded: a new one is followed live (Replay can be chosen again
  // during it). Kept on Replay, it scrubbed a copy of the new run's first few all-reduces.
  if (state_.step.mode == viz::RingMode::Replay) {
    state_.step.mode = viz::RingMode::Follow;
    state_.step.playing = true;
  }
  state_.replay_log.reset();
  state_.timeline = {};  // a view pinned in the last run's time would show the new one empty
  state_.controls_moved = {};
  state_.run.message.clear();
  state_.run.step_at_stop = -1;
  state_.run.paused_at_stop = state_.run.gated_at_stop = false;
  state_.run.hung_for_ns_at_stop = state_.run.hung_until_rel_ns = 0;
  stopping_ = false;
  switch_from_generation_ = -1;
  switch_changes_before_ = 0;
  bool gate_dropped_for_script = false;
  try {
    job.validate();
    require_backend(job.backend);
    ControllerOptions options;
    options.job = job;
    // A rank out of data without Join would meet the others' step vote, not their next
    // all-reduce as in PyTorch: such runs go without votes, as `ringlab run` starts them.
    plain_workers_ = !stop_votes_fit(job);
    options.interactive = !plain_workers_;
    options.gated = state_.gated;
    options.max_restarts = state_.lab.settings.max_restarts;
    options.keep_history = false;  // the views draw from the events; no report is written here
    state_.torch.live = run.torch;  // before the script is looked for: a missing one is its failure
    if (run.torch) {
      options.torch = resolve_torch_script(state_.torch.script(), state_.torch.args);
      // The Algorithm control: "ring" draws PyTorch's own tensors going round the ring.
      options.torch.teaching = job.algorithm == "ring";
      options.interactive = false;  // the script neither votes at step boundaries nor waits at the gate
      options.gated = false;
      options.max_restarts = 0;
    }
    // Chosen before a script's Start (or by --gated), step-through would show a gate nobody waits at.
    if (run.torch && state_.step.mode == viz::RingMode::Gated) {
      viz::SetRingMode(model_, state_, viz::RingMode::Follow);
      state_.gated = false;
      gate_dropped_for_script = true;
    }
    state_.run.max_restarts = options.max_restarts;
    controller_ = std::make_unique<Controller>(options, feed_);
    controller_->start();
  } catch (const Error& e) {
    controller_.reset();
    state_.run.phase = viz::RunPhase::Failed;
    state_.run.message = e.what();
    return;
  }
  state_.run.phase = viz::RunPhase::Running;
  if (gate_dropped_for_script)
    state_.run.message = viz::tr("A PyTorch script is not held at ringlab's gate: the ring follows it live.");
  state_.run.stepped = state_.gated && !run.torch;
  state_.run.live_world_size = job.world_size;
  state_.run.live_backend = job.backend;
  started_at_s_ = seconds_now();
}

void RunSession::stop(StopCause cause) {
  if (!controller_ || run_over()) return;
  stopping_ = true;
  state_.run.step_at_stop = model_.latest_step();
  state_.run.paused_at_stop = state_.run.phase == viz::RunPhase::Paused;
  state_.run.gated_at_stop = state_.gated;
  if (viz::RunHangs(state_)) {
    state_.run.hung_for_ns_at_stop = viz::RunSilentNs(state_);
    state_.run.hung_until_rel_ns = model_.timeline().latest_ns() + state_.run.hung_for_ns_at_stop;
  }
  sequence_.clear();
  // The workers stop together at their next step boundary, as Ctrl-C stops `ringlab run`, so
  // that every rank's last events reach the views (terminated at once, the ranks heard from
  // last lost their last milliseconds: the sampler's last epoch and the timeline's end showed
  // them missing). Held at the gate (stepped through, or paused) they have sent all they did:
  // terminated at once, the run stops where the screen shows it held. Let go to the next step
  // boundary, the count moved on by the step they were held in, under a Stop pressed to end it.
  const bool held = state_.gated || state_.run.phase == viz::RunPhase::Paused;
  const auto patience = held ? std::chrono::milliseconds(0) : kStopPatience;
  controller_->request_stop(cause, patience);
}

void RunSession::finish(const RunResult& result) {
  model_.note_exits(result.exits);  // names the signal a rank died of, for the highlight
  // A change whose new world never took a step (stopped while it waited at the gate) lands no
  // more: its "started, its steps held at the step-through gate" stood under "stopped by you".
  switch_from_generation_ = -1;
  // A Stop pressed as the run was ending (or while its workers were starting, for a run shorter
  // than their first look at it) can reach them after they trained their last step: each reports
  // "done", every process exits cleanly, and the run finished.
  const bool stop_came_too_late =
      stopping_ && model_.trained_to_the_end() &&
      std::all_of(result.exits.begin(), result.exits.end(), [](const RankExit& e) { return e.ok(); });
  if (stopping_ && !stop_came_too_late) {
    state_.run.phase = viz::RunPhase::Stopped;
    state_.run.message.clear();
  } else if (result.ok || stop_came_too_late) {
    state_.run.phase = viz::RunPhase::Finished;
    // Why it ended so soon stays said, in the past: "Replay does not hold the workers" read as
    // advice about a run that is over once the class chose Follow live after it.
    if (state_.run.message == let_go_note_ && !let_go_note_.empty())
      state_.run.message = let_go_note_ = let_go_by_replay_
                                              ? viz::tr("Replay let go of the gate: the workers trained on to the end at full speed.")
                                              : viz::tr("Let go of the gate: the workers trained on to the end at full speed.");
    else
      state_.run.message.clear();
  } else {
    state_.run.phase = viz::RunPhase::Failed;
    state_.run.message = result.failure;
  }
  if (result.ok && !sequence_.empty()) {
    PlannedRun next = sequence_.front();
    sequence_.erase(sequence_.begin());
    ++state_.run.sequence_index;
    // Side by side, the engine runs the job the script said it ran (its RunBegin): the script is
    // the reference, whatever the controls said, and the two curves can only coincide on one job.
    const view_model::Generation* ran = model_.current_generation();
    if (state_.torch.live && !next.torch && ran && ran->has_job) {
      next.job = with_training_of(next.job, ran->job);
      // A script that did not tell watch() its epochs announced JobConfig's 4: the run's result
      // counts the epochs it trained in, and the engine trains as many.
      if (!ran->epochs_announced) next.job.epochs = std::max(result.job.epochs, 1);
    }
    launch(next);
  }
}

// A script's run names its training in its RunBegin, and its epochs only if the script passed
// them to watch(): otherwise the count is the epochs it began.
void RunSession::note_script_job() {
  const view_model::Generation* g = model_.current_generation();
  if (!state_.torch.live || !g || !g->has_job) return;
  state_.torch.announced = g->job;
  state_.torch.announced_by = state_.torch.script();
  state_.torch.epochs_counted = !g->epochs_announced;
  state_.torch.not_reported = g->unreported;
  if (g->epochs_seen) std::erase(state_.torch.not_reported, std::string("epochs"));
  if (!g->epochs_announced) state_.torch.announced->epochs = std::max(model_.latest_epoch() + 1, 0);
}

// A timeline held still keeps what it shows while new spans push old ones out; Replay during a
// live run holds the time of every all-reduce its copy of the log can go to, so that the
// timeline still has each one's spans when the slider or Previous gets there.
void RunSession::hold_timeline() {
  const viz::TimelineViewState& tv = state_.timeline;
  int64_t t0 = static_cast<int64_t>((tv.drawn_end_ms - tv.drawn_window_ms) * 1e6);
  int64_t t1 = static_cast<int64_t>(tv.drawn_end_ms * 1e6);
  if (tv.follow) t0 = 0, t1 = -1;
  const view_model::CollectiveLog* replayed = state_.step.mode == viz::RingMode::Replay ? state_.replay_log.get() : nullptr;
  if (replayed && replayed->size() > 0) {
    const int64_t origin = model_.timeline().origin_ns();
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (const auto* record : {&replayed->at(0), &replayed->at(replayed->size() - 1)})
      for (const auto& rank : record->ranks) {
        if (rank.began) first = std::min(first, rank.t_begin_ns - origin), last = std::max(last, rank.t_begin_ns - origin);
        if (rank.ended) first = std::min(first, rank.t_end_ns - origin), last = std::max(last, rank.t_end_ns - origin);
      }
    const bool held = t0 <= t1;
    const int64_t u0 = held ? std::min(t0, first) : first, u1 = held ? std::max(t1, last) : last;
    // The timeline spares a held window of at most half a lane's spans (a copy of 512 all-reduces
    // of a wide world can hold more): then only what is on screen, as without Replay.
    if (first <= last && model_.timeline().most_spans_within(u0, u1) <= model_.timeline().max_spans_per_lane() / 2)
      t0 = u0, t1 = u1;
  }
  model_.hold_timeline_window(t0, t1);
}

void RunSession::update() {
  const int64_t deadline = now_ns() + (feed_.queued() > kBacklog ? kBacklogBudgetNs : kIngestBudgetNs);
  const int64_t timeline_was = model_.timeline().latest_ns();
  // A timeline held still keeps what it shows while new spans push old ones out.
  hold_timeline();
  feed_.keep_every_step(state_.gated);
  do {
    batch_.clear();
    if (feed_.drain(batch_, kIngestBatch) == 0) break;
    for (const Event& e : batch_) model_.consume(e);
  } while (now_ns() < deadline);
  if (model_.timeline().latest_ns() != timeline_was) state_.run.timeline_heard_at_ns = now_ns();
  if (!run_over()) state_.run.elapsed_s = seconds_now() - started_at_s_;
  // The note on letting the gate go explains a run that then ended at once; one still training
  // half a minute later needs it no more (it stayed under the controls for as long as the run).
  if (!run_over() && !let_go_note_.empty() && state_.run.message == let_go_note_ && seconds_now() - let_go_at_s_ > kLetGoNoteS) {
    state_.run.message.clear();
    let_go_note_.clear();
  }
  note_switch_landed();
  note_script_job();
  state_.run.events_lost = feed_.overflowed();
  state_.run.events_thinned = feed_.thinned();
  state_.run.events_queued = feed_.queued();
  // Events are allocated on the event server's threads and freed on this one; glibc keeps the
  // freed pages in those threads' arenas, so a long run's memory would creep up. Hand them back.
  if (now_ns() - last_trim_ns_ > kTrimEveryNs) {
    malloc_trim(0);
    last_trim_ns_ = now_ns();
  }
  // The run is over once the controller says so and its last events are in.
  if (controller_ && !run_over() && feed_.queued() == 0)
    if (std::optional<RunResult> result = controller_->poll()) {
      finish(*result);
      if (start_when_stopped_ && run_over()) start();
      start_when_stopped_ = false;
    }
}

// Once the new world's workers report, the status says where the change landed instead of
// "switching" for the rest of the run.
void RunSession::note_switch_landed() {
  const view_model::Generation* now = model_.current_generation();
  if (switch_from_generation_ < 0 || !now || now->index <= switch_from_generation_) return;
  const auto& changes = model_.loss().changes;
  // Its first step has not been reported yet: the last change marked is an earlier one's. Paused,
  // the new world has started and waits at the gate for Resume: "switching" would say it had not.
  // The old world first finished the step it was held in (a checkpoint needs a step boundary):
  // the count moved by one while paused, and the message says why.
  if (changes.size() <= switch_changes_before_) {
    // A refusal said meanwhile (a further change to one rank, while paused) stays until Resume:
    // written over every frame, the change was refused without a word.
    const bool refusal_shown = !refusal_.empty() && state_.run.message == refusal_;
    if (state_.run.phase == viz::RunPhase::Paused && now->has_job && !refusal_shown) {
      // The old world finished the step it was held in only if it was in one (a world changed
      // again before its first step was not).
      const int64_t done = model_.latest_step() + 1;
      state_.run.message =
          model_.latest_step() > switch_step_before_
              ? viz::trf("{} rank{}, {}: started after {} step{} (the step the ranks were held in was finished first), "
                         "held at the gate until you resume",
                         now->world_size, now->world_size == 1 ? "" : "s", now->job.backend, viz::grouped(done),
                         done == 1 ? "" : "s")
              : viz::trf("{} rank{}, {}: started after {} step{}, held at the gate until you resume", now->world_size,
                         now->world_size == 1 ? "" : "s", now->job.backend, viz::grouped(done), done == 1 ? "" : "s");
    } else if (state_.gated && now->has_job && !refusal_shown) {
      // Stepped through, the new world's first step comes only as the class steps it: "switching"
      // said the change had not happened while its ring was on screen.
      state_.run.message = viz::trf("{} rank{}, {}: started, its steps held at the step-through gate", now->world_size,
                                    now->world_size == 1 ? "" : "s", now->job.backend);
    }
    return;
  }
  const view_model::WorldChange& c = changes.back();
  // The change sits half-way between the old world's last step and the new one's first, which it names.
  state_.run.message = viz::trf("{} rank{}, {} since step {}", c.world_size, c.world_size == 1 ? "" : "s",
                                c.backend, viz::grouped(static_cast<int64_t>(std::ceil(c.step))));
  switch_from_generation_ = -1;
}

void RunSession::forget_refusal() {
  if (!refusal_.empty() && state_.run.message == refusal_) state_.run.message.clear();
  refusal_.clear();
}

void RunSession::load_scenario(const std::string& name) {
  Scenario s = load_app_scenario(name);  // throws InputError naming the file and field
  stop();
  // The new scenario starts from its own "Press Start": the last run's curves stay as an earlier
  // run, but its ring, timeline and status spoke of another world and go.
  keep_as_overlay();
  feed_.discard_queued();
  model_.clear();
  state_.timeline = {};
  state_.run = viz::RunStatus{};
  state_.scenario = s;
  state_.job = s.job;
  state_.lab.settings = view_model::lab_from_job(s.job);
  state_.focus = viz::FocusNamed(s.view.focus);
  // Picked from the menu: the next Start runs the scenario, not a script typed in before, and the
  // script's run, cleared above, is no longer on screen.
  state_.torch.use = false;
  state_.torch.side_by_side = false;
  state_.torch.live = false;
  step_through_as_in_scenario();
}

// The scenario's step-through: gated or following live, at its speed. The gate and the mode go
// together: the workers are held exactly when the controls say "Step-through (gated)".
void RunSession::step_through_as_in_scenario() {
  const Scenario& s = state_.scenario;
  state_.gated = s.gated;
  state_.step.speed = s.view.speed;
  state_.step.mode = s.gated ? viz::RingMode::Gated : viz::RingMode::Follow;
  state_.step.playing = !s.gated;
  state_.step.held_at_end = false;
  state_.step.follow_next = false;
  state_.step.has_selection = false;
}

void RunSession::apply_requests() {
  viz::Requests& r = state_.requests;
  if (!r.load_scenario.empty()) {
    try {
      load_scenario(r.load_scenario);
    } catch (const Error& e) {
      state_.run.message = e.what();
    }
  }
  if (r.reset) {
    start_when_stopped_ = false;
    stop();
    if (controller_) controller_.reset();
    state_.job = state_.scenario.job;
    state_.lab.settings = view_model::lab_from_job(state_.job);
    step_through_as_in_scenario();
    feed_.discard_queued();
    model_.clear();
    state_.overlays.clear();
    state_.run = viz::RunStatus{};
  }
  if (r.clear_overlays) state_.overlays.clear();
  if (r.stop) stop();
  if (r.restart && !run_over()) {
    stop();
    controller_.reset();  // waits for the workers to go
    start();
  } else if (r.start && run_over()) {
    start();
  } else if (r.start && stopping_) {
    start_when_stopped_ = true;
  }
  // A slider let go on the value it started from (a typed value rubbed out with Escape, a drag
  // back to where it was) asks for no change: it restarted the workers, from a checkpoint, into
  // the world they were already in, and marked a change on the loss plot.
  if (r.change_world && state_.job.world_size == state_.run.live_world_size && state_.job.backend == state_.run.live_backend)
    r.change_world = false;
  // One rank has no ring steps to hold it at the gate: paused (or stepped through) it trained on at
  // full speed under "paused at the gate", and a lesson's run reached its end unseen. Refused, the
  // controls back on the world that runs.
  if (r.change_world && state_.job.world_size == 1 && !run_over() &&
      (state_.run.phase == viz::RunPhase::Paused || state_.gated)) {
    viz::SetWorldSize(state_, state_.run.live_world_size);
    state_.job.backend = state_.run.live_backend;
    state_.run.message = state_.run.phase == viz::RunPhase::Paused
                             ? viz::tr("One rank has no ring steps to hold at the gate: paused, it would train on. "
                                       "Resume first, or choose 2 ranks or more.")
                             : viz::tr("One rank has no ring steps to hold at the gate: stepped through, it would "
                                       "train on. Choose Follow live first, or 2 ranks or more.");
    refusal_ = state_.run.message;
    state_.run.reveal_message = true;  // at 1.5x text it sat below the pane's fold, the slider snapped back unexplained
    r.change_world = false;
  }
  // Workers started without the gate and the stop check cannot pause or change world.
  if (plain_workers_ && !run_over() && (r.set_gated || r.pause_toggle || r.gate_releases > 0 || r.change_world)) {
    state_.run.message = viz::tr(
        "Pause, step-through and live changes are off for this run: they add a vote between the ranks at every "
        "step, which this lesson's fault (a skipped or extra collective, or a rank out of data) would meet first, "
        "hiding what the lesson shows.");
    r.set_gated = r.pause_toggle = r.change_world = false;
    r.gate_releases = 0;
  }
  // A script is held by no gate: a Pause it never saw read "paused" while it trained on.
  if (state_.torch.live && !run_over() && (r.pause_toggle || (r.set_gated && r.gated_value) || r.gate_releases > 0)) {
    state_.run.message = viz::tr("A PyTorch script is not held at ringlab's gate: Pause and step-through hold ringlab's own workers only.");
    if (r.set_gated && r.gated_value) {
      viz::SetRingMode(model_, state_, viz::RingMode::Follow);
      state_.gated = false;
    }
    r.set_gated = r.pause_toggle = false;
    r.gate_releases = 0;
  }
  if ((r.set_gated || r.pause_toggle) && controller_ && !run_over()) forget_refusal();  // Resumed, Follow live chosen
  if (r.set_gated && controller_ && !run_over()) {
    controller_->set_gated(r.gated_value || state_.run.phase == viz::RunPhase::Paused);
    // Replay (or Follow live) chosen while the gate held the workers lets them go: a short run
    // then trained to its end at once, and nothing said why.
    if (!r.gated_value && state_.run.stepped && state_.run.phase == viz::RunPhase::Running) {
      let_go_by_replay_ = state_.step.mode == viz::RingMode::Replay;
      let_go_at_s_ = seconds_now();
      state_.run.message = let_go_note_ =
          let_go_by_replay_
              ? viz::tr("Replay does not hold the workers: they train on at full speed. Step-through (gated) holds them again.")
              : viz::tr("Let go of the gate: the workers train on at full speed.");
    }
    state_.run.stepped = state_.run.stepped || r.gated_value;
    if (!r.gated_value) model_.forget_live_pace();
  }
  if (r.pause_toggle && controller_ && !run_over()) {
    const bool pause = state_.run.phase == viz::RunPhase::Running;
    state_.run.phase = pause ? viz::RunPhase::Paused : viz::RunPhase::Running;
    controller_->set_gated(pause || state_.gated);
  }
  for (int i = 0; i < r.gate_releases && controller_ && !run_over(); ++i) controller_->release_gate();
  if (r.change_world && controller_ && !run_over()) {
    try {
      require_backend(state_.job.backend);
      controller_->change_world(state_.job.world_size, state_.job.backend);
      state_.run.live_world_size = state_.job.world_size;
      state_.run.live_backend = state_.job.backend;
      state_.run.message = viz::trf("switching to {} rank{}, {}", state_.job.world_size,
                                    state_.job.world_size == 1 ? "" : "s", state_.job.backend);
      const view_model::Generation* now = model_.current_generation();
      switch_from_generation_ = now ? now->index : 0;
      switch_changes_before_ = model_.loss().changes.size();
      switch_step_before_ = model_.latest_step();
    } catch (const Error& e) {
      state_.run.message = e.what();
    }
  }
  if (r.kill_rank >= 0 && controller_ && !run_over()) {
    try {
      controller_->kill_rank(r.kill_rank);
    } catch (const Error& e) {
      state_.run.message = e.what();
    }
  }
  // What concerns the window (full screen, zoom, style) is left for the main loop.
  viz::Requests window_only;
  window_only.toggle_fullscreen = r.toggle_fullscreen;
  window_only.quit = r.quit;
  window_only.zoom_steps = r.zoom_steps;
  window_only.style_changed = r.style_changed;
  r = window_only;
}

}  // namespace ringlab::app
#endif  // RINGLAB_HAVE_GUI
