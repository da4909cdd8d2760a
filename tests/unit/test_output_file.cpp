// OutputFile: an output is there whole or not at all, and a failed write is an error that names
// the file and the reason.
#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/core/abort_removal.h"
#include "engine/core/error.h"
#include "engine/core/output_file.h"

using namespace ringlab;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string name = (fs::temp_directory_path() / "ringlab-output-test-XXXXXX").string();
    REQUIRE(::mkdtemp(name.data()) != nullptr);
    path = name;
  }
  ~TempDir() { fs::remove_all(path); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

mode_t current_umask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a written file is whole, and nothing else is left beside it") {
  TempDir dir;
  const fs::path out = dir.path / "report.json";
  const std::string big(300'000, 'x');  // several of the writer's 64 KiB blocks
  write_output_file(out.string(), "--report", [&](std::ostream& s) { s << "{\"a\": \"" << big << "\"}\n"; });
  CHECK(read(out) == "{\"a\": \"" + big + "\"}\n");
  CHECK(dir.names() == std::vector<std::string>{"report.json"});
  CHECK(mode_of(out) == (0666 & ~current_umask()));
}

TEST_CASE("a write that fails half-way leaves the old file as it was and no temporary file") {
  TempDir dir;
  const fs::path out = dir.path / "metrics.csv";
  write_text(out, "the old file\n");
  const std::string e = error_of([&] {
    write_output_file(out.string(), "--metrics", [](std::ostream& s) {
      s << std::string(200'000, 'y');
      throw Error("the run's history is gone");
    });
  });
  CHECK(e == "the run's history is gone");
  CHECK(read(out) == "the old file\n");
  CHECK(dir.names() == std::vector<std::string>{"metrics.csv"});

  // Not committed: dropped without a word, the old file untouched.
  {
    OutputFile abandoned(out.string(), "--metrics");
    abandoned.stream() << "never committed";
  }
  CHECK(read(out) == "the old file\n");
  CHECK(dir.names() == std::vector<std::string>{"metrics.csv"});
}

TEST_CASE("a replaced file keeps its permissions; a checkpoint's are exactly 0600") {
  TempDir dir;
  const fs::path out = dir.path / "trace.json";
  write_text(out, "old");
  REQUIRE(::chmod(out.c_str(), 0640) == 0);
  write_output_file(out.string(), "--trace", [](std::ostream& s) { s << "new"; });
  CHECK(read(out) == "new");
  CHECK(mode_of(out) == 0640);

  const fs::path ckpt = dir.path / "run.ckpt";
  write_output_file(ckpt.string(), "checkpoint", [](std::ostream& s) { s << "state"; }, 0600);
  CHECK(mode_of(ckpt) == 0600);
}

TEST_CASE("a symbolic link is written through: the file it points to is replaced, the link stays") {
  TempDir dir;
  const fs::path real = dir.path / "real.json", link = dir.path / "link.json";
  write_text(real, "old");
  fs::create_symlink(real, link);
  write_output_file(link.string(), "--report", [](std::ostream& s) { s << "new"; });
  CHECK(fs::is_symlink(link));
  CHECK(read(real) == "new");
  CHECK(dir.names() == std::vector<std::string>{"link.json", "real.json"});
}

TEST_CASE("a character device is written directly: /dev/null takes it, /dev/full fails with ENOSPC") {
  CHECK_NOTHROW(write_output_file("/dev/null", "--report", [](std::ostream& s) { s << "gone"; }));
  const std::string e = error_of([] {
    write_output_file("/dev/full", "--report", [](std::ostream& s) { s << std::string(100'000, 'z'); });
  });
  CHECK(e == "--report: cannot write '/dev/full' (No space left on device)");
  // Even a few bytes, which sit in the buffer until the commit's flush.
  CHECK(error_of([] { write_output_file("/dev/full", "--json", [](std::ostream& s) { s << "{}"; }); }) ==
        "--json: cannot write '/dev/full' (No space left on device)");
}

TEST_CASE("paths that cannot be written are named with the reason") {
  TempDir dir;
  CHECK(error_of([&] { OutputFile f((dir.path / "no/such/dir/r.json").string(), "--report"); }) ==
        "--report: cannot write '" + (dir.path / "no/such/dir/r.json").string() + "' (No such file or directory)");
  CHECK(error_of([&] { OutputFile f(dir.path.string(), "--trace"); }) ==
        "--trace: cannot write '" + dir.path.string() + "' (Is a directory)");
  // A FIFO nobody reads: refused at once instead of waiting for a reader.
  const fs::path fifo = dir.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(error_of([&] { OutputFile f(fifo.string(), "--metrics"); }) ==
        "--metrics: cannot write '" + fifo.string() + "' (No such device or address)");
}

TEST_CASE("past the file size limit the write fails with EFBIG, naming the file") {
  TempDir dir;
  const fs::path out = dir.path / "big.json";
  // In a child: the limit and the ignored SIGXFSZ (as ringlab's main sets it) are per process.
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{40 * 1024, 40 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const std::string e = error_of([&] {
      write_output_file(out.string(), "--report", [](std::ostream& s) { s << std::string(100'000, 'b'); });
    });
    ::_exit(e == "--report: cannot write '" + out.string() + "' (File too large)" ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(dir.names().empty());
}

TEST_CASE("check_output_path refuses what cannot be written and creates nothing") {
  TempDir dir;
  CHECK_NOTHROW(check_output_path((dir.path / "new.json").string(), "--report"));
  CHECK(dir.names().empty());
  CHECK_NOTHROW(check_output_path("/dev/null", "--report"));
  CHECK_THROWS_WITH_AS(check_output_path("/nonexistent-ringlab-dir/r.json", "--report"),
                       "--report: cannot write '/nonexistent-ringlab-dir/r.json' (No such file or directory)",
                       InputError);
}

TEST_CASE("two outputs naming one file are refused; /dev/null may take several") {
  TempDir dir;
  const std::string a = (dir.path / "a.out").string(), b = (dir.path / "b.out").string();
  CHECK_NOTHROW(require_distinct_outputs({{a, "--report"}, {b, "--trace"}, {"", "--metrics"}}));
  const std::string same = "--report '" + a + "' and --metrics '" + a + "' are the same file";
  CHECK_THROWS_WITH_AS(require_distinct_outputs({{a, "--report"}, {b, "--trace"}, {a, "--metrics"}}),
                       doctest::Contains(same.c_str()),
                       InputError);
  // The same file by another spelling, or by another name (a hard link).
  const std::string dotted = (dir.path / "." / "a.out").string();
  CHECK_THROWS_AS(require_distinct_outputs({{a, "--report"}, {dotted, "--trace"}}), InputError);
  write_text(a, "x");
  fs::create_hard_link(a, b);
  CHECK_THROWS_AS(require_distinct_outputs({{a, "--report"}, {b, "--trace"}}), InputError);
  CHECK_NOTHROW(require_distinct_outputs({{"/dev/null", "--report"}, {"/dev/null", "--trace"}}));
  // Or through a symbolic link whose target does not exist yet: writing it would create the target.
  const std::string target = (dir.path / "new.json").string(), link = (dir.path / "link.json").string();
  fs::create_symlink("new.json", link);
  CHECK_THROWS_AS(require_distinct_outputs({{target, "--report"}, {link, "--metrics"}}), InputError);
  CHECK_NOTHROW(require_distinct_outputs({{target, "--report"}, {b, "--metrics"}}));
}

// A second Ctrl-C ends the process from its signal handler: an output half-written at that moment
// is removed with the run's own files (abort_removal), where it stayed beside its target as
// report.json.tmp.XXXXXX. Done in a child, which ends as the handler ends it.
TEST_CASE("a process ended at once removes the temporary file of an output being written, not a written one") {
  TempDir dir;
  const fs::path written = dir.path / "report.json", half = dir.path / "trace.json", old = dir.path / "metrics.csv";
  const fs::path own = dir.path / "run-folder";
  write_text(old, "an earlier run's\n");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    write_output_file(written.string(), "--report", [](std::ostream& s) { s << "{}\n"; });
    fs::create_directory(own);
    write_text(own / "run.ckpt", "state");
    abort_removal::add((own / "run.ckpt").string());
    abort_removal::add(own.string());
    OutputFile trace(half.string(), "--trace");
    trace.stream() << "[{\"half\": ";
    trace.stream().flush();
    OutputFile metrics(old.string(), "--metrics");
    metrics.stream() << "step,";
    abort_removal::remove_all();  // what the handler does before the signal ends the process
    ::_exit(0);                   // no destructor runs
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(dir.names() == std::vector<std::string>{"metrics.csv", "report.json"});
  CHECK(read(written) == "{}\n");
  CHECK(read(old) == "an earlier run's\n");
}

TEST_CASE("a committed output is taken out of the table: an abort after it leaves the file") {
  TempDir dir;
  const fs::path out = dir.path / "report.json";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    for (int i = 0; i < 200; ++i)  // more outputs than the table holds at once
      write_output_file(out.string(), "--report", [&](std::ostream& s) { s << i << "\n"; });
    abort_removal::remove_all();
    ::_exit(0);
  }
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  CHECK(read(out) == "199\n");
  CHECK(dir.names() == std::vector<std::string>{"report.json"});
}
