#pragma once
// When the app's window draws its next frame. A frame costs CPU time: on a machine without a
// GPU a software renderer fills every pixel on threads of its own (about 20 ms of CPU a frame at
// 1920x1080 on a 2-core machine), and those are the cores a run's workers need. So the window
// draws only when something on it can have changed, and while the run's workers compute on this
// machine, no more often than keeps the drawing within a share of one core.
//
//   input (keys, mouse, resize, expose) and the few frames after it   at most 60 a second
//   new events, or the ring animating, no worker computing here       at most 60 a second
//   the same while workers compute here                                frame CPU / share apart
//   nothing                                                            one frame every 250 ms
//
// With a GPU a frame costs a millisecond or two of CPU and the share never binds: 60 a second.
// Input is never held back: a key or a click is drawn within a 60th of a second, busy or not.
#include <cstdint>

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
  static constexpr double kWorkerShare = 0.25;  // of one core, while workers compute beside
  static constexpr int64_t kIdleFrameNs = 250'000'000;
  static constexpr int kSettleFrames = 3;  // Dear ImGui lays out a change over a few frames

  // A frame began at `began_ns` (steady clock) and took `cpu_ms` of the process's CPU time, all
  // its threads together; `cause` is what it was drawn for.
  void frame_drawn(int64_t began_ns, double cpu_ms, const FrameCause& cause);
  // When the next frame is due (steady-clock ns), given what is known now.
  int64_t next_frame_ns(const FrameCause& now) const;
  double frame_cpu_ms() const { return cpu_ms_; }  // recent frames' CPU, smoothed

 private:
  int64_t last_began_ns_ = 0;
  double cpu_ms_ = 0.0;
  int settle_left_ = kSettleFrames;
};

}  // namespace ringlab::view_model
