#pragma once
// The app's side of a run: the controller that starts the worker processes, the event feed it
// fills from its ingest thread, and the model the views draw, updated once per frame. It acts
// on what the views asked for (AppState::requests) and reports the run's phase back.
#include <memory>
#include <vector>

#include "engine/view_model/event_feed.h"
#include "engine/view_model/run_model.h"
#include "engine/control/controller.h"
#include "viz/app_state.h"

namespace ringlab::app {

class RunSession {
 public:
  explicit RunSession(viz::AppState& state);
  ~RunSession();  // stops every worker
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  // Takes in the events that arrived since the last frame (within a time budget, so a flood
  // never stalls the frame) and notices when the run ended.
  void update();
  // Acts on state.requests about runs (start, stop, gate, live change, scenario, the failure
  // lab's kill) and clears them.
  void apply_requests();

  void start();  // a fresh run of state.job (or the scenario's sequence)
  void load_scenario(const std::string& name);
  const view_model::RunModel& model() const { return model_; }
  const view_model::EventFeed& feed() const { return feed_; }
  bool run_over() const;  // ended, failed, stopped, or never started
  // Stops the run (and the rest of a scenario's sequence); `cause` is what its result names.
  void stop(StopCause cause = StopCause::StopButton);

 private:
  void note_switch_landed();
  void hold_timeline();
  void note_script_job();
  void step_through_as_in_scenario();  // gated or following live, as the scenario says

  // One run to make: the job, and whether the PyTorch script runs it instead of the engine.
  struct PlannedRun {
    JobConfig job;
    bool torch = false;
  };
  void launch(const PlannedRun& run);
  std::vector<PlannedRun> plan_runs() const;
  void finish(const RunResult& result);
  void keep_as_overlay();

  viz::AppState& state_;
  view_model::EventFeed feed_;
  view_model::RunModel model_;
  std::unique_ptr<Controller> controller_;
  std::vector<Event> batch_;
  std::vector<PlannedRun> sequence_;  // runs still to make, in order
  bool stopping_ = false;
  // Start pressed while a Stop was under way (F5 right after Shift+F5): the run stopping still
  // counts as live for up to 2 s, and the press was lost. Taken up once it has stopped.
  bool start_when_stopped_ = false;
  // The status's last "not now" (a change to one rank while paused): said until the user acts on it.
  std::string refusal_;
  bool let_go_by_replay_ = false;  // the gate was let go by choosing Replay (else Follow live)
  std::string let_go_note_;  // said when the gate was opened under a stepped run (kept once it finishes)
  double let_go_at_s_ = 0;   // when: a run that goes on long after it no longer needs the note
  void forget_refusal();
  int switch_from_generation_ = -1;  // a live change was asked for in this generation; -1: none pending
  size_t switch_changes_before_ = 0;  // world changes the loss curve had marked when it was asked for
  int64_t switch_step_before_ = -1;   // the newest step when it was asked for
  bool plain_workers_ = false;  // this run's workers have no gate or stop check (see stop_votes_fit)
  double started_at_s_ = 0;
  int64_t last_trim_ns_ = 0;
};

}  // namespace ringlab::app
