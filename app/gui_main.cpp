// The desktop app's main loop, shaped like Dear ImGui's example_glfw_opengl3: open a window,
// then poll events, take in the run's events, draw the views, render, repeat.
#ifdef RINGLAB_HAVE_GUI
#include <glad/gl.h>  // before GLFW: glad's header is the GL API here
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fmt/core.h>
#include <fmt/format.h>
#include <memory>
#include <optional>

#include "app/app_scenario.h"
#include "app/torch_script.h"
#include "app/commands.h"
#include "app/gui_capture.h"
#include "app/gui_headless.h"
#include "app/gui_options.h"
#include "app/gui_session.h"
#include "app/pane_cache.h"
#include "app/key_taps.h"
#include "app/partial_check.h"
#include "app/partial_present.h"
#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/dist/process_group.h"
#include "engine/view_model/failure_lab.h"
#include "engine/view_model/frame_pacing.h"
#include "engine/control/controller.h"
#include "engine/control/interrupt_signals.h"
#include "engine/job/scenario.h"
#include "viz/fonts.h"
#include "viz/frame_change.h"
#include "viz/i18n.h"
#include "viz/theme.h"
#include "viz/views.h"

namespace ringlab::app {
namespace {

constexpr float kBaseFontPx = 18.0f;
constexpr int kNoDisplayExit = 3;
constexpr const char* kWindowTitle = "ringlab: DDP and ring all-reduce, for real";
std::string g_glfw_error;
int g_glfw_error_code = 0;

void remember_glfw_error(int code, const char* text) {
  g_glfw_error = fmt::format("{} (GLFW error {:#x})", text, code);
  g_glfw_error_code = code;
}

void print_headless_help() {
  fmt::print(stderr,
             "ringlab: cannot open a window: {}\n"
             "There is no display here. To render the app without one, run it under a virtual display:\n"
             "  xvfb-run -a -s '-screen 0 1920x1080x24' ringlab gui --frames 300 --screenshot out.png\n"
             "To train without the app: ringlab run --world-size 4\n",
             g_glfw_error.empty() ? "no display (DISPLAY is not set)" : g_glfw_error);
}

viz::AppState initial_state(const GuiOptions& o) {
  viz::AppState state;
  if (!o.source_dir.empty()) add_scenario_search_dir(std::filesystem::path(o.source_dir) / "assets/scenarios");
  state.scenario = app::load_app_scenario(o.scenario, o.world_size > 0);  // InputError names the file, the field and the reason
  for (const std::string& name : list_scenarios()) {
    try {
      state.scenarios.push_back(app::load_app_scenario(name));
    } catch (const InputError& e) {  // a broken file is left out of the menu, with a word why
      fmt::print(stderr, "ringlab gui: scenario '{}' left out of the menu: {}\n", name, e.what());
    }
  }
  state.job = state.scenario.job;
  if (o.world_size > 0) state.job.world_size = o.world_size;
  if (!o.backend.empty()) state.job.backend = o.backend;
  state.job.validate();
  state.lab.settings = view_model::lab_from_job(state.job);  // a scenario with a fault opens the lab with it
  state.gated = state.scenario.gated || o.gated;
  if (!o.torch_script.empty()) {
    if (o.torch_script.size() >= state.torch.path.size())
      throw InputError(fmt::format("--torch: a path of at most {} characters", state.torch.path.size() - 1));
    // A script that is not there is refused now, as `ringlab run --torch` refuses it, not after a
    // window that said "Press Start: 2 processes of it will train".
    resolve_torch_script(o.torch_script, o.torch_args);
    o.torch_script.copy(state.torch.path.data(), o.torch_script.size());
    state.torch.args = o.torch_args;
    state.torch.use = !o.side_by_side;
    state.torch.side_by_side = o.side_by_side;
  } else if (o.side_by_side) {
    throw InputError("--side-by-side runs a PyTorch script beside the engine: give --torch SCRIPT");
  }
  state.language = o.lang == "id" ? viz::Language::Indonesian : viz::Language::English;
  state.theme = o.theme == "dark" ? viz::ThemeKind::Dark : viz::ThemeKind::Light;
  state.ui_scale = o.ui_scale;
  const std::string focus = o.focus.empty() ? state.scenario.view.focus : o.focus;
  state.focus = viz::FocusNamed(focus);
  state.step.speed = state.scenario.view.speed;
  state.step.mode = state.gated ? viz::RingMode::Gated : viz::RingMode::Follow;
  state.step.playing = !state.gated;
  state.step.fixed_position = o.ring_step;
  state.backends = list_backends();
  state.version = RINGLAB_VERSION;
  state.about_open = o.about;
  return state;
}

// Text grows with the window, so a projector at 1280x720 and one at 1920x1080 show the same
// layout; --ui-scale and Ctrl+= / Ctrl+- multiply on top.
float effective_scale(const viz::AppState& state, int framebuffer_height) {
  return state.ui_scale * std::clamp(framebuffer_height / 1080.0f, 0.75f, 2.0f);
}

// The largest text scale whose layout this window holds: at least 45 text heights across and 26
// down (the controls, the view buttons and one view at a time). Larger text would only be cut.
float largest_ui_scale(int framebuffer_width, int framebuffer_height) {
  const float px = std::min(framebuffer_width / 45.0f, framebuffer_height / 26.0f);
  return std::max(0.5f, px / (kBaseFontPx * std::clamp(framebuffer_height / 1080.0f, 0.75f, 2.0f)));
}

// Rebuilds the font atlas and the style when the text size changed; returns the new size. The
// text scale is first held to what the window can show (a larger one is refused, once, in words).
float restyle_if_needed(viz::AppState& state, int framebuffer_width, int framebuffer_height, float applied_px) {
  const float most = largest_ui_scale(framebuffer_width, framebuffer_height);
  state.ui_scale_max = most;
  if (state.ui_scale > most + 1e-3f) {
    fmt::print(stderr, "ringlab gui: text scale {:.2f} is larger than a {}x{} window holds: {:.2f}\n", state.ui_scale,
               framebuffer_width, framebuffer_height, most);
    state.ui_scale = most;
  }
  const float scale = effective_scale(state, framebuffer_height);
  const float px = std::round(kBaseFontPx * scale);
  if (px == applied_px) return applied_px;
  viz::load_fonts(px);
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  viz::apply_theme(state.theme, px / kBaseFontPx);
  return px;
}

// Window-level requests: full screen, text size, theme and language. Returns true when the
// style must be applied again.
bool apply_window_requests(GLFWwindow* window, viz::AppState& state) {
  viz::Requests& r = state.requests;
  if (r.quit) glfwSetWindowShouldClose(window, GLFW_TRUE);  // the loop ends and stops the workers
  if (r.toggle_fullscreen) {
    static int saved[4] = {100, 100, 1600, 900};
    if (glfwGetWindowMonitor(window)) {
      glfwSetWindowMonitor(window, nullptr, saved[0], saved[1], saved[2], saved[3], 0);
    } else if (GLFWmonitor* monitor = glfwGetPrimaryMonitor()) {
      glfwGetWindowPos(window, &saved[0], &saved[1]);
      glfwGetWindowSize(window, &saved[2], &saved[3]);
      const GLFWvidmode* mode = glfwGetVideoMode(monitor);
      glfwSetWindowMonitor(window, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
    }
  }
  if (r.zoom_steps != 0)
    state.ui_scale = std::clamp(state.ui_scale * std::pow(1.1f, static_cast<float>(r.zoom_steps)), 0.5f, std::max(state.ui_scale_max, 0.5f));
  const bool restyle = r.zoom_steps != 0 || r.style_changed;
  viz::set_language(state.language);
  r.toggle_fullscreen = false;
  r.quit = false;
  r.zoom_steps = 0;
  r.style_changed = false;
  return restyle;
}

// The window opens maximized where a window manager does that; without one (a kiosk, a bare X
// display) it opens at --width x --height, which is no use larger than the screen: its right
// part and bottom would be off it. Held to the primary monitor's work area then.
ImVec2 window_size_on_screen(int width, int height) {
  int x = 0, y = 0, w = 0, h = 0;
  if (GLFWmonitor* monitor = glfwGetPrimaryMonitor()) glfwGetMonitorWorkarea(monitor, &x, &y, &w, &h);
  if (w > 0) width = std::min(width, w);
  if (h > 0) height = std::min(height, h);
  return ImVec2(static_cast<float>(width), static_cast<float>(height));
}

// The window's title names what Start runs, as the controls' title does ("ringlab: PyTorch script:
// ddp_cpu.py"), for a taskbar or a window list with several open; set only when it changes.
void keep_window_title(GLFWwindow* window, const viz::AppState& state, std::string& shown) {
  const std::string title = state.said.title.empty() ? kWindowTitle : "ringlab: " + state.said.title;
  if (title == shown) return;
  glfwSetWindowTitle(window, title.c_str());
  shown = title;
}

// Headless runs say which rank the views highlighted, for scripts: "highlight: rank 2 killed".
void print_failure_marks(const view_model::RunModel& model) {
  const auto print = [](const char* what, const view_model::FailureDiagnosis& f) {
    for (int r : f.culprits)
      fmt::print(stderr, "ringlab gui: {}: rank {} {}\n", what, r, view_model::to_string(f.ranks[r].cause));
    std::vector<int> waiting;
    for (const auto& rank : f.ranks)
      if (rank.cause == view_model::RankCause::Waiting) waiting.push_back(rank.rank);
    if (!waiting.empty())
      fmt::print(stderr, "ringlab gui: {}: rank{} {} waiting\n", what, waiting.size() == 1 ? "" : "s", fmt::join(waiting, ","));
  };
  if (model.restarted_failure()) print("restarted after", *model.restarted_failure());
  if (model.failure().failed) print("highlight", model.failure());
}

// The app needs the OpenGL version glad was generated for. Too old a driver shows in one of two
// places: GLFW refuses to create the context (GLFW_VERSION_UNAVAILABLE), or, should a driver hand
// one over anyway, gladLoadGL answers with the older version it loaded.
Error gl_too_old(const std::string& found) {
  return Error(fmt::format("OpenGL {}.{} core is needed, but {}: update the graphics driver, or use Mesa's "
                           "software renderer (LIBGL_ALWAYS_SOFTWARE=1)",
                           RINGLAB_GL_MAJOR, RINGLAB_GL_MINOR, found));
}

// `loaded`: gladLoadGL's answer, the context's version (0: it could not read one).
void require_gl_version(int loaded) {
  if (loaded >= GLAD_MAKE_VERSION(RINGLAB_GL_MAJOR, RINGLAB_GL_MINOR)) return;
  if (loaded == 0) throw Error("cannot load OpenGL: glad could not read the version of the context GLFW created");
  const auto* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  throw gl_too_old(fmt::format("the context is OpenGL {}.{} ({})", GLAD_VERSION_MAJOR(loaded),
                               GLAD_VERSION_MINOR(loaded), renderer ? renderer : "unknown renderer"));
}

std::string gl_renderer() {
  const auto* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  return renderer ? renderer : "";
}

struct Window {
  GLFWwindow* handle = nullptr;
  ~Window() {
    if (handle) glfwDestroyWindow(handle);
    glfwTerminate();
  }
};

// Input and window events since the app started, counted by the callbacks below (all of them run
// on this thread, inside glfwPollEvents and glfwWaitEventsTimeout).
uint64_t g_window_events = 0;

void count_window_events(GLFWwindow* window) {
  glfwSetCursorPosCallback(window, [](GLFWwindow*, double, double) { ++g_window_events; });
  glfwSetMouseButtonCallback(window, [](GLFWwindow*, int, int, int) { ++g_window_events; });
  glfwSetScrollCallback(window, [](GLFWwindow*, double, double) { ++g_window_events; });
  glfwSetCharCallback(window, [](GLFWwindow*, unsigned int) { ++g_window_events; });
  glfwSetWindowFocusCallback(window, [](GLFWwindow*, int) { ++g_window_events; });
  glfwSetCursorEnterCallback(window, [](GLFWwindow*, int) { ++g_window_events; });
  glfwSetWindowSizeCallback(window, [](GLFWwindow*, int, int) { ++g_window_events; });
  glfwSetFramebufferSizeCallback(window, [](GLFWwindow*, int, int) { ++g_window_events; });
  glfwSetWindowRefreshCallback(window, [](GLFWwindow*) { ++g_window_events; });  // uncovered: redraw
}

// The window's close button (the window manager's close) asks first while a run trains, as
// Ctrl+Q does; a second close while asked quits.
viz::AppState* g_close_asks = nullptr;

void ask_before_closing(GLFWwindow* window, viz::AppState& state) {
  g_close_asks = &state;
  glfwSetWindowCloseCallback(window, [](GLFWwindow* w) {
    ++g_window_events;
    if (!g_close_asks || !g_close_asks->run.live() || g_close_asks->pending_quit) return;
    glfwSetWindowShouldClose(w, GLFW_FALSE);
    viz::RequestQuit(*g_close_asks);
  });
}

// What the next frame would be drawn for (view_model/frame_pacing.h).
view_model::FrameCause frame_cause(const RunSession& session, const viz::AppState& state, uint64_t events_at_frame) {
  const viz::StepThroughState& st = state.step;
  view_model::FrameCause cause;
  // A world stepped with - or + waits for the clicks to pause, in the controls pane, which must
  // then be drawn afresh (not shown from its last drawing) to see the pause end: drawn as input.
  cause.input = g_window_events != events_at_frame || state.world_stepped_at >= 0;
  // Held at the step-through gate, the workers wait for the class: nothing to make room for,
  // and nothing arrives but what a press of Next lets through.
  cause.workers_computing = !session.run_over() && st.mode != viz::RingMode::Gated;
  cause.new_events = session.feed().queued() > 0 || cause.workers_computing;
  cause.animating = view_model::animating(st, session.model().collectives());
  return cause;
}

// Sleeps until the pacer says the next frame is due; input wakes the wait at once. During a run
// the wait also wakes every 16 ms to look at the run's events, which do not wake it.
void wait_for_next_frame(const view_model::FramePacer& pacer, const RunSession& session, const viz::AppState& state,
                         uint64_t events_at_frame) {
  for (;;) {
    const int64_t left_ns = pacer.next_frame_ns(frame_cause(session, state, events_at_frame)) - now_ns();
    if (left_ns <= 0) return;
    const int64_t nap_ns = session.run_over() ? left_ns : std::min<int64_t>(left_ns, 16'000'000);
    glfwWaitEventsTimeout(static_cast<double>(nap_ns) / 1e9);
  }
}

// The window and its OpenGL context, hidden for headless frames; false when no display gives one.
bool open_window(Window& window, const GuiOptions& options, bool headless) {
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, RINGLAB_GL_MAJOR);  // the version glad was generated for
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, RINGLAB_GL_MINOR);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  if (headless) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  else glfwWindowHint(GLFW_MAXIMIZED, GLFW_TRUE);  // fill whatever screen or projector is there
  const ImVec2 size = headless ? ImVec2(64, 64) : window_size_on_screen(options.width, options.height);
  window.handle = glfwCreateWindow(static_cast<int>(size.x), static_cast<int>(size.y), kWindowTitle, nullptr, nullptr);
  if (!window.handle) {
    if (g_glfw_error_code == GLFW_VERSION_UNAVAILABLE)
      throw gl_too_old("this display's driver does not offer it: " + g_glfw_error);
    return false;
  }
  glfwMakeContextCurrent(window.handle);
  require_gl_version(gladLoadGL(glfwGetProcAddress));  // ringlab's own GL calls; ImGui's backend loads its own
  glfwSwapInterval(headless ? 0 : 1);
  return true;
}

void start_imgui(GLFWwindow* window, const viz::AppState& state) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  // Every key press reaches the shortcuts, however short; Dear ImGui's own callback (installed
  // next) calls this one first.
  glfwSetKeyCallback(window, [](GLFWwindow*, int key, int, int action, int mods) {
    ++g_window_events;
    if (action != GLFW_RELEASE) viz::QueueKeyPress(key, mods, action == GLFW_REPEAT);
  });
  count_window_events(window);  // before Dear ImGui's callbacks, which call these first
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  keep_key_taps(window);  // in front of Dear ImGui's key, character and mouse button callbacks
  ImGui_ImplOpenGL3_Init("#version 330 core");
  viz::set_language(state.language);
}

