#include "app/commands.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "engine/core/error.h"

namespace ringlab::app {
namespace {
int g_exit_code = 0;
}
void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

int check_stdout(int code) {
  const char* why = nullptr;
  if (std::fflush(stdout) != 0) why = std::strerror(errno);
  else if (std::ferror(stdout)) why = "an earlier write failed";
  if (!why) return code;
  std::fprintf(stderr, "ringlab: cannot write to standard output (%s)\n", why);
  return code != 0 ? code : 1;
}

bool write_output(const char* command, const std::string& path, const std::function<void()>& write) {
  if (path.empty()) return true;
  try {
    write();
    return true;
  } catch (const Error& e) {
    std::fprintf(stderr, "ringlab %s: %s\n", command, e.what());
    return false;
  }
}
}  // namespace ringlab::app
