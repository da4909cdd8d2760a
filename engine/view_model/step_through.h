#pragma once
// Stepping through the ring: which all-reduce is on screen, how many of its ring steps are shown,
// and when the real workers are let through the step-through gate. UI-free: the ring view draws
// what this decides, and the unit tests drive it step by step, forward and back.
//
// Three modes. Follow animates the newest finished all-reduce while training runs at full speed.
// Gated holds the workers before every ring step: the screen shows what they really did, Next
// first catches the screen up with it and only then lets them take one more step, and Previous
// goes back over what is recorded (the workers cannot un-send; the view can go back). Replay
// scrubs any recorded all-reduce without holding anyone.
#include <memory>
#include <optional>
#include <vector>

#include "engine/view_model/collective_log.h"

namespace ringlab::view_model {

enum class RingMode { Follow, Gated, Replay };

struct StepThrough {
  RingMode mode = RingMode::Follow;
  bool playing = true;
  double speed = 1.5;              // ring steps per second
  bool has_selection = false;
  CollectiveKey selected;          // the all-reduce on screen
  int position = 0;                // ring steps completed on screen
  int target = 0;                  // gated: ring steps the class asked to see (Next raises it)
  double progress = 0.0;           // 0..1: how far the next step's packets have travelled
  double hold_s = 0.0;             // time spent on a finished all-reduce (follow mode)
  double since_release_s = 0.0;    // gated play: time since the gate was last released
  int fixed_position = -1;         // --ring-step: show this position, no animation
  bool follow_next = false;        // gated: Next moved past the end before the next all-reduce was recorded
  // Gated, switched on while the workers ran: until the class steps, the screen goes with the
  // newest all-reduce, so it is the one the workers are held in once the gate has reached them
  // (they go on for a few dozen fast all-reduces before it does), not one left far behind.
  bool to_workers = false;
  // Gated: Next pressed before the first all-reduce was recorded. begin_run keeps them: F5 and
  // Right in one frame press Next before the run the F5 asked for is started.
  int early_presses = 0;
  bool from_start = false;         // Play was pressed: an all-reduce shown to its end starts over
  bool held_at_end = false;        // follow: paused by the run ending, not by Pause: a new run plays
  // A copy of the all-reduce on screen. The log keeps the newest few hundred, which a fast run
  // replaces within a fraction of a second, long before a class has watched one step by step:
  // once the log has forgotten it, the copy is what is shown.
  std::shared_ptr<const CollectiveRecord> kept;
};

// What the caller must do after an input or a frame: open the gate, switch gating on or off.
struct StepRequest {
  int gate_releases = 0;
  std::optional<bool> set_gated;
};

// The all-reduce on screen: the log's record of it, or the copy kept of it where the log no
// longer has it or has less of it (a copy of the log taken before its last steps).
const CollectiveRecord* shown_collective(const StepThrough& st, const CollectiveLog& log);
// The copy of the all-reduce on screen follows the log's record while the log has more of it
// (its transfers may still be arriving: gated, or selected before every rank reported).
void keep_newest(StepThrough& st, const CollectiveLog& log);
// Following live after a live change to a single rank: the all-reduce on screen is the last
// world's, and nothing newer will replace it (one rank all-reduces nothing); it is not what runs.
bool left_behind_by_one_rank(const StepThrough& st, const CollectiveRecord& shown, int live_generation, int live_world);

// Where the log holds ring all-reduces with steps to show (oldest first): what Replay scrubs over
// and Next and Previous step through; the initial broadcast and native all-reduces are not among them.
std::vector<size_t> steppable_collectives(const CollectiveLog& log);

// Ring steps recorded so far, and the 2(N-1) a ring of N ranks will take (0: nothing to step).
int recorded_steps(const CollectiveRecord& record);
int expected_steps(const CollectiveRecord& record);

// One frame of `dt_s` seconds; `running`: the workers are alive and can be released.
StepRequest advance(StepThrough& st, const CollectiveLog& log, bool running, double dt_s);
StepRequest step_forward(StepThrough& st, const CollectiveLog& log, bool running);  // Next
// Whether Next would move anything: the screen, or the workers. Not once a stopped or finished
// run's recording has been shown to its end (an all-reduce it left half-done included: no rank
// will take its next step), nor, gated, while Pause holds the workers and the screen has caught up.
bool can_step_forward(const StepThrough& st, const CollectiveLog& log, bool running);
void step_back(StepThrough& st, const CollectiveLog& log);                        // Previous
void toggle_play(StepThrough& st);
// A new run starts (Start, Start again): nothing of the last one stays on screen (a new run's
// all-reduces have the same keys as the last one's), and the hold the view put on the last run's
// end is lifted, however quickly the new run is over. A Pause the user pressed stays.
void begin_run(StepThrough& st);
// Whether the view changes with time alone (packets travelling, a hold running out, Play about to
// press Next): the app's window draws frames for it; otherwise it waits for input or events.
bool animating(const StepThrough& st, const CollectiveLog& log);
StepRequest set_mode(StepThrough& st, RingMode mode);
void show_position(StepThrough& st, int position);  // the position slider
void show_collective(StepThrough& st, const CollectiveRecord& record);  // the all-reduce slider
// A failed run, followed live: the view stops on the all-reduce the ranks were in when it failed
// (the newest one, however far it got), at the last step they took, not on an older finished one.
void show_failed_collective(StepThrough& st, const CollectiveLog& log);

}  // namespace ringlab::view_model