// The app's frames: each takes in the run's events, lays out the views, and presents what changed;
// the window's frames are paced (view_model/frame_pacing.h), the headless ones go as fast as they
// can for --frames, and then as long as --wait-run waits.
class FrameLoop {
 public:
  FrameLoop(const GuiOptions& options, RunSession& session, viz::AppState& state, GLFWwindow* window,
            OffscreenTarget* target)
      : options_(options), session_(session), state_(state), window_(window), target_(target),
        // --wait-run gives up when nothing arrives for longer than the workers' own timeout.
        patience_ns_(static_cast<int64_t>((state.job.timeout_s + 30) * 1e9)) {
    frame_change_.damage_by_squares(partial_.available());  // frames swapped whole need no squares
  }

  void run(const InterruptSignals& signals) {
    while (!glfwWindowShouldClose(window_) && !signals.received())
      if (!frame()) break;
  }
  const FrameTimes& frame_times() const { return frame_times_; }

 private:
  // One frame; false once the headless frames are done.
  bool frame() {
    const int64_t t0 = now_ns();
    const double cpu0 = process_cpu_ms();
    const view_model::FrameCause cause = frame_cause(session_, state_, window_events_drawn_);
    window_events_drawn_ = g_window_events;
    glfwPollEvents();
    session_.update();
    int fb_w = 0, fb_h = 0;
    if (target_) {
      fb_w = target_->width();
      fb_h = target_->height();
    } else {
      glfwGetFramebufferSize(window_, &fb_w, &fb_h);
    }
    font_px_ = restyle_if_needed(state_, fb_w, fb_h, font_px_);
    lay_out();
    const bool presented = present(cause, t0, fb_w, fb_h);
    maybe_switch(options_, session_, state_, switched_);
    maybe_kill(options_, session_, state_, killed_);
    session_.apply_requests();
    if (apply_window_requests(window_, state_)) font_px_ = 0;  // restyle next frame
    if (!target_) keep_window_title(window_, state_, window_title_);
    count(t0, cpu0, presented, cause);
    if (!target_) {
      wait_for_next_frame(pacer_, session_, state_, window_events_drawn_);
      return true;
    }
    return !headless_done();
  }

