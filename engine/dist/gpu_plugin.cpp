#include "engine/dist/gpu_plugin.h"

#include <dlfcn.h>
#include <fmt/core.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <mutex>

namespace ringlab {
namespace {

std::string executable_dir() {
  char path[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  std::string p(path, static_cast<size_t>(n));
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

struct Loaded {
  void* handle = nullptr;
  std::string why;
};

// Without the NVIDIA driver's library there is no GPU to use: say so without loading the
// plugin and the hundreds of megabytes of CUDA libraries behind it (the app lists backends).
// The library stays loaded when found: the CUDA runtime opens it again a moment later.
// RINGLAB_SKIP_DRIVER_PROBE=1 loads the plugin anyway (to check that it loads, on a machine
// without a GPU; its own answer is then "no CUDA device (no NVIDIA driver is installed)").
bool nvidia_driver_present() {
  if (const char* skip = std::getenv("RINGLAB_SKIP_DRIVER_PROBE"); skip && std::string(skip) == "1") return true;
  return ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) != nullptr;
}

Loaded load() {
#ifndef RINGLAB_CUDA_PLUGIN
  return {nullptr, "built without CUDA"};
#else
  if (!nvidia_driver_present()) return {nullptr, "no CUDA device (no NVIDIA driver is installed: libcuda.so.1 not found)"};
  // Beside the executable (the build tree and an install alike), else the loader's search path.
  const std::string beside = executable_dir() + "/libringlab_cuda.so";
  void* handle = ::dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) handle = ::dlopen("libringlab_cuda.so", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = ::dlerror();
    return {nullptr, std::string("the GPU plugin cannot be loaded: ") + (err ? err : "unknown error")};
  }
  return {handle, ""};
#endif
}

}  // namespace

const void* gpu_plugin_entry(const char* name, std::string* why) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.handle) {
    if (why) *why = loaded.why;
    return nullptr;
  }
  using Entry = const void* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(loaded.handle, name));
  const void* api = entry ? entry() : nullptr;
  if (why) *why = entry ? "" : fmt::format("the GPU plugin has no entry point {}", name);
  return api;
}

}  // namespace ringlab
