#pragma once
// Short key taps reach the window's widgets. Dear ImGui 1.86 reads whether a key is down when a
// frame begins: a key pressed and let go between two frames (a presenter's clicker, xdotool, a
// quick Enter in a typed field while a frame takes 50 ms on a software renderer) is never seen
// down, so Enter did not commit a value typed into a slider and Ctrl+click did not open one for
// typing. The shortcuts have their own queue (viz/shortcuts.cpp); here a release that comes
// before any frame has seen its press is held back until one has, and the keys and characters
// that come after a click in the same frame wait for the next one (the click may open the field
// they are typed into).
struct GLFWwindow;

namespace ringlab::app {

// Installs itself in front of Dear ImGui's key, character and mouse button callbacks: call after
// ImGui_ImplGlfw_InitForOpenGL.
void keep_key_taps(GLFWwindow* window);
// Call at the end of a frame (after ImGui::Render()), never inside one: the releases held back
// are let through, for the next frame to see.
void release_key_taps();

}  // namespace ringlab::app
