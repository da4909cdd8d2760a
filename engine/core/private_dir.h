#pragma once
// A run's own files (checkpoints) live in a directory only this user can enter, made fresh for the
// run under $TMPDIR (else /tmp) and removed with everything in it at the end. A predictable name
// in a shared /tmp lets another user plant a symbolic link there and have a root worker overwrite
// whatever it points to; a name mkdtemp chose, in a directory of mode 0700, cannot be planted.
#include <filesystem>
#include <string>

namespace ringlab {

// $TMPDIR when it names a directory (std::filesystem::temp_directory_path), else /tmp.
std::filesystem::path temporary_directory();

class PrivateDirectory {
 public:
  // mkdtemp(TMPDIR/PREFIX-XXXXXX), mode 0700. `what` names it in errors ("the run's checkpoints").
  // Throws Error naming the temporary directory and the reason when it cannot be made.
  PrivateDirectory(const std::string& prefix, const std::string& what);
  ~PrivateDirectory();  // remove()
  PrivateDirectory(const PrivateDirectory&) = delete;
  PrivateDirectory& operator=(const PrivateDirectory&) = delete;

  const std::string& path() const { return path_; }
  // Removes the directory and everything in it (once; later calls do nothing).
  void remove();

 private:
  std::string path_;
  bool removed_ = false;
};

}  // namespace ringlab
