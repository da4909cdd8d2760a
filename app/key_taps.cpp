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

// A key event or a typed character that came after a click in the same frame.
struct Deferred {
  bool is_char;
  int key, scancode, action, mods;
  unsigned int codepoint;
};

GLFWwindow* g_window = nullptr;
std::set<int> g_pressed_since_frame;  // keys pressed since the last frame began
std::vector<HeldRelease> g_held;      // their releases, for after the next frame has begun
// Dear ImGui 1.86 has no queue of input events either: a click and the keys typed after it, read
// by one frame (a frame that took long on a busy machine, or keys typed right after a Ctrl+click
// on a slider), reached the slider before its field was open for typing, and were lost ("2" and
// Enter after Ctrl+click: the world stayed at 4). Keys and characters that come after a click
// wait for the frame after it, in their order.
bool g_clicked_since_frame = false;
std::vector<Deferred> g_deferred;
GLFWmousebuttonfun g_imgui_mouse = nullptr;  // Dear ImGui's own callbacks, which these go in front of
GLFWcharfun g_imgui_char = nullptr;

void deliver_key(GLFWwindow* window, int key, int scancode, int action, int mods) {
  if (action == GLFW_RELEASE && g_pressed_since_frame.count(key)) {
    g_held.push_back({key, scancode, mods});
    return;
  }
  if (action == GLFW_PRESS) g_pressed_since_frame.insert(key);
  ImGui_ImplGlfw_KeyCallback(window, key, scancode, action, mods);
}

void on_key(GLFWwindow* window, int key, int scancode, int action, int mods) {
  if (g_clicked_since_frame) g_deferred.push_back({false, key, scancode, action, mods, 0});
  else deliver_key(window, key, scancode, action, mods);
}

void on_char(GLFWwindow* window, unsigned int codepoint) {
  if (g_clicked_since_frame) g_deferred.push_back({true, 0, 0, 0, 0, codepoint});
  else if (g_imgui_char) g_imgui_char(window, codepoint);
}

void on_mouse_button(GLFWwindow* window, int button, int action, int mods) {
  if (g_imgui_mouse) g_imgui_mouse(window, button, action, mods);
  if (action == GLFW_PRESS) g_clicked_since_frame = true;
}

}  // namespace

void keep_key_taps(GLFWwindow* window) {
  g_window = window;
  glfwSetKeyCallback(window, on_key);
  g_imgui_mouse = glfwSetMouseButtonCallback(window, on_mouse_button);
  g_imgui_char = glfwSetCharCallback(window, on_char);
}

void release_key_taps() {
  g_pressed_since_frame.clear();
  std::vector<HeldRelease> held;
  held.swap(g_held);
  for (const HeldRelease& r : held) ImGui_ImplGlfw_KeyCallback(g_window, r.key, r.scancode, GLFW_RELEASE, r.mods);
  // What came after a click goes to the next frame, with the taps among it held as above.
  g_clicked_since_frame = false;
  std::vector<Deferred> deferred;
  deferred.swap(g_deferred);
  for (const Deferred& d : deferred) {
    if (!d.is_char) deliver_key(g_window, d.key, d.scancode, d.action, d.mods);
    else if (g_imgui_char) g_imgui_char(g_window, d.codepoint);
  }
}

}  // namespace ringlab::app
#endif  // RINGLAB_HAVE_GUI
