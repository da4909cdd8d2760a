// The floor under "the app's window slows the workers": a window that draws nothing. It opens as
// the app's does (maximized, the same OpenGL core context, the same display), and every frame only
// clears itself and swaps, at the app's frame cap (60 a second, waiting for input in between).
// Whatever a run loses beside it is what any window costs on this display, before the app draws
// a single view: on a machine without a GPU, Mesa fills and copies every frame on the CPU.
//
//   blank_window                 until the window is closed, SIGTERM or SIGINT
//
// bench/app_window.sh measures the seed's job beside it and beside the app.
#include <glad/gl.h>  // before GLFW: glad's header is the GL API here
#include <GLFW/glfw3.h>

#include <chrono>
#include <csignal>
#include <cstdio>

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

constexpr double kMaxFramesPerSecond = 60.0;  // the app's cap (app/gui_main.cpp)

}  // namespace

int main() {
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  if (!glfwInit()) {
    std::fprintf(stderr, "blank_window: no display (set DISPLAY, e.g. to an Xvfb server)\n");
    return 2;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, RINGLAB_GL_MAJOR);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, RINGLAB_GL_MINOR);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_MAXIMIZED, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(1280, 720, "blank window", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "blank_window: the display offers no OpenGL %d.%d core context\n", RINGLAB_GL_MAJOR,
                 RINGLAB_GL_MINOR);
    glfwTerminate();
    return 2;
  }
  glfwMakeContextCurrent(window);
  if (!gladLoadGL(glfwGetProcAddress)) {
    std::fprintf(stderr, "blank_window: cannot load OpenGL\n");
    glfwTerminate();
    return 2;
  }
  glfwSwapInterval(1);
  using Clock = std::chrono::steady_clock;
  while (!glfwWindowShouldClose(window) && !g_stop) {
    const Clock::time_point began = Clock::now();
    glfwPollEvents();
    int width = 0, height = 0;
    glfwGetFramebufferSize(window, &width, &height);
    glViewport(0, 0, width, height);
    glClearColor(0.1f, 0.1f, 0.12f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    glfwSwapBuffers(window);
    const double left_s = 1.0 / kMaxFramesPerSecond - std::chrono::duration<double>(Clock::now() - began).count();
    if (left_s > 0) glfwWaitEventsTimeout(left_s);
  }
  glfwDestroyWindow(window);
  glfwTerminate();
  return 0;
}
