#include "engine/core/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <streambuf>
#include <utility>

#include <fmt/core.h>

#include "engine/core/abort_removal.h"
#include "engine/core/error.h"

namespace ringlab {
namespace {

// A failed write, with its errno kept: a full disk is answered differently (write_output_file).
class WriteFailed : public Error {
 public:
  WriteFailed(const std::string& what, const std::string& path, int err)
      : Error(fmt::format("{}: cannot write '{}' ({})", what, path, std::strerror(err))), err_(err) {}
  int err() const { return err_; }

 private:
  int err_;
};

WriteFailed write_error(const std::string& what, const std::string& path, int err) { return WriteFailed(what, path, err); }

// A stream buffer over a file descriptor that keeps the first failed write's errno: an
// std::ofstream only sets failbit, and by the time anyone looks errno says something else.
class FdBuffer : public std::streambuf {
 public:
  explicit FdBuffer(int fd) : fd_(fd), buffer_(64 * 1024) { reset(); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  void reset() { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  bool drain() {
    for (const char* p = pbase(); p < pptr() && error_ == 0;) {
      const ssize_t n = ::write(fd_, p, static_cast<size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) error_ = errno;
      else if (n == 0) error_ = EIO;  // a write that takes nothing would loop for ever
      else p += n;
    }
    reset();  // after a failure the rest is dropped: the file is lost anyway
    return error_ == 0;
  }

  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

enum class TargetKind { NewFile, ExistingFile, Device, Pipe };

struct Target {
  TargetKind kind = TargetKind::NewFile;
  std::string path;  // where the file is renamed to: a symbolic link's target, resolved
  mode_t mode = 0;   // an existing file's permissions
};

// What `path` names now. A symbolic link to a file is written through (the file it points to is
// replaced, the link stays); a directory, a socket or a block device is refused.
Target resolve_target(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) throw write_error(what, path, errno);
    return {TargetKind::NewFile, path, 0};
  }
  if (S_ISDIR(st.st_mode)) throw write_error(what, path, EISDIR);
  if (S_ISCHR(st.st_mode)) return {TargetKind::Device, path, 0};
  if (S_ISFIFO(st.st_mode)) return {TargetKind::Pipe, path, 0};
  if (!S_ISREG(st.st_mode))
    throw Error(fmt::format("{}: cannot write '{}' (not a regular file, a character device or a pipe)", what, path));
  // Replacing a file by rename needs only the directory's permission; a read-only file is
  // refused all the same, as any program writing into it would be.
  if (::access(path.c_str(), W_OK) != 0) throw write_error(what, path, errno);
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved)) throw write_error(what, path, errno);
  return {TargetKind::ExistingFile, resolved, static_cast<mode_t>(st.st_mode & 07777)};
}

std::string random_suffix() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s(6, ' ');
  for (char& c : s) c = kAlphabet[random() % (sizeof kAlphabet - 1)];
  return s;
}

