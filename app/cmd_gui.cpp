// `ringlab gui` (and plain `ringlab`): the desktop app, or N headless frames of it.
#include <CLI/CLI.hpp>

#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "app/commands.h"
#include "app/gui_options.h"
#include "app/torch_script.h"
#include "engine/core/error.h"
#include "engine/core/output_file.h"
#include "engine/job/scenario.h"

namespace ringlab::app {

#ifndef RINGLAB_HAVE_GUI
int run_gui(const GuiOptions&) {
  throw InputError("this ringlab was built without the desktop app (GLFW, OpenGL and Dear ImGui were not found); "
                   "use 'ringlab run' to train without it");
}
#endif

namespace {

// All of `text` as a whole number in [lo, hi]; nullopt for anything else.
std::optional<int64_t> whole_number(const std::string& text, int64_t lo, int64_t hi) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size() || v < lo || v > hi) return std::nullopt;
    return v;
  } catch (const std::logic_error&) {
    return std::nullopt;
  }
}

constexpr int64_t kAnyStep = std::numeric_limits<int64_t>::max();

// "S:N[:BACKEND]", e.g. "10:2:mpi".
void parse_switch(const std::string& text, GuiOptions& options) {
  const auto bad = [&] {
    return InputError("--switch must be STEP:WORLD_SIZE[:BACKEND] with WORLD_SIZE 1-16 and BACKEND gloo, mpi or nccl "
                      "(like 10:2:mpi); got '" + text + "'");
  };
  const size_t a = text.find(':');
  if (a == std::string::npos) throw bad();
  const size_t b = text.find(':', a + 1);
  const auto step = whole_number(text.substr(0, a), 0, kAnyStep);
  const auto world = whole_number(text.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1), 1, kMaxAppWorldSize);
  if (!step || !world) throw bad();
  options.switch_step = *step;
  options.switch_world = static_cast<int>(*world);
  if (b != std::string::npos) {
    options.switch_backend = text.substr(b + 1);
    if (options.switch_backend != "gloo" && options.switch_backend != "mpi" && options.switch_backend != "nccl") throw bad();
  }
}

// "S:R", e.g. "200:1".
void parse_kill_now(const std::string& text, GuiOptions& options) {
  const size_t a = text.find(':');
  const auto step = a == std::string::npos ? std::nullopt : whole_number(text.substr(0, a), 0, kAnyStep);
  const auto rank = a == std::string::npos ? std::nullopt : whole_number(text.substr(a + 1), 0, 15);
  if (!step || !rank) throw InputError("--kill-now must be STEP:RANK with RANK 0-15 (like 200:1); got '" + text + "'");
  options.kill_step = *step;
  options.kill_rank = static_cast<int>(*rank);
}

}  // namespace

void add_gui_command(CLI::App& root) {
  auto options = std::make_shared<GuiOptions>();
  auto* cmd = root.add_subcommand("gui", "the desktop app: watch DDP and the ring all-reduce run for real (default)");
  cmd->add_option("--scenario", options->scenario, "scenario name (assets/scenarios/NAME.json) or path to a .json file")
      ->capture_default_str();
  cmd->add_option("-n,--world-size,--world_size", options->world_size,
                  "ranks, overriding the scenario (the app draws up to 16; `ringlab run` trains up to 64)")
      ->check(CLI::Range(1, kMaxAppWorldSize));
  cmd->add_option("--backend", options->backend, "gloo | mpi | nccl, overriding the scenario")
      ->check(CLI::IsMember({"gloo", "mpi", "nccl"}));
  cmd->add_flag("--gated", options->gated, "start in step-through mode: workers wait before every ring step");
  cmd->add_option("--frames", options->frames, "headless: render N frames of a live run, then exit")
      ->check(CLI::Range(1, 10'000'000));
  cmd->add_flag("--wait-run", options->wait_run,
                "with --frames: go on rendering until the run has ended (step-through with --ring-step: until the "
                "all-reduce on screen has reached that step)");
  cmd->add_option("--screenshot", options->screenshot, "with --frames: write the last frame as a PNG");
  cmd->add_option("--frame-stats", options->frame_stats, "with --frames: write frame-time percentiles (ms) as JSON");
  cmd->add_option("--ring-step", options->ring_step, "show the newest all-reduce at this ring step (0: before the first)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--state-json", options->state_json,
                  "write what the views showed at the end (ring, generations, world changes) as JSON: after --frames, "
                  "or when the window closes (Ctrl+Q, the close button, SIGTERM)");
  cmd->add_option("--layout-audit", options->layout_audit,
                  "with --frames: write every piece of text in the last frame that is cut, overlaps other text or is "
                  "covered, as JSON");
  cmd->add_option("--switch", options->switch_spec,
                  "with --frames: at training step S change to N ranks (and BACKEND), live: S:N[:BACKEND]");
  cmd->add_option("--kill-now", options->kill_spec,
                  "with --frames: at training step S press the Failure lab's Kill rank R now: S:R");
  cmd->add_option("--focus", options->focus, "the view in the big pane")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(kViewNames), std::end(kViewNames))));
  cmd->add_option("--torch", options->torch_script,
                  "run this PyTorch DDP script (with ringlab_torch's two lines) instead of ringlab's engine")
      ->check(torch_option_problem, "SCRIPT");
  cmd->add_option("script_args", options->torch_args, "the --torch script's arguments (after --)");
  cmd->add_flag("--side-by-side", options->side_by_side,
                "with --torch: run the script, then ringlab's engine on the same job, overlaid in the Training view");
  cmd->add_flag("--about", options->about, "open Help > About: the version and the libraries, with their licences");
  cmd->add_option("--lang", options->lang, "en | id (Bahasa Indonesia)")->check(CLI::IsMember({"en", "id"}))->capture_default_str();
  cmd->add_option("--theme", options->theme, "light (projectors) | dark")->check(CLI::IsMember({"light", "dark"}))->capture_default_str();
  cmd->add_option("--ui-scale", options->ui_scale, "text and widget scale")->check(CLI::Range(0.5, 4.0))->capture_default_str();
  cmd->add_option("--width", options->width, "window width in pixels")->check(CLI::Range(640, 7680))->capture_default_str();
  cmd->add_option("--height", options->height, "window height in pixels")->check(CLI::Range(480, 4320))->capture_default_str();
  cmd->callback([options] {
    if (options->frames == 0 && (!options->screenshot.empty() || !options->frame_stats.empty() || options->wait_run ||
                                 !options->layout_audit.empty() ||
                                 !options->switch_spec.empty() || !options->kill_spec.empty()))
      throw InputError("--screenshot, --frame-stats, --layout-audit, --switch, --kill-now and --wait-run need --frames N "
                       "(headless rendering)");
    if (!options->switch_spec.empty()) parse_switch(options->switch_spec, *options);
    if (!options->kill_spec.empty()) parse_kill_now(options->kill_spec, *options);
    // Refused before the window opens and the run starts, like `ringlab run`'s outputs.
    check_output_paths({{options->screenshot, "--screenshot"}, {options->frame_stats, "--frame-stats"},
                        {options->state_json, "--state-json"},
                        {options->layout_audit, "--layout-audit"}});
#ifdef RINGLAB_SOURCE_DIR
    options->source_dir = RINGLAB_SOURCE_DIR;
#endif
    set_exit_code(run_gui(*options));
  });
}

}  // namespace ringlab::app
