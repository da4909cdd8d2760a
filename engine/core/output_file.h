#pragma once
// Every file ringlab writes for the user (reports, traces, CSVs, screenshots, checkpoints) goes
// through OutputFile, so that a file is there whole or not at all: a full disk, a file size limit
// or a quota can fail a write, and a report cut off at the 65,536th byte reads as a bad run, not
// as a failed write.
//
// A regular file is written into a temporary file beside it (`PATH.tmp.XXXXXX`, created with
// O_EXCL | O_NOFOLLOW, so a planted symbolic link is never followed), then flushed, fsync'ed,
// closed and renamed over PATH, every step checked; whatever fails, the temporary file is removed
// and PATH is left as it was. A character device (/dev/null, /dev/full, a terminal) or a pipe
// cannot be renamed over: it is written directly, and a failed write is still an error.
#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace ringlab {

class OutputFile {
 public:
  // Opens the temporary file (or the device). `what` names the output in errors ("--report").
  // `mode`: the new file's permissions exactly (0600 for checkpoints); unset: those of the file
  // it replaces, else 0666 less the umask, as for any new file. Throws Error naming `what`, the
  // path and the reason (errno's text) when it cannot be opened.
  OutputFile(std::string path, std::string what, std::optional<mode_t> mode = std::nullopt);
  ~OutputFile();  // without commit(): the temporary file is removed, PATH is untouched
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream();
  // Flushes, syncs, closes and renames into place. Throws Error naming the path and the first
  // failure (ENOSPC, EFBIG, EDQUOT, EIO ...); the temporary file is then removed.
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What to do with a file the user asked for that does not fit (a full disk, a quota): keep it
// elsewhere (`Keep`), or not, for the run's own files (checkpoints), which nobody would look for.
enum class WhenFull { Keep, Fail };

// write(stream) into an OutputFile at `path`, then commit(). With WhenFull::Keep, a regular file
// refused with ENOSPC or EDQUOT is written again, whole, into a new folder (mkdtemp,
// `ringlab-kept-XXXXXX`) of TMPDIR (else /tmp), then HOME, skipping any on the full file system,
// and the Error says where it went.
void write_output_file(const std::string& path, const std::string& what,
                       const std::function<void(std::ostream&)>& write, std::optional<mode_t> mode = std::nullopt,
                       WhenFull when_full = WhenFull::Keep);

// Before a long job: throws InputError ("--trace: cannot write '/proc/x' (No such file or
// directory)") when `path` could not be written by an OutputFile, which is opened and dropped to
// find out. Nothing is created or changed.
void check_output_path(const std::string& path, const std::string& what);

// Outputs as (path, what) pairs; empty paths are skipped. Throws InputError when two name the
// same file (the same path once resolved, or the same inode), which would leave only the one
// written last. Character devices (/dev/null) may be named by several.
void require_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);
// Both: what a command checks before it starts the job whose outputs these are.
void check_output_paths(const std::vector<std::pair<std::string, std::string>>& outputs);

}  // namespace ringlab