// O_EXCL: the name must be new, and a symbolic link planted at it is not followed (O_NOFOLLOW
// says so twice). Another name is tried when one is taken.
int create_temporary(const std::string& target, mode_t mode, std::string& tmp) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp = target + ".tmp." + random_suffix();
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// A device or a pipe is opened as it is. O_NONBLOCK makes the open of a FIFO nobody reads fail
// (ENXIO) instead of waiting for a reader for ever; the writes then block as usual.
int open_direct(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// After a rename, the directory holds the new name; flushing it makes the name survive a power
// cut too. The file itself is complete either way, so a failure here is not an error.
void sync_directory_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

struct OutputFile::Impl {
  std::string path, what;
  Target target;
  std::string tmp;  // "" when writing a device or a pipe directly
  int fd;
  FdBuffer buffer;
  std::ostream stream;
  bool committed = false;
  int abort_slot = -1;  // the temporary file, removed by a process ended at once (abort_removal)

  Impl(std::string p, std::string w, std::optional<mode_t> mode)
      : path(std::move(p)), what(std::move(w)), target(resolve_target(path, what)), fd(open(mode)), buffer(fd),
        stream(&buffer) {}

  ~Impl() {
    if (fd >= 0) ::close(fd);
    if (!committed && !tmp.empty()) ::unlink(tmp.c_str());
    abort_removal::drop(abort_slot);
  }

  int open(std::optional<mode_t> mode) {
    if (target.kind == TargetKind::Device || target.kind == TargetKind::Pipe) {
      const int direct = open_direct(path);
      if (direct < 0) throw write_error(what, path, errno);
      return direct;
    }
    const int created = create_temporary(target.path, mode.value_or(0666), tmp);
    if (created < 0) throw write_error(what, path, errno);
    abort_slot = abort_removal::add(tmp);
    const std::optional<mode_t> exact = mode ? mode
                                        : target.kind == TargetKind::ExistingFile ? std::optional<mode_t>(target.mode)
                                                                                 : std::nullopt;
    if (exact && ::fchmod(created, *exact) != 0) {
      const int err = errno;
      ::close(created);
      ::unlink(tmp.c_str());
      throw write_error(what, path, err);
    }
    return created;
  }

  // The first failure of the whole write, flush, sync and close, as an errno; 0: none.
  int finish() {
    stream.flush();
    int err = buffer.error();
    if (err == 0 && !stream) err = EIO;
    if (err == 0 && !tmp.empty() && ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    fd = -1;
    return err;
  }
};

OutputFile::OutputFile(std::string path, std::string what, std::optional<mode_t> mode)
    : impl_(std::make_unique<Impl>(std::move(path), std::move(what), mode)) {}

OutputFile::~OutputFile() = default;

std::ostream& OutputFile::stream() { return impl_->stream; }

void OutputFile::commit() {
  Impl& f = *impl_;
  if (f.committed) return;
  if (const int err = f.finish(); err != 0) throw write_error(f.what, f.path, err);
  // rename() replaces the target in one step: a reader sees the old file or the new one.
  if (!f.tmp.empty()) {
    if (::rename(f.tmp.c_str(), f.target.path.c_str()) != 0) throw write_error(f.what, f.path, errno);
    abort_removal::drop(std::exchange(f.abort_slot, -1));
    sync_directory_of(f.target.path);
  }
  f.committed = true;
}

namespace {

void write_whole(const std::string& path, const std::string& what, const std::function<void(std::ostream&)>& write,
                 std::optional<mode_t> mode) {
  OutputFile out(path, what, mode);
  write(out.stream());
  out.commit();
}

std::optional<dev_t> device_of(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.empty() ? "." : dir.c_str(), &st) != 0) return std::nullopt;
  return st.st_dev;
}

// A regular file that did not fit (a full disk, a quota) is written again where there may be
// room: the temporary directory, then the home directory, skipping any on the same file system.
// An hour's run then keeps its report. Returns where it went; "" when nowhere would take it.
std::string rescue(const std::string& path, const std::string& what, const std::function<void(std::ostream&)>& write,
                   std::optional<mode_t> mode) {
  namespace fs = std::filesystem;
  // The file system that was full: the folder of the file a symbolic link leads to, if one does.
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(fs::absolute(path, ec), ec);
  const std::optional<dev_t> full = device_of((ec ? fs::path(path) : target).parent_path().string());
  const char* tmpdir = std::getenv("TMPDIR");
  const char* home = std::getenv("HOME");
  for (const char* dir : {tmpdir && *tmpdir ? tmpdir : "/tmp", home}) {
    if (!dir || !*dir) continue;
    const std::optional<dev_t> here = device_of(dir);
    if (!here || here == full) continue;
    // A folder of its own (mkdtemp: new, mode 0700), so nothing planted in a shared /tmp is written through.
    std::string folder = (fs::path(dir) / "ringlab-kept-XXXXXX").string();
    if (!::mkdtemp(folder.data())) continue;
    const std::string kept = (fs::path(folder) / fs::path(path).filename()).string();
    try {
      write_whole(kept, what, write, mode);
      return kept;
    } catch (...) {  // whatever it was, the full disk's error is the one to report; no folder left
      ::rmdir(folder.c_str());
    }
  }
  return "";
}

}  // namespace

void write_output_file(const std::string& path, const std::string& what,
                       const std::function<void(std::ostream&)>& write, std::optional<mode_t> mode, WhenFull when_full) {
  try {
    write_whole(path, what, write, mode);
  } catch (const WriteFailed& e) {
    struct stat st {};
    const bool device = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
    if (when_full == WhenFull::Fail || device || (e.err() != ENOSPC && e.err() != EDQUOT)) throw;
    const std::string kept = rescue(path, what, write, mode);
    if (kept.empty()) throw;
    throw Error(fmt::format("{}; written to '{}' instead", e.what(), kept));
  }
}

void check_output_path(const std::string& path, const std::string& what) {
  try {
    // A FIFO is not opened: closing it again would end its reader's input before the output
    // is written.
    if (resolve_target(path, what).kind == TargetKind::Pipe) {
      if (::access(path.c_str(), W_OK) != 0) throw write_error(what, path, errno);
      return;
    }
    OutputFile probe(path, what);
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {
    throw InputError(e.what());
  }
}

namespace {

// Where writing `path` would land: symbolic links followed, also one whose target does not exist
// yet (writing through it creates the target), so two outputs that reach one file are caught.
std::string resolved_output_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return fs::weakly_canonical(p, ec).string();
}

}  // namespace

void require_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  struct Seen {
    std::string what, path, resolved;
    bool exists;
    struct stat st;
  };
  std::vector<Seen> seen;
  for (const auto& [path, what] : outputs) {
    if (path.empty()) continue;
    Seen s{what, path, "", false, {}};
    s.exists = ::stat(path.c_str(), &s.st) == 0;
    if (s.exists && S_ISCHR(s.st.st_mode)) continue;  // /dev/null takes any number of outputs
    s.resolved = resolved_output_path(path);
    for (const Seen& other : seen) {
      const bool same_inode = s.exists && other.exists && s.st.st_dev == other.st.st_dev && s.st.st_ino == other.st.st_ino;
      if (same_inode || s.resolved == other.resolved)
        throw InputError(fmt::format("{} '{}' and {} '{}' are the same file: each output needs its own path (only the "
                                     "one written last would be kept)", other.what, other.path, what, path));
    }
    seen.push_back(std::move(s));
  }
}

void check_output_paths(const std::vector<std::pair<std::string, std::string>>& outputs) {
  require_distinct_outputs(outputs);
  for (const auto& [path, what] : outputs)
    if (!path.empty()) check_output_path(path, what);
}

}  // namespace ringlab
