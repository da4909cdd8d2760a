// Keyboard: Space play/pause, Right/Left (and a presenter's clicker: PageDown/PageUp) step,
// F5 Start, Shift+F5 Stop, Ctrl+R Reset, Ctrl+Q quit, F11 full screen, Ctrl+= / Ctrl+- text size.
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <vector>

#include "viz/views.h"

namespace ringlab::viz {
namespace {

struct KeyPress {
  int key = 0;
  int mods = 0;
  bool repeat = false;
};

// Presses since the last frame, in order. Dear ImGui 1.86 only sees whether a key is down when a
// frame begins, so a tap shorter than a frame (a presenter's clicker, xdotool, a slow software
// renderer) would be lost; the window's key callback queues every press here instead.
std::vector<KeyPress>& pending() {
  static std::vector<KeyPress> presses;
  return presses;
}

void apply(const KeyPress& press, const view_model::RunModel& model, AppState& state) {
  const bool ctrl = press.mods & GLFW_MOD_CONTROL, shift = press.mods & GLFW_MOD_SHIFT;
  // A question on screen (Reset? Quit? Start with this much memory?) is answered first: F5 behind
  // Reset's started a new run that the open question then applied to. Ctrl+Q and Ctrl+R still
  // ask theirs in its place, Escape answers it (start_confirmation.cpp).
  if (QuestionOpen(state) && !ctrl) return;
  switch (press.key) {
    case GLFW_KEY_RIGHT:
    case GLFW_KEY_PAGE_DOWN: StepForward(model, state); return;
    case GLFW_KEY_LEFT:
    case GLFW_KEY_PAGE_UP: StepBack(model, state); return;
    default: break;
  }
  if (press.repeat) return;  // holding the others down does not repeat them
  switch (press.key) {
    case GLFW_KEY_SPACE: TogglePlay(state); break;
    case GLFW_KEY_F5:
      if (shift) state.requests.stop = true;
      else RequestStart(state);
      break;
    case GLFW_KEY_F11: state.requests.toggle_fullscreen = true; break;
    case GLFW_KEY_R:
      if (ctrl) RequestReset(state);
      break;
    case GLFW_KEY_Q:
      if (ctrl) RequestQuit(state);
      break;
    case GLFW_KEY_EQUAL:
    case GLFW_KEY_KP_ADD: state.requests.zoom_steps += ctrl ? 1 : 0; break;
    case GLFW_KEY_MINUS:
    case GLFW_KEY_KP_SUBTRACT: state.requests.zoom_steps -= ctrl ? 1 : 0; break;
    default: break;
  }
}

// While a field takes typing, the keys that type (Space, arrows, letters) go to it; chords with
// Ctrl and the function keys still act (Ctrl+Q quits from inside a field).
bool acts_while_typing(const KeyPress& press) {
  return (press.mods & GLFW_MOD_CONTROL) || (press.key >= GLFW_KEY_F1 && press.key <= GLFW_KEY_F25);
}

}  // namespace

void QueueKeyPress(int key, int mods, bool repeat) { pending().push_back({key, mods, repeat}); }

void HandleShortcuts(const view_model::RunModel& model, AppState& state) {
  std::vector<KeyPress> presses;
  presses.swap(pending());
  const bool typing = ImGui::GetIO().WantTextInput;
  // Escape closes menus and windows (layout.cpp, about_view.cpp); in a field it is the field's.
  state.escape_pressed = false;
  for (const KeyPress& press : presses) state.escape_pressed |= press.key == GLFW_KEY_ESCAPE && !typing;
  for (const KeyPress& press : presses)
    if (!typing || acts_while_typing(press)) apply(press, model, state);
}

}  // namespace ringlab::viz
