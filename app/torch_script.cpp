#include "app/torch_script.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fmt/core.h>
#include <fmt/format.h>

#include "engine/core/error.h"

namespace ringlab::app {
namespace {

namespace fs = std::filesystem;

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string find_on_path(const std::string& program) {
  std::stringstream path(env_or_empty("PATH"));
  for (std::string dir; std::getline(path, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

std::string find_python() {
  if (std::string given = env_or_empty("RINGLAB_PYTHON"); !given.empty()) {
    // A folder passes access(X_OK) and fails at exec: refused here with the others.
    std::error_code ec;
    if (::access(given.c_str(), X_OK) != 0 || !fs::is_regular_file(given, ec))
      throw InputError(fmt::format("RINGLAB_PYTHON={}: not an executable{}", given,
                                   fs::is_directory(given, ec) ? " (a directory)" : ""));
    return given;
  }
  if (::access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  if (std::string found = find_on_path("python3"); !found.empty()) return found;
  throw InputError("--torch needs python3 (with PyTorch): none at /usr/bin/python3 or on PATH; set RINGLAB_PYTHON");
}

// Where ringlab_torch may be, most specific first.
std::vector<fs::path> package_candidates() {
  std::vector<fs::path> dirs;
  if (std::string given = env_or_empty("RINGLAB_PYTHONPATH"); !given.empty()) dirs.emplace_back(given);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back(exe.parent_path() / ".." / ".." / "python");               // build/app/ringlab
    dirs.push_back(exe.parent_path() / ".." / "share" / "ringlab" / "python");  // PREFIX/bin/ringlab
  }
#ifdef RINGLAB_SOURCE_DIR
  dirs.push_back(fs::path(RINGLAB_SOURCE_DIR) / "python");
#endif
  return dirs;
}

std::string find_package() {
  std::vector<std::string> looked;
  for (const fs::path& dir : package_candidates()) {
    std::error_code ec;
    if (fs::is_regular_file(dir / "ringlab_torch" / "__init__.py", ec)) return fs::weakly_canonical(dir, ec).string();
    looked.push_back(dir.string());
  }
  throw InputError(fmt::format("--torch: the ringlab_torch package is not in {} (set RINGLAB_PYTHONPATH to the "
                               "folder that holds it)", fmt::join(looked, ", ")));
}

}  // namespace

std::string torch_option_problem(const std::string& script) {
  return script.empty() ? "needs a script's path; it was given an empty one" : "";
}

TorchScript resolve_torch_script(const std::string& script, const std::vector<std::string>& args) {
  std::error_code ec;
  const fs::file_status status = fs::status(script, ec);
  if (!fs::exists(status) && fs::path(script).is_absolute()) throw InputError(fmt::format("--torch {}: no such script", script));
  if (!fs::exists(status))
    throw InputError(fmt::format("--torch {}: no such script (a relative path is taken from {})", script,
                                 fs::current_path(ec).string()));
  if (!fs::is_regular_file(status)) throw InputError(fmt::format("--torch {}: not a regular file", script));
  if (::access(script.c_str(), R_OK) != 0) throw InputError(fmt::format("--torch {}: cannot be read", script));
  TorchScript t;
  t.python = find_python();
  t.argv = {fs::absolute(script, ec).string()};
  t.argv.insert(t.argv.end(), args.begin(), args.end());
  t.python_path = find_package();
  return t;
}

}  // namespace ringlab::app
