#pragma once
// Everything the views remember between frames, in one struct. The views read the run's
// model (engine/replay) and this state; what they want done (start, stop, release the gate,
// change the world) they write into `requests`, and the app acts on it after the frame.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

struct ImDrawList;

#include "engine/core/clock.h"
#include "engine/dist/process_group.h"
#include "engine/view_model/collective_log.h"
#include "engine/view_model/failure_lab.h"
#include "engine/view_model/loss_series.h"
#include "engine/view_model/sampler_history.h"
#include "engine/view_model/step_through.h"
#include "engine/job/job_config.h"
#include "engine/job/scenario.h"

namespace ringlab::viz {

enum class Language { English, Indonesian };
enum class ThemeKind { Light, Dark };
enum class Focus { Ring, Training, Sampler, Timeline, Scale };

// The step-through's modes and state live in the engine (engine/view_model/step_through.h).
using RingMode = view_model::RingMode;
using StepThroughState = view_model::StepThrough;

enum class RunPhase { Idle, Running, Paused, Finished, Failed, Stopped };

struct SamplerViewState {
  bool follow = true;   // show the newest epoch
  // The epoch chosen on the bar when not following. Kept as the epoch itself, not its place
  // among the recorded epochs: those drop out from the oldest on a long run, and a place would
  // then show ever newer epochs under a bar nobody moved.
  view_model::EpochKey chosen;
  bool label_order = false;  // cells show the position in the rank's order instead of the index
};

// The ring's heading (banner, subtitle, "Next: ...") changes height as it wraps or a line comes
// and goes; the ring keeps the lowest top it has had in a pane of this size, so that it does not
// jump up and down under the class's eyes every few seconds.
struct RingViewState {
  float heading_bottom = 0;  // below the pane's top, in pixels
  float footer_top = 0;      // above the pane's bottom, in pixels: the tallest footer this pane has had
  bool banner_big = false;   // the last frame's banner in the large font (it fitted, and so did its other steps')
  bool compact_room = false; // this pane's words left no room for a full ring: compact from then on
  float pane_w = 0, pane_h = 0, font_px = 0;
  std::string shape;         // the all-reduce on screen's kind (world, algorithm, values shown): what the heights hold for
  // How the last frame laid out the cards (--state-json: tests check that they clear).
  struct Cards {
    int ranks = 0;
    float room_w = 0, room_h = 0;  // the ring's part of the pane
    bool clear = true;             // no two cards overlap
    bool short_labels = false, cells = true;
    float exponent = 2;
    // Where each link's byte label went, link r (rank r to r + 1) at [r]: 'o' outside the ring,
    // 'i' inside it (outside left the pane or met a card, a link, the legend or another label),
    // '-' neither (or no label: nothing sent yet).
    std::string link_labels;
    int node_labels = 0;  // nodes named inside a ring over several ("node 0"): each where it clears the rest
  } cards;
  // Packets drawn over the session's frames, those of them drawn without their name ("c2")
  // because a card would have hidden it, and those drawn over the cards because no gap between
  // two cards held them (--state-json's ring_cards).
  int64_t packets_drawn = 0, packets_unnamed = 0, packets_over_cards = 0;
};

struct TrainingViewState {
  bool log_scale = true;
  bool by_epoch = false;  // x axis in epochs instead of steps
  bool show_ranks = true;
  bool show_overlays = true;
};

struct TimelineViewState {
  bool follow = true;
  double window_ms = 0.0;  // 0: fit the last few steps
  double end_ms = 0.0;     // right edge when not following
  double drawn_end_ms = 0.0, drawn_window_ms = 0.0;  // the last frame's: Follow unticked stays there
  bool let_go_shown = false;  // the last frame veiled a stretch whose spans were let go (--state-json)
  size_t spans_shown = 0;     // spans the last frame drew, or found too narrow to draw (--state-json)
  std::string open_label;     // the last frame's words on the open all-reduces ("waiting", "paused", ...; --state-json)
  std::string open_read_out;  // the last frame's hover read-out of an open all-reduce ("" when none is under the mouse)
  std::string span_read_out;  // the last frame's hover read-out of a span ("" when none is under the mouse)
  // The last frame's words at each lane's end ("" for none): a failure's, or while a live run has
  // gone quiet what each rank was last seen doing ("in all-reduce #2 for 12.31 s", "silent for ...").
  std::vector<std::string> lane_notes;
  // Replay: the all-reduce the view last went to (it goes to each one the ring is set to, once).
  std::optional<view_model::CollectiveKey> replay_shown;
  bool replay_took_follow = false;  // Replay unticked Follow: ticked again when Replay ends
  bool replay_marked = false;  // the last frame marked the replayed all-reduce's time (--state-json)
};

// The Scale view's what-if: the controls only; the curves are computed from these (and cached).
struct ScaleViewState {
  int ranks_per_node = 64;            // 1..1,024, on a logarithmic slider (on one node: the world size)
  int nodes = 1;                      // 1..128; more than one adds the link between nodes
  std::string model = "124M";         // a model preset: seed | 25M | 124M
  std::string link = "this-machine";  // within a node: a link preset's name, or kLiveLink
  std::string inter_link = "100gbe";  // between nodes: a link preset's name
  int step_algorithm = 0;             // index into sim::all_algorithms(): the step bar's all-reduce
  int node_step_algorithm = 1;        // over several nodes, index into sim::all_node_algorithms()
  std::vector<int> job_split_seen;    // the job's ranks_per_node the view last took its node count from
  // The preset the link last followed the job's backend to (its own transport on this machine):
  // while the link is still that one, nobody chose another, and it follows the next backend too.
  std::string link_followed = "this-machine";
  int world_size() const { return nodes * ranks_per_node; }
  static constexpr const char* kLiveLink = "live";  // the link fitted to the live run's all-reduces
};

// The failure lab: the fault the next run injects (the job's fault fields follow it), and the
// window that explains it and, after a failure, reports it.
struct FailureLabState {
  view_model::FailureLabSettings settings;
  int kill_rank = 1;          // the live "kill rank r now" button's rank
  bool report_open = true;    // the lesson and report pane (hidden with its button, shown again by a fault or failure)
  bool was_failed = false;    // the last frame's run had failed: a new failure reopens the window
  bool newly_shown = false;   // this frame a failure opened the pane: one view at a time brings it to the front
};

struct Requests {
  bool start = false;
  bool stop = false;
  bool pause_toggle = false;
  bool reset = false;
  int gate_releases = 0;
  bool set_gated = false;
  bool gated_value = false;
  bool change_world = false;   // to job.world_size / job.backend, live
  bool restart = false;        // stop and start again with `job` (a setting that needs new workers)
  std::string load_scenario;
  bool toggle_fullscreen = false;
  bool quit = false;           // Ctrl+Q: close the app the normal way
  int zoom_steps = 0;          // Ctrl+= / Ctrl+-
  bool style_changed = false;  // theme or language
  bool clear_overlays = false;
  int kill_rank = -1;          // the failure lab: SIGKILL this rank's worker now
};

struct RunStatus {
  RunPhase phase = RunPhase::Idle;
  bool live() const { return phase == RunPhase::Running || phase == RunPhase::Paused; }  // workers exist
  std::string message;        // failure text or a note
  bool reveal_message = false;  // a refusal just said in `message`: scroll it into view if the pane cut it off
  int sequence_index = 0;     // which run of a scenario's sequence
  int sequence_length = 1;
  int live_world_size = 0;    // what the controller runs now
  std::string live_backend;
  double elapsed_s = 0.0;
  size_t events_lost = 0;     // the app fell so far behind that events were dropped
  size_t events_thinned = 0;  // steps' spans and collectives left out while the app was behind
  size_t events_queued = 0;   // received, not yet taken into the views (the app is behind by these)
  // The workers were held at the step-through gate during this run: a step's time then holds
  // the ranks' wait for each other to see each release, so µs per step is no training speed.
  bool stepped = false;
  int64_t step_at_stop = -1;  // the newest step the views had when Stop was pressed (-1: not stopped)
  bool paused_at_stop = false;  // Stop came while paused: the ranks ended held at the gate
  bool gated_at_stop = false;   // Stop came while stepping through: likewise, held for the next Next
  int max_restarts = 0;         // the restarts this run was started with (the lab's field may change since)
  // When (now_ns) the timeline's latest event time last moved: held at the gate, the timeline's
  // window goes on from there with the clock.
  int64_t timeline_heard_at_ns = 0;
  // Stopped while it hung (nothing reported for a second or more, not held by the class): for how
  // long, and up to when on the timeline's clock (relative ns); 0 otherwise. The hang's account (who
  // waited, who was silent) stays on screen after the Stop, as Ctrl-C's "where each rank was" does.
  int64_t hung_for_ns_at_stop = 0, hung_until_rel_ns = 0;
};

// A value typed into a job field that was refused, kept on screen with the reason.
struct FieldEdit {
  bool refused = false;
  int64_t typed = 0;
  std::string reason;
  // The job's value when the person started typing: a value the job took on the way to one it
  // refuses (999999 on the way to 999999999) is not kept; this one comes back.
  bool has_before = false;
  int64_t before = 0;
  float x = 0, y = 0;  // where a click goes into the field (its text, not its -/+), last frame
  bool reveal = false;  // a refusal just made: scroll its reason into view if the pane cut it off
  bool reason_seen = false;  // the reason's line lay inside the pane in the last frame (--state-json)
};

// A PyTorch script run in place of ringlab's engine (`ringlab gui --torch SCRIPT`, or the
// controls' "PyTorch script" section): started once per rank, it reports through the two lines
// of ringlab_torch it holds. Side by side: the script's run, then the engine's run of the same job,
// which the Training view overlays on it.
struct TorchState {
  std::array<char, 1024> path{};  // the script, as typed or given
  std::vector<std::string> args;  // its arguments (`ringlab gui --torch SCRIPT -- ARGS`)
  bool use = false;               // the next Start runs the script
  bool side_by_side = false;      // the next Start runs the script, then ringlab's engine
  bool live = false;              // the run on screen is the script's
  // What the script's last run reported of its training (its RunBegin): the controls show it in
  // place of the engine's fields, which a script does not read, and the menu bar names its lr.
  std::optional<JobConfig> announced;
  std::string announced_by;     // the script that announced it: another one typed in since knows nothing yet
  bool epochs_counted = false;  // the script did not name its epochs: announced->epochs is what it began
  // The fields of `announced` the script did not report (ringlab's defaults there), "epochs" among
  // them when nothing said where its epochs began: the controls say "not reported" for them.
  std::vector<std::string> not_reported;
  std::string script() const { return std::string(path.data()); }
  const JobConfig* announced_job() const { return announced && announced_by == script() ? &*announced : nullptr; }
  bool runs_next() const { return !script().empty() && (use || side_by_side); }  // what Start runs
  std::string script_name() const {  // the file's name, without its folders
    const std::string s = script();
    return s.substr(s.find_last_of('/') == std::string::npos ? 0 : s.find_last_of('/') + 1);
  }
};

// A pane of the main area as drawn this frame: its id, its Dear ImGui draw list and where it is on
// screen. The app may show a side pane from its last drawing for a while
// (view_model::FramePacer::side_pane_due says when); not one drawn `every_frame`: the big pane,
// and the ring wherever it is (its animation keeps step with the step-through pane's bar).
struct PaneDrawn {
  const char* id = "";
  ImDrawList* list = nullptr;
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool every_frame = false;
};

// Words the last frame put on screen where a class reads what the run is doing, for
// --state-json (the classroom tests read them as a person reads the window).
struct SaidOnScreen {
  std::string title;      // the controls' title: the scenario's, or the PyTorch script's
  std::string menu_bar;   // at the menu bar's right: what runs, or what Start would run
  std::vector<std::string> script_job;  // a script's training as the controls show it ("Epochs: 3")
  std::map<std::string, int64_t> job_fields;  // the engine's integer fields as shown, by id ("bucket_cap": 25600)
  std::string status;     // the run's phase, under Start / Stop
  bool status_in_view = false;  // that line wholly inside its pane: not cut off or scrolled away
  std::string pace;       // the step time's line ("" when none is shown)
  std::string progress;   // the status's count of steps and epoch ("4 ranks · 5,691 steps done · epoch 2,844")
  std::string ring_banner;  // the ring pane's big line (the failure, the all-reduce shown, what Start runs)
  std::string ring_next;  // under the ring's title: the next step, or that the run ended before it
  std::string ring_number;  // which all-reduce the ring shows ("all-reduce #3 since the change to 2 ranks")
  std::string ring_gate;    // step-through: where the workers are against the screen ("" when not said)
  std::string ring_legend;  // where the ring's legend is: "beside" the footer's lines, "above" them, or "" (none)
  bool next_enabled = true;  // the step-through's Next button
  std::string lab_command;   // the Failure lab's "same run from a shell" ("" while it shows none)
  std::string lab_outcome;   // the Failure lab's word on a straggler's run that ended well ("" otherwise)
  std::string curves_agree;  // side by side: how far the engine's MSE is from the script's ("" otherwise)
  std::string loss_read_out;  // the Training view's hover read-out ("" when the mouse is not over the plot)
  std::vector<std::string> loss_legend;  // the Training view's legend entries as drawn (none: no legend)
  float loss_plot_height = 0;             // its plot's height in pixels, axes included
  std::string sampler_numbers;  // what the Sampler's cells are labelled with: "index", "order", "" (none)
  std::string sampler_note;     // the line under its grid when Show order cannot be seen ("" otherwise)
  std::string sampler_more;     // the line under the shards' orders naming the ranks that did not fit ("" when all did)
  std::string sampler_shards_differ;  // the Sampler's warning that the ranks' shards differ in length ("" otherwise)
  std::string sampler_order;  // the Sampler's line on the epoch's order ("New order: set_epoch reshuffled this epoch")
  std::string sampler_epoch;  // the Sampler's epoch as its slider reads ("epoch 2,844"; "" while it shows none)
  std::string scale_note;       // the Scale view's words under its step bar: the live run against the models
  std::string replay_slot;       // Replay's All-reduce slider, as it reads ("3 of 45"; "" while not shown)
  // An open Reset or Quit question: what the run does until it is answered ("" while not asked).
  std::string reset_meanwhile, quit_meanwhile;
};

// Where the World size slider was while a run trained (screen y, logical pixels): a hand about
// to drag it, to grow the world live, must find it where it was a moment ago. Reset at each run.
struct ControlsSteadiness {
  bool seen = false;
  float world_slider_lowest_y = 0, world_slider_highest_y = 0;
  void saw_world_slider_at(float y) {
    world_slider_lowest_y = seen ? std::min(world_slider_lowest_y, y) : y;
    world_slider_highest_y = seen ? std::max(world_slider_highest_y, y) : y;
    seen = true;
  }
  float world_slider_moved() const { return world_slider_highest_y - world_slider_lowest_y; }
};

struct AppState {
  Language language = Language::English;
  ThemeKind theme = ThemeKind::Light;
  float ui_scale = 1.0f;
  float ui_scale_max = 4.0f;  // the largest text the window can hold (set by the app from its size)
  Focus focus = Focus::Ring;
  // One view at a time (large text or a small window): the focus the tabs last saw. When the
  // menu or a key moves the focus, its tab is brought to the front.
  Focus tab_focus_seen = Focus::Ring;
  bool failure_tab = false;  // the failure lab, not a view, fills the main area

