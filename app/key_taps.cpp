// Built only with the desktop app.
#ifdef RINGLAB_HAVE_GUI
#include "app/key_taps.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>

#include <set>
#include <vector>

namespace ringlab::app {
namespace {

struct HeldRelease {
  int key, scancode, mods;
};

GLFWwindow* g_window = nullptr;
std::set<int> g_pressed_since_frame;  // keys pressed since the last frame began
std::vector<HeldRelease> g_held;      // their releases, for after the next frame has begun

void on_key(GLFWwindow* window, int key, int scancode, int action, int mods) {
  if (action == GLFW_RELEASE && g_pressed_since_frame.count(key)) {
    g_held.push_back({key, scancode, mods});
    return;
  }
  if (action == GLFW_PRESS) g_pressed_since_frame.insert(key);
  ImGui_ImplGlfw_KeyCallback(window, key, scancode, action, mods);
}

}  // namespace

void keep_key_taps(GLFWwindow* window) {
  g_window = window;
  glfwSetKeyCallback(window, on_key);
}

void release_key_taps() {
  g_pressed_since_frame.clear();
  std::vector<HeldRelease> held;
  held.swap(g_held);
  for (const HeldRelease& r : held) ImGui_ImplGlfw_KeyCallback(g_window, r.key, r.scancode, GLFW_RELEASE, r.mods);
}

}  // namespace ringlab::app
#endif  // RINGLAB_HAVE_GUI
