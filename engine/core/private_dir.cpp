#include "engine/core/private_dir.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/core.h>

#include "engine/core/error.h"

namespace ringlab {

namespace {

constexpr const char* kHeldMarker = ".held";

// The marker appears under its name already locked: it is made under another name, locked, then
// renamed. A sweep therefore never takes a directory that is still being set up for abandoned.
// -1 where it cannot be held (a file system without flock): the directory then works unheld, and
// no sweep ever takes it.
int hold(const std::string& dir) {
  std::string making = dir + "/.holding-XXXXXX";
  const int fd = ::mkostemp(making.data(), O_CLOEXEC);  // not inherited by the workers
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || ::rename(making.c_str(), (dir + "/" + kHeldMarker).c_str()) != 0) {
    ::unlink(making.c_str());
    ::close(fd);
    return -1;
  }
  return fd;
}

// Removes `dir` if it is this user's and its marker is free, holding the marker meanwhile, so
// that two processes sweeping at once do not both decide for the same directory.
bool remove_if_abandoned(const std::filesystem::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) return false;
  const int fd = ::open((dir / kHeldMarker).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  const bool abandoned = ::flock(fd, LOCK_EX | LOCK_NB) == 0;  // EWOULDBLOCK: its process lives
  std::error_code ec;
  if (abandoned) std::filesystem::remove_all(dir, ec);
  ::close(fd);
  return abandoned && !ec;
}

}  // namespace

std::filesystem::path temporary_directory() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  return ec ? std::filesystem::path("/tmp") : dir;
}

int remove_abandoned_directories(const std::string& family) {
  std::vector<std::filesystem::path> candidates;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(temporary_directory(), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind(family, 0) == 0) candidates.push_back(it->path());
  int removed = 0;
  for (const std::filesystem::path& dir : candidates) removed += remove_if_abandoned(dir) ? 1 : 0;
  return removed;
}

std::string PrivateDirectory::make(const std::string& prefix, const std::string& what) {
  const std::filesystem::path dir = temporary_directory();
  std::string name = (dir / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(name.data()))  // mode 0700, a name nobody could guess
    throw Error(fmt::format("{}: cannot create a private directory in {} ({}); set TMPDIR to a writable directory",
                            what, dir.string(), std::strerror(errno)));
  return name;
}

PrivateDirectory::PrivateDirectory(const std::string& prefix, const std::string& what) : path_(make(prefix, what)) {}

PrivateDirectory::PrivateDirectory(const std::string& prefix, const std::string& what, const std::string& family) {
  remove_abandoned_directories(family);
  path_ = make(prefix, what);
  held_fd_ = hold(path_);
}

PrivateDirectory::~PrivateDirectory() { remove(); }

std::string PrivateDirectory::held_marker() const { return held_fd_ < 0 ? "" : path_ + "/" + kHeldMarker; }

void PrivateDirectory::remove() {
  if (removed_) return;
  removed_ = true;
  std::error_code ec;  // what cannot be removed stays behind; nothing to do about it at the end of a run
  std::filesystem::remove_all(path_, ec);
  if (held_fd_ >= 0) ::close(held_fd_);
  held_fd_ = -1;
}

}  // namespace ringlab