  void lay_out() {
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGuiIO& io = ImGui::GetIO();
    if (target_) {  // headless: the frame is the offscreen target, not the hidden window
      io.DisplaySize = ImVec2(static_cast<float>(target_->width()), static_cast<float>(target_->height()));
      io.DisplayFramebufferScale = ImVec2(1, 1);
    }
    ImGui::NewFrame();
    state_.frame_dt_s = io.DeltaTime;
    viz::HandleShortcuts(session_.model(), state_);
    viz::AdvanceStepThrough(session_.model(), state_);
    viz::DrawMainWindow(session_.model(), state_);
    ImGui::Render();
    // This frame has seen the keys tapped before it; their releases go in now, between frames:
    // within one, Dear ImGui checks that the modifiers it read at NewFrame still hold, and a
    // Ctrl or Shift let go mid-frame failed that assertion (the app aborted).
    release_key_taps();
  }

  // Renders and presents the frame where it changes what is on screen; returns whether it did.
  bool present(const view_model::FrameCause& cause, int64_t t0, int fb_w, int fb_h) {
    // While workers compute, side panes between their refreshes are shown from their last drawing
    // (not in the headless frames: their screenshots show each pane as drawn in that frame).
    ImDrawData& draw = *ImGui::GetDrawData();
    const ImVec4 background = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    if (!target_)
      state_.side_panes_reused += pane_cache_.apply(draw, state_.panes_drawn, pacer_, cause, t0, background);
    if (target_) return render_whole(fb_w, fb_h, background);
    // A window event (resize, uncovered) may have spoilt what is on screen: present that frame.
    if (cause.input) frame_change_.forget();
    const bool changed = frame_change_.changed(draw, background);
    if (!partial_.available()) return (changed || !pane_cache_.changed_rects().empty()) && render_whole(fb_w, fb_h, background);
    // Mesa's software renderer takes a new window size into its buffers when they are swapped:
    // copied out in part only, frames would go on being drawn into the old size's buffer, the
    // new layout shifted down by the height it lost under what the window showed before. The
    // frames of a new size are swapped whole, the first to resize the buffers, the second to
    // draw into them.
    if (fb_w != swapped_w_ || fb_h != swapped_h_) whole_frames_left_ = 2;
    if (whole_frames_left_ > 0) {
      --whole_frames_left_;
      swapped_w_ = fb_w, swapped_h_ = fb_h;
      frame_change_.forget();
      return render_whole(fb_w, fb_h, background);
    }
    viz::Damage damage = frame_change_.damage();
    for (const viz::ScreenRect& pane : pane_cache_.changed_rects()) damage.add(pane);
    if (damage.empty()) return false;
    render_part(damage, fb_w, fb_h, background);
    check_.compare(fb_w, fb_h, frames_, [&] { draw_whole_offscreen(fb_w, fb_h, background); });
    state_.partial_frames_checked = check_.checked();
    state_.partial_frames_differing = check_.differing();
    return true;
  }

