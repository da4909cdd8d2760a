#pragma once
// A run's own files (checkpoints) live in a directory only this user can enter, made fresh for the
// run under $TMPDIR (else /tmp) and removed with everything in it at the end. A predictable name
// in a shared /tmp lets another user plant a symbolic link there and have a root worker overwrite
// whatever it points to; a name mkdtemp chose, in a directory of mode 0700, cannot be planted.
//
// A process killed by SIGKILL cannot remove its directory, but the kernel does drop its locks.
// So a directory can be *held*: it keeps a marker file, `.held`, locked (flock) for as long as
// its process lives, and making a held directory first removes every directory of the same
// family (this user's, under the same TMPDIR) whose marker nobody holds any more.
#include <filesystem>
#include <string>

namespace ringlab {

// $TMPDIR when it names a directory (std::filesystem::temp_directory_path), else /tmp.
std::filesystem::path temporary_directory();

// Removes the directories under temporary_directory() whose names start with `family`, that
// belong to this user and hold a `.held` marker nobody holds. Returns how many it removed.
// A directory without a marker (still being set up, or made unheld) is left alone.
int remove_abandoned_directories(const std::string& family);

class PrivateDirectory {
 public:
  // mkdtemp(TMPDIR/PREFIX-XXXXXX), mode 0700. `what` names it in errors ("the run's checkpoints").
  // Throws Error naming the temporary directory and the reason when it cannot be made.
  PrivateDirectory(const std::string& prefix, const std::string& what);
  // The same, held while this process lives (where its file system has flock; elsewhere it works
  // unheld, and is never swept), after removing the abandoned directories of `family` (which
  // `prefix` starts with).
  PrivateDirectory(const std::string& prefix, const std::string& what, const std::string& family);
  ~PrivateDirectory();  // remove()
  PrivateDirectory(const PrivateDirectory&) = delete;
  PrivateDirectory& operator=(const PrivateDirectory&) = delete;

  const std::string& path() const { return path_; }
  // The locked marker of a held directory ("" for one that is not held).
  std::string held_marker() const;
  // Removes the directory and everything in it (once; later calls do nothing), then lets go of
  // its marker.
  void remove();

 private:
  static std::string make(const std::string& prefix, const std::string& what);

  std::string path_;
  int held_fd_ = -1;
  bool removed_ = false;
};

}  // namespace ringlab