  Scenario scenario;
  std::vector<Scenario> scenarios;
  std::map<std::string, FieldEdit> field_edits;  // by field id  // the registered ones, for the Scenario menu (titles, descriptions)
  JobConfig job;       // what Start launches; the controls edit it
  bool gated = false;  // start the next run gated

  StepThroughState step;
  // Replay during a live run scrubs this copy of the collective log, taken when Replay was chosen
  // (step_through_view.cpp says why); null otherwise.
  std::shared_ptr<const view_model::CollectiveLog> replay_log;
  std::string controls_shown_for;  // the scenario (or "script") the controls pane last showed
  float controls_tallest = 0;      // the controls' height at its tallest since the pointer came into the pane
  float controls_scrolled_at_scale = 0;  // the text scale the controls' scroll was last drawn at
  float step_scrolled_at_scale = 0;      // the same for the Step-through pane
  bool description_had_room = true;  // last frame, the controls pane had room for the scenario's description
  SamplerViewState sampler;
  TrainingViewState training;
  TimelineViewState timeline;
  RingViewState ring_view;
  FailureLabState lab;
  ScaleViewState scale;
  TorchState torch;

  std::vector<view_model::LossSeries> overlays;  // earlier runs, for comparison (the newest few)
  size_t overlays_kept = 0;  // runs ever kept as overlays: the oldest one shown is run (this - size + 1)
  size_t first_overlay_number() const { return overlays_kept - overlays.size() + 1; }
  std::vector<BackendInfo> backends;
  RunStatus run;
  Requests requests;
  double frame_dt_s = 0.0;
  int64_t frames_drawn = 0;      // since the window opened (--state-json: how often it drew)
  int64_t frames_unchanged = 0;  // of those, laid out the same as the one before: not presented
  int64_t largest_frame_vertices = 0;  // the most any frame's draw data held (bounded by the screen, not the run)
  double window_open_s = 0.0;    // how long the window has been open
  SaidOnScreen said;
  ControlsSteadiness controls_moved;  // this run's (--state-json)
  std::vector<PaneDrawn> panes_drawn;  // this frame's, in the order drawn (DrawMainWindow fills it)
  // The World size slider's ends and row, and its - and + buttons (--state-json: for tests that
  // drag it and click them).
  struct WorldSlider {
    float x0 = 0, x1 = 0, y = 0, minus_x = 0, plus_x = 0;
  } world_slider;
  // When - or + last changed the world of a live run (ImGui time, -1: no change waits): the
  // change is asked for once the clicks pause this long.
  double world_stepped_at = -1;
  double world_changed_at = -100;  // when the World size last changed by hand (ImGui time): its tip waits
  static constexpr double kWorldStepPauseS = 0.8;
  float pause_button_x = 0, pause_button_y = 0;  // the Pause (Resume) button's middle (--state-json: for tests that click it)
  int64_t side_panes_reused = 0;       // side panes shown from an earlier drawing (--state-json)
  int64_t frames_in_part = 0;          // presented as their damaged rectangle alone (app/partial_present.h)
  // With RINGLAB_CHECK_PARTIAL_FRAMES (app/partial_check.h): frames in part compared with the
  // whole frame, and those that differed.
  int64_t partial_frames_checked = 0, partial_frames_differing = 0;
  int64_t pixels_presented = 0;        // by the window's presented frames, whole or in part