  // For check_: the frame render_part presented, drawn whole into the bound framebuffer, its
  // commands' clip rectangles as the frame laid them out.
  void draw_whole_offscreen(int fb_w, int fb_h, ImVec4 background) {
    ImDrawData& draw = *ImGui::GetDrawData();
    viz::clip_draw_data(draw, clips_, viz::ScreenRect{draw.DisplayPos.x, draw.DisplayPos.y,
                                                      draw.DisplayPos.x + draw.DisplaySize.x,
                                                      draw.DisplayPos.y + draw.DisplaySize.y});
    draw_whole(fb_w, fb_h, background);
  }

  // The frame's every pixel into the bound framebuffer: cleared, the side panes' copies, the rest.
  void draw_whole(int fb_w, int fb_h, ImVec4 background) {
    glViewport(0, 0, fb_w, fb_h);
    glClearColor(background.x, background.y, background.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    pane_cache_.draw_panes(fb_h);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  }

  bool render_whole(int fb_w, int fb_h, ImVec4 background) {
    if (target_) target_->bind();
    draw_whole(fb_w, fb_h, background);
    if (target_) glFinish();  // software GL draws here: count it in the frame's time
    else glfwSwapBuffers(window_);
    state_.pixels_presented += static_cast<int64_t>(fb_w) * fb_h;
    return true;
  }

  // Redraws the damaged rectangles alone over the back buffer, which still holds the last frame
  // (frames are copied out of it, never swapped), and copies them to the window.
  void render_part(const viz::Damage& damage, int fb_w, int fb_h, ImVec4 background) {
    ImDrawData& draw = *ImGui::GetDrawData();
    clips_ = viz::take_clip_rects(draw);
    glViewport(0, 0, fb_w, fb_h);
    glClearColor(background.x, background.y, background.z, 1.0f);
    std::vector<PixelRect> drawn;
    for (const viz::ScreenRect& r : damage.rects())
      if (const PixelRect p = render_rect(draw, clips_, r, fb_w, fb_h); p.w > 0) drawn.push_back(p);
    // Every rectangle drawn before any is copied: copied as each was drawn, the window showed for
    // the time of the next one's drawing a frame half new, a label torn along a square's edge
    // (what a screenshot taken then keeps).
    int64_t pixels = 0;
    for (const PixelRect& p : drawn) {
      partial_.present(p.x, p.y, p.w, p.h);
      pixels += static_cast<int64_t>(p.w) * p.h;
    }
    state_.pixels_presented += pixels;
    if (pixels < static_cast<int64_t>(fb_w) * fb_h) ++state_.frames_in_part;
  }

  struct PixelRect {
    int x = 0, y = 0, w = 0, h = 0;  // framebuffer pixels, y from the bottom as GL counts
  };

  // One rectangle, drawn into the back buffer: its edges are moved out to whole framebuffer
  // pixels, so each command's clip rectangle cut down to it covers there the same pixels it
  // covers in a whole frame. Returns the pixels it covers (none where it is off the framebuffer).
  PixelRect render_rect(ImDrawData& draw, const std::vector<viz::ScreenRect>& clips, const viz::ScreenRect& r, int fb_w,
                        int fb_h) {
    const ImVec2 origin = draw.DisplayPos, scale = draw.FramebufferScale;
    const int x0 = std::max(0, static_cast<int>(std::floor((r.x0 - origin.x) * scale.x)));
    const int y0 = std::max(0, static_cast<int>(std::floor((r.y0 - origin.y) * scale.y)));
    const int x1 = std::min(fb_w, static_cast<int>(std::ceil((r.x1 - origin.x) * scale.x)));
    const int y1 = std::min(fb_h, static_cast<int>(std::ceil((r.y1 - origin.y) * scale.y)));
    if (x1 <= x0 || y1 <= y0) return {};
    viz::clip_draw_data(draw, clips,
                        viz::ScreenRect{origin.x + x0 / scale.x, origin.y + y0 / scale.y, origin.x + x1 / scale.x,
                                        origin.y + y1 / scale.y});
    glEnable(GL_SCISSOR_TEST);  // for the clear and the panes' copies; Dear ImGui scissors each command itself
    glScissor(x0, fb_h - y1, x1 - x0, y1 - y0);
    glClear(GL_COLOR_BUFFER_BIT);
    pane_cache_.draw_panes(fb_h);
    glDisable(GL_SCISSOR_TEST);
    ImGui_ImplOpenGL3_RenderDrawData(&draw);
    return {x0, fb_h - y1, x1 - x0, y1 - y0};
  }

  // What the frame cost, for --frame-stats, the pacer and --state-json.
  void count(int64_t t0, double cpu0, bool presented, const view_model::FrameCause& cause) {
    const double frame_cpu_ms = process_cpu_ms() - cpu0;
    frame_times_.add((now_ns() - t0) / 1e6, frame_cpu_ms);
    // The pacer learns what a presented frame costs; one left unpresented cost far less.
    pacer_.frame_drawn(t0, presented ? frame_cpu_ms : pacer_.frame_cpu_ms(), cause);
    if (!presented) ++frames_unchanged_;
    ++frames_;
    state_.frames_drawn = frames_;
    state_.frames_unchanged = frames_unchanged_;
    state_.largest_frame_vertices = std::max<int64_t>(state_.largest_frame_vertices, ImGui::GetDrawData()->TotalVtxCount);
    state_.window_open_s = static_cast<double>(now_ns() - window_opened_ns_) / 1e9;
  }

  // Headless: done after --frames, or with --wait-run once the run reached its goal (or sent
  // nothing for longer than its own timeout).
  bool headless_done() {
    if (frames_ < options_.frames) return false;
    if (session_.model().events_seen() != last_events_) {
      last_events_ = session_.model().events_seen();
      last_progress_ns_ = now_ns();
    }
    const bool stalled = now_ns() - last_progress_ns_ > patience_ns_ && state_.step.mode != viz::RingMode::Gated;
    const bool waiting = options_.wait_run && !reached_goal(session_, state_) && !stalled;
    // Two more frames once there: a pane that appeared this frame lays out with last frame's
    // sizes (Dear ImGui measures content a frame late), and the screenshot shows it settled.
    return !waiting && ++settled_ > 2;
  }

  const GuiOptions& options_;
  RunSession& session_;
  viz::AppState& state_;
  GLFWwindow* window_;
  OffscreenTarget* target_;
  const int64_t patience_ns_;
  int64_t last_progress_ns_ = now_ns();
  uint64_t last_events_ = 0;
  int frames_ = 0, settled_ = 0, frames_unchanged_ = 0;
  float font_px_ = 0;
  FrameTimes frame_times_;
  view_model::FramePacer pacer_;
  viz::FrameChange frame_change_;
  PaneCache pane_cache_;  // freed with the loop, while the GL context is current
  const PartialPresent partial_{window_, gl_renderer()};
  PartialCheck check_;                 // RINGLAB_CHECK_PARTIAL_FRAMES
  std::vector<viz::ScreenRect> clips_;  // the frame's own clip rectangles, while render_part cuts them
  int swapped_w_ = 0, swapped_h_ = 0;  // the framebuffer's size when a frame was last swapped whole
  int whole_frames_left_ = 0;
  const int64_t window_opened_ns_ = now_ns();
  uint64_t window_events_drawn_ = g_window_events;
  bool switched_ = false, killed_ = false;
  std::string window_title_ = kWindowTitle;
};

// What the session leaves once its frames are over: the files asked for, the failure marks and
// the run's failure for a headless run, and a signal's stop. Returns the exit code.
int finish_session(const GuiOptions& options, RunSession& session, const viz::AppState& state,
                   const OffscreenTarget* target, const FrameTimes& frame_times, const InterruptSignals& signals) {
  const bool headless = options.frames > 0;
  int exit_code = 0;
  bool written = !target || write_output("gui", options.screenshot, [&] {
    write_screenshot(options.screenshot, target->width(), target->height());
  });
  written &= write_output("gui", options.layout_audit, [&] { write_layout_audit(options.layout_audit, options, state); });
  written &= write_output("gui", options.state_json, [&] { write_state_json(options.state_json, session, state); });
  written &= write_output("gui", options.frame_stats, [&] {
    frame_times.write_json(options.frame_stats, fmt::format("{}x{}, {}, {} events", options.width, options.height,
                                                            state.job.describe(), session.model().events_seen()));
  });
  if (!written) exit_code = 1;
  if (headless) print_failure_marks(session.model());
  if (headless && state.run.phase == viz::RunPhase::Failed) {
    fmt::print(stderr, "ringlab gui: the run failed: {}\n", state.run.message);
    exit_code = 1;
  }
  if (const int sig = signals.received()) {
    // Only a run that was still going was stopped by the signal; an idle window just closes.
    const bool live = !session.run_over();
    session.stop(stop_cause_for_signal(sig));
    fmt::print(stderr, "ringlab gui: {}: {}\n", to_string(stop_cause_for_signal(sig)),
               live ? "the run was stopped" : "the window was closed");
    exit_code = InterruptSignals::exit_code(sig);
  }
  return exit_code;
}

}  // namespace

