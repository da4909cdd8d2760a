// Built only with the desktop app. GLX's own header, not glad's: this file makes no GL call.
#ifdef RINGLAB_HAVE_GUI
#include "app/partial_present.h"

#define GLFW_INCLUDE_NONE
#define GLFW_EXPOSE_NATIVE_X11
#define GLFW_EXPOSE_NATIVE_GLX
#include <GLFW/glfw3.h>
#include <GLFW/glfw3native.h>

#include <cstdlib>

namespace ringlab::app {

bool software_renderer(const std::string& renderer) {
  for (const char* name : {"llvmpipe", "softpipe", "swrast"})
    if (renderer.find(name) != std::string::npos) return true;
  return false;
}

PartialPresent::PartialPresent(GLFWwindow* window, const std::string& renderer) {
  // RINGLAB_WHOLE_FRAMES=1 swaps whole frames as a GPU's driver does: for comparing the two.
  const char* whole = std::getenv("RINGLAB_WHOLE_FRAMES");
  if ((whole && *whole && std::string(whole) != "0") || !software_renderer(renderer)) return;
  if (!glfwExtensionSupported("GLX_MESA_copy_sub_buffer")) return;
  display_ = glfwGetX11Display();  // null where GLFW is not on X11
  drawable_ = glfwGetGLXWindow(window);
  if (!display_ || !drawable_) return;
  copy_ = reinterpret_cast<CopySubBuffer>(glfwGetProcAddress("glXCopySubBufferMESA"));
}

void PartialPresent::present(int x, int y, int width, int height) const {
  copy_(display_, drawable_, x, y, width, height);
}

}  // namespace ringlab::app
#endif  // RINGLAB_HAVE_GUI