  std::string version;      // ringlab's, for Help > About
  bool about_open = false;  // the About window
  bool menu_open = false;   // a menu of the bar was open in the last frame (for --state-json)
  bool escape_pressed = false;  // Escape was pressed since the last frame (however short the tap)
  // Start was asked for (F5, or a click on the greyed button) while a field holds a value the job
  // refused: the controls say why nothing started, until the field is fixed.
  bool start_waits_for_field = false;
  // A Start waiting for the person's yes: the run's memory estimate (0: none waiting).
  struct PendingStart {
    uint64_t bytes = 0;
    std::string breakdown;
    bool restart = false;
  } pending_start;
  // A setting that needs new workers (set_epoch) changed while a run goes on: the person is asked
  // before that run is stopped and started again; `set_epoch_before` comes back on Keep.
  struct PendingRestart {
    bool asked = false;
    bool set_epoch_before = true;
  } pending_restart;
  // Reset pressed (or Ctrl+R) while a run trains: it would end the run and forget it, so the
  // person is asked first; the run goes on meanwhile.
  bool pending_reset = false;
  // Ctrl+Q, the menu's Quit or the window's close button while a run trains: quitting stops the
  // run and loses it, so the person is asked first (a second Ctrl+Q is the yes).
  bool pending_quit = false;
};

// A PyTorch script's run on screen, or the run Start makes next (side by side, the script's comes
// first): ringlab's gate (Pause, Step-through (gated)) and the Failure lab's injected faults reach
// only ringlab's own workers, and a script is held by neither.
inline bool ScriptRun(const AppState& s) { return s.run.live() ? s.torch.live : s.torch.runs_next(); }

// A live run none of whose ranks has reported anything for this long has gone quiet: a rank that
// hangs or sleeps, and the others waiting for it in their all-reduce.
constexpr int64_t kRunQuietNs = 1'000'000'000;

// How long a live run has gone without a new span on the timeline (0 when not live, or before it
// has reported anything).
inline int64_t RunSilentNs(const AppState& s) {
  if (!s.run.live() || s.run.timeline_heard_at_ns <= 0) return 0;
  return std::max<int64_t>(now_ns() - s.run.timeline_heard_at_ns, 0);
}

// Gone quiet, and not because the class holds it (at the gate, or paused): a hang.
inline bool RunHangs(const AppState& s) {
  return RunSilentNs(s) >= kRunQuietNs && !s.gated && s.run.phase != RunPhase::Paused;
}

// A hang now, or the one the run was stopped in: how long nothing had been reported (0: none).
inline int64_t HungForNs(const AppState& s) {
  if (RunHangs(s)) return RunSilentNs(s);
  return s.run.phase == RunPhase::Stopped ? s.run.hung_for_ns_at_stop : 0;
}

}  // namespace ringlab::viz