int run_gui(const GuiOptions& options) {
  viz::AppState state = initial_state(options);  // bad flags or scenario: before any window
  const bool headless = options.frames > 0;

  // Ctrl+C or SIGTERM closes the app the normal way, so every worker is stopped and reaped, and
  // the exit code says which signal it was (a second one ends the app at once).
  InterruptSignals signals("ringlab gui");
  glfwSetErrorCallback(remember_glfw_error);
  Window window;
  if (!glfwInit() || !open_window(window, options, headless)) {
    // About is something to read: with no display to show it on, it is printed.
    if (options.about && !headless) {
      fmt::print("{}", viz::AboutText(state.version));
      return 0;
    }
    print_headless_help();
    return kNoDisplayExit;
  }
  start_imgui(window.handle, state);
  if (!headless) ask_before_closing(window.handle, state);
  std::optional<OffscreenTarget> target;
  if (headless) target.emplace(options.width, options.height);
  int exit_code = 0;
  {
    RunSession session(state);
    if (headless && !options.about) session.start();  // About is read over an idle window
    FrameLoop loop(options, session, state, window.handle, target ? &*target : nullptr);
    loop.run(signals);
    // Quitting stops the workers and waits for them (seconds on a loaded machine): the window
    // goes at once, not left standing unanswering meanwhile.
    if (!headless) glfwHideWindow(window.handle);
    exit_code = finish_session(options, session, state, target ? &*target : nullptr, loop.frame_times(), signals);
  }
  target.reset();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  return exit_code;
}

}  // namespace ringlab::app
#endif  // RINGLAB_HAVE_GUI
