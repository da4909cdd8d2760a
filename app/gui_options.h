#pragma once
// What `ringlab gui` was asked to do, from its flags.
#include <string>
#include <vector>

namespace ringlab::app {

struct GuiOptions {
  std::string scenario = "four-ranks-gloo";
  int world_size = 0;           // 0: the scenario's
  std::string backend;          // "": the scenario's
  bool gated = false;           // start in step-through mode
  int frames = 0;               // > 0: render this many frames of a live run headless, then exit
  bool wait_run = false;        // with --frames: keep rendering until the run has ended
  std::string screenshot;       // PNG of the last frame
  std::string frame_stats;      // JSON of frame-time percentiles
  int ring_step = -1;           // show the newest all-reduce at this ring position (no animation)
  std::string layout_audit;     // with --frames: the last frame's cut, overlapping or covered text, as JSON
  std::string state_json;       // at exit: what the views showed (ring, generations, changes), as JSON
  // Headless demo of a live change: when training reaches `switch_step`, change to
  // `switch_world` ranks on `switch_backend` ("" keeps the backend), as the controls would.
  std::string switch_spec;      // "S:N[:BACKEND]" as given
  int64_t switch_step = -1;
  int switch_world = 0;
  std::string switch_backend;
  // Headless Failure lab: when training reaches `kill_step`, press "Kill rank `kill_rank` now".
  std::string kill_spec;        // "S:R" as given
  int64_t kill_step = -1;
  int kill_rank = -1;
  std::string focus;            // ring | training | sampler | timeline | scale
  bool about = false;           // open Help > About
  std::string lang = "en";
  std::string theme = "light";
  float ui_scale = 1.0f;
  int width = 1920;
  int height = 1080;
  std::string source_dir;       // where assets/ lives, for scenarios
  std::string torch_script;     // run this PyTorch script instead of the engine (`--torch`)
  bool side_by_side = false;    // with --torch: the script's run, then the engine's
  std::vector<std::string> torch_args;  // the script's arguments, after --
};

// Opens the window and runs the app; returns the process exit code.
int run_gui(const GuiOptions& options);

}  // namespace ringlab::app
