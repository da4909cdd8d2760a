#pragma once
// When the app's window draws its next frame. A frame costs CPU time: on a machine without a
// GPU a software renderer fills every pixel on threads of its own (about 20 ms of CPU a frame at
// 1920x1080 on a 2-core machine), and those are the cores a run's workers need. So the window
// draws only when something on it can have changed, and while the run's workers compute on this
// machine, no more often than keeps the drawing within a share of one core.
//
//   input (keys, mouse, resize, expose) and the few frames after it   at most 60 a second
//   new events, or the ring animating, no worker computing here       at most 60 a second
//   the same while workers compute here     at most 15 a second, and frame CPU / share apart
//   nothing                                                            one frame every 250 ms
//
// Fifteen frames a second move the ring's packets smoothly enough for a class; every frame
// beyond costs the workers: a frame's layout and its intake take the drawing thread a few
// milliseconds even where a GPU fills the pixels. Input is never held back: a key or a click is
// drawn within a 60th of a second, busy or not.
//
// Within a frame, the side panes (the controls, and the views but the big one and the ring)
// cost most of the drawing on a CPU renderer. While the workers compute here, a side pane is
// drawn afresh once a second, one a frame (side_pane_to_refresh), and shown from its last
// drawing in between, so that the big pane can move at a frame rate the share allows; on input,
// while settling after it, and whenever no worker computes, every pane is drawn afresh each
// frame.
#include <cstdint>
#include <span>

namespace ringlab::view_model {

struct FrameCause {
  bool input = false;              // input or window events since the last frame began
  bool new_events = false;         // the run's events are waiting to be drawn
  bool animating = false;          // something on screen moves by itself
  bool workers_computing = false;  // a live run's workers train on this machine's cores
};

class FramePacer {
 public:
  static constexpr double kMaxFramesPerSecond = 60.0;
  static constexpr double kWorkerShare = 0.15;  // of one core, while workers compute beside
  static constexpr double kWorkerFramesPerSecond = 15.0;  // at most, meanwhile
  static constexpr int64_t kIdleFrameNs = 250'000'000;
  static constexpr int kSettleFrames = 3;  // Dear ImGui lays out a change over a few frames
  static constexpr int64_t kSidePaneNs = 1'000'000'000;  // a side pane's refresh while workers compute

  // A frame began at `began_ns` (steady clock) and took `cpu_ms` of the process's CPU time, all
  // its threads together; `cause` is what it was drawn for.
  void frame_drawn(int64_t began_ns, double cpu_ms, const FrameCause& cause);
  // When the next frame is due (steady-clock ns), given what is known now.
  int64_t next_frame_ns(const FrameCause& now) const;
  double frame_cpu_ms() const { return cpu_ms_; }  // recent frames' CPU, smoothed
  // Whether the frame beginning now may show side panes from an earlier drawing: only while the
  // workers compute here, and neither on input nor in the frames that settle after it.
  bool side_panes_reusable(const FrameCause& now) const;
  // Whether a side pane last drawn afresh at `drawn_ns` (0: never) is drawn afresh at `now_ns`
  // in such a frame; `moved`: its place or size on screen changed since.
  static bool side_pane_due(int64_t now_ns, int64_t drawn_ns, bool moved);
  // Of side panes last drawn afresh at `drawn_ns` (0: never, drawn at once anyway), the one to
  // draw afresh in a frame at `now_ns`: the longest-waiting of those due, so that none waits for
  // ever however slow the frames; -1 when none is due. One a frame: two or three falling due
  // together made one frame far costlier than the rest (a stutter in the ring beside them).
  static int side_pane_to_refresh(int64_t now_ns, std::span<const int64_t> drawn_ns);

 private:
  int64_t last_began_ns_ = 0;
  double cpu_ms_ = 0.0;
  int settle_left_ = kSettleFrames;
};

}  // namespace ringlab::view_model
