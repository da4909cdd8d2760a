#include "engine/core/private_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include <fmt/core.h>

#include "engine/core/error.h"

namespace ringlab {

std::filesystem::path temporary_directory() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  return ec ? std::filesystem::path("/tmp") : dir;
}

PrivateDirectory::PrivateDirectory(const std::string& prefix, const std::string& what) {
  const std::filesystem::path dir = temporary_directory();
  std::string name = (dir / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(name.data()))  // mode 0700, a name nobody could guess
    throw Error(fmt::format("{}: cannot create a private directory in {} ({}); set TMPDIR to a writable directory",
                            what, dir.string(), std::strerror(errno)));
  path_ = std::move(name);
}

PrivateDirectory::~PrivateDirectory() { remove(); }

void PrivateDirectory::remove() {
  if (removed_) return;
  removed_ = true;
  std::error_code ec;  // what cannot be removed stays behind; nothing to do about it at the end of a run
  std::filesystem::remove_all(path_, ec);
}

}  // namespace ringlab
